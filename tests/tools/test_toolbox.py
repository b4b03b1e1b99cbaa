"""The toolbox: a plugin tool's bug is an `Error:` result for the model; a built-in's bug is not hidden."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replio_replay.tools.base import BUILTIN, Tool, ToolContext
from replio_replay.tools.permissions import Category, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet


def _broken(ctx: Any = None, **arguments: Any) -> str:
    raise RuntimeError("a bug")


def _box(tmp_path: Path, source: str) -> Toolbox:
    tool = Tool("broken", "Fails.", Category.READ, {"type": "object"}, lambda a, c: _broken(), source=source)
    return Toolbox(ToolContext(Sandbox(tmp_path)), Permissions.for_fixture({}), ToolSet("t", (tool,)))


def test_a_plugin_tools_exception_is_told_to_the_model(tmp_path: Path) -> None:
    assert _box(tmp_path, "plugin:team").call("broken", {}) == "Error: broken failed: RuntimeError: a bug"


def test_a_builtin_tools_exception_propagates_so_the_fixture_ends_in_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="a bug"):
        _box(tmp_path, BUILTIN).call("broken", {})


def test_the_toolbox_offers_the_tool_sets_specs_and_prompt(tmp_path: Path) -> None:
    box = _box(tmp_path, "plugin:team")
    assert box.specs == ({"name": "broken", "description": "Fails.", "parameters": {"type": "object"}},)
    assert box.system_prompt == box.toolset.system_prompt
