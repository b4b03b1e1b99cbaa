"""Tools a model may call, each confined to the fixture's worktree and checked against permissions."""

from .base import Params, Tool, ToolContext, ToolFailure
from .permissions import DEFAULT_PERMISSIONS, Category, Permission, Permissions
from .registry import TOOL_NAMES, TOOLS, Toolbox, tool_schemas
from .sandbox import Sandbox, SandboxError

__all__ = [
    "Category",
    "DEFAULT_PERMISSIONS",
    "Params",
    "Permission",
    "Permissions",
    "Sandbox",
    "SandboxError",
    "TOOLS",
    "TOOL_NAMES",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "Toolbox",
    "tool_schemas",
]
