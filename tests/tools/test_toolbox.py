"""The toolbox: a plugin tool's bug is an `Error:` result for the model; a built-in's bug is not hidden."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from replio_replay.tools.base import BUILTIN, Tool, ToolContext
from replio_replay.tools.permissions import Category, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import RESULT_CAP, Toolbox
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


def _slow_box(tmp_path: Path, **ctx: Any) -> Toolbox:
    def nap(arguments: dict[str, Any], context: ToolContext) -> str:
        time.sleep(float(arguments.get("seconds", 5)))
        return "rested"

    tool = Tool("nap", "Sleep.", Category.READ, {"type": "object"}, nap, source="plugin:team")
    return Toolbox(ToolContext(Sandbox(tmp_path), **ctx), Permissions.for_fixture({}), ToolSet("t", (tool,)))


def test_a_call_over_its_limit_is_an_error_result_and_the_fixture_goes_on(tmp_path: Path) -> None:
    box = _slow_box(tmp_path, timeout=0.2)
    started = time.monotonic()
    assert box.call("nap", {"seconds": 30}) == "Error: nap took longer than 0.2 s"
    assert time.monotonic() - started < 5
    assert box.call("nap", {"seconds": 0}) == "rested"


def test_an_interrupt_ends_a_call_in_flight(tmp_path: Path) -> None:
    cancel = threading.Event()
    box = _slow_box(tmp_path, cancel=cancel)
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    assert box.call("nap", {"seconds": 30}) == "Error: the run was interrupted"
    assert time.monotonic() - started < 5


def test_every_result_is_capped_whatever_the_tool(tmp_path: Path) -> None:
    tool = Tool("flood", "Floods.", Category.READ, {"type": "object"}, lambda a, c: "x" * (RESULT_CAP + 10),
                source="plugin:team")
    box = Toolbox(ToolContext(Sandbox(tmp_path)), Permissions.for_fixture({}), ToolSet("t", (tool,)))
    out = box.call("flood", {})
    assert out == "x" * RESULT_CAP + f"\n(output cut at {RESULT_CAP} characters)"


def test_a_stub_is_called_in_the_fixtures_own_thread_and_other_tools_under_a_deadline(tmp_path: Path) -> None:
    """A stub waits on nothing (`Tool.waits`): handing it to a worker thread would cost more than the call."""
    from replio_replay.tools.declared import ToolDecl, declared_tool

    stub = declared_tool("lookup", ToolDecl.model_validate({"description": "Look.", "result": "found"}),
                         source="fixture", base_dir=None)
    threads: list[threading.Thread] = []

    def where(arguments: dict[str, Any], ctx: ToolContext) -> str:
        threads.append(threading.current_thread())
        return stub.invoke(arguments, ctx)

    watched = [Tool("lookup", "Look.", Category.READ, {"type": "object"}, where, waits=stub.waits),
               Tool("plugin", "Look.", Category.READ, {"type": "object"}, where, source="plugin:team")]
    box = Toolbox(ToolContext(Sandbox(tmp_path)), Permissions.for_fixture({}), ToolSet("t", tuple(watched)))
    assert box.call("lookup", {}) == "found" and box.call("plugin", {}) == "found"
    assert threads[0] is threading.current_thread() and threads[1] is not threading.current_thread()
