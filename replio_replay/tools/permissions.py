"""Permissions: which tool categories a headless run may use, and the per-fixture overrides."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

__all__ = ["Category", "DEFAULT_PERMISSIONS", "Permission", "Permissions"]


class Category(str, Enum):
    """A tool's permission category."""

    READ = "read"
    LIST = "list"
    WEB = "web"
    EDIT = "edit"
    BASH = "bash"
    MCP = "mcp"


class Permission(str, Enum):
    """What happens when a tool of a category is called."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


DEFAULT_PERMISSIONS: Mapping[Category, Permission] = {
    Category.READ: Permission.ALLOW,
    Category.LIST: Permission.ALLOW,
    Category.WEB: Permission.ALLOW,
    Category.EDIT: Permission.DENY,
    Category.BASH: Permission.DENY,
    Category.MCP: Permission.DENY,
}


@dataclass(frozen=True)
class Permissions:
    """Category permissions merged over the eval defaults, plus tools denied by name."""

    categories: Mapping[Category, Permission]
    denied_tools: frozenset[str]

    @classmethod
    def for_fixture(
        cls, overrides: Mapping[Category, Permission], tools_deny: Iterable[str] = ()
    ) -> Permissions:
        """Merge a fixture's `tool_permission` over the defaults and deny `tools_deny` by name."""
        return cls({**DEFAULT_PERMISSIONS, **overrides}, frozenset(tools_deny))

    def allows(self, tool: str, category: Category) -> bool:
        """Whether a headless run may execute `tool`: `ask` is auto-allowed."""
        if tool in self.denied_tools:
            return False
        return self.categories.get(category, Permission.DENY) is not Permission.DENY

    def to_json(self) -> dict[str, object]:
        """The settings as written to the worktree's `.replio/config.json`."""
        return {
            "tool_permission": {c.value: p.value for c, p in sorted(self.categories.items())},
            "tools_deny": sorted(self.denied_tools),
        }
