"""The tool registry and the toolbox that executes a model's calls under a fixture's permissions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .base import Tool, ToolContext, ToolFailure
from .files import FILE_TOOLS
from .permissions import Permissions
from .sandbox import SandboxError
from .search import SEARCH_TOOLS
from .shell import SHELL_TOOLS
from .web import WEB_TOOLS

__all__ = ["TOOLS", "TOOL_NAMES", "Toolbox", "tool_schemas"]

TOOLS: Mapping[str, Tool] = {t.name: t for t in (*FILE_TOOLS, *SEARCH_TOOLS, *SHELL_TOOLS, *WEB_TOOLS)}
TOOL_NAMES: frozenset[str] = frozenset(TOOLS)


def tool_schemas(tools: Mapping[str, Tool] = TOOLS) -> list[dict[str, Any]]:
    """Provider-neutral tool specs, in registry order: name, description, JSON Schema parameters."""
    return [{"name": t.name, "description": t.description, "parameters": t.schema()} for t in tools.values()]


class Toolbox:
    """Runs tool calls for one fixture. Every outcome is a string for the model; none raises."""

    def __init__(self, ctx: ToolContext, permissions: Permissions, tools: Mapping[str, Tool] = TOOLS):
        self.ctx = ctx
        self.permissions = permissions
        self.tools = tools

    def call(self, name: str, arguments: Any) -> str:
        """Execute one call; failures come back as a result starting with ``Error:``."""
        tool = self.tools.get(name)
        if tool is None:
            return f"Error: unknown tool {name!r}; available tools: {', '.join(self.tools)}"
        if not self.permissions.allows(name, tool.category):
            return f"Error: permission denied: {name} ({tool.category.value}) is not allowed in this run"
        if isinstance(arguments, str):
            return f"Error: arguments for {name} are not valid JSON: {arguments[:200]}"
        try:
            params = tool.params.model_validate(arguments)
        except ValidationError as exc:
            return f"Error: invalid arguments for {name}: {_brief(exc)}"
        try:
            return tool.run(params, self.ctx)
        except (ToolFailure, SandboxError) as exc:
            return f"Error: {exc}"
        except OSError as exc:
            return f"Error: {name} failed: {exc.strerror or type(exc).__name__}"


def _brief(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
    ) + f" (got {json.dumps(exc.errors()[0].get('input'), default=str)[:120]})"
