"""The plugin hooks of replio-replay (pluggy project name ``replio``); one function each."""

from __future__ import annotations

from typing import Any

import pluggy

__all__ = ["hookimpl", "hookspec", "register_fixtures", "register_tools"]

hookspec = pluggy.HookspecMarker("replio")
hookimpl = pluggy.HookimplMarker("replio")


@hookspec
def register_fixtures(fixtures: dict[str, Any]) -> None:
    """Add fixtures to `fixtures`, a dict of fixture id -> fixture data (a dict or a Fixture)."""


@hookspec
def register_tools(tools: dict[str, Any]) -> None:
    """Add tools to `tools`, a dict of tool name -> a `Tool` (e.g. a function decorated with `tool`)."""
