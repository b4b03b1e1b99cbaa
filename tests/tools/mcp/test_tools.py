"""A real stdio server (written with the official SDK) as tools: listing, calls, failures, process lifetime."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from replio_replay.errors import McpError
from replio_replay.tools.base import ToolContext, ToolFailure
from replio_replay.tools.mcp.config import McpServer
from replio_replay.tools.mcp.source import McpTools
from replio_replay.tools.permissions import Category
from replio_replay.tools.sandbox import Sandbox
from tests.tools.mcp.conftest import alive, pids, stdio_config, wait_until_dead

SERVER = TypeAdapter(McpServer)


def _tools(root: Path, env: dict[str, str] | None = None, **servers: dict[str, Any]) -> McpTools:
    parsed = {name: SERVER.validate_python(config) for name, config in servers.items()}
    return McpTools(parsed, dict.fromkeys(parsed, "live"), root=root, env=env or {})


def _call(mcp: McpTools, tools: list, name: str, arguments: dict[str, Any] | None = None) -> str:
    tool = next(t for t in tools if t.name == name)
    ctx = ToolContext(Sandbox(mcp.root))
    try:
        return tool.invoke(arguments or {}, ctx)
    except ToolFailure as exc:
        return f"Error: {exc}"


#: The tests that share the module's served tools (one server, started once): on one xdist worker.
SERVED = pytest.mark.xdist_group("mcp-tools-served")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpTools, list]]:
    """The test server opened once for the tests that only call it (each checks the calls it made):
    its tools, named with the prefix `t_`, in a worktree holding note.txt."""
    root = tmp_path_factory.mktemp("served")
    (root / "note.txt").write_text("remember the milk")
    mcp = _tools(root, t=stdio_config(prefix="t_"))
    try:
        yield mcp, mcp.open()
    finally:
        mcp.close()


@SERVED
def test_tools_are_offered_with_their_schemas_and_answer(served: tuple[McpTools, list]) -> None:
    mcp, tools = served
    before = len(mcp.records["t"].calls)
    echo = next(t for t in tools if t.name == "t_echo")
    assert (echo.category, echo.description, echo.source) == (Category.MCP, "Echo the text back.",
                                                              "MCP server 't'")
    assert echo.parameters["properties"]["text"]["type"] == "string"
    assert _call(mcp, tools, "t_echo", {"text": "hi"}) == "hi"
    assert _call(mcp, tools, "t_add", {"a": 2, "b": 3}) == '{\n  "sum": 5\n}'
    assert _call(mcp, tools, "t_picture") == "[image image/png, 69 bytes]"
    assert _call(mcp, tools, "t_fail", {"reason": "x"}).startswith("Error: ")
    assert _call(mcp, tools, "t_note") == "remember the milk"  # it runs in the worktree
    assert mcp.records["t"].server == {"name": "test-server", "version": "1.2.3"}
    assert [c.tool for c in mcp.records["t"].calls[before:]] == ["echo", "add", "picture", "fail", "note"]
    assert mcp.failures == []


def test_the_server_sees_only_what_the_config_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "never-for-servers-123")
    mcp = _tools(tmp_path, {"MY_TOKEN": "given-token-123"},
                 t=stdio_config(env={"TOKEN": {"from_env": "MY_TOKEN"}, "MODE": "test"}))
    try:
        tools = mcp.open()
        folder, names = _call(mcp, tools, "where").split("\n")
        assert folder == tmp_path.name
        assert {"TOKEN", "MODE"} <= set(names.split()) and "SOME_PROVIDER_API_KEY" not in names
        assert _call(mcp, tools, "token") == "given-token-123"
    finally:
        mcp.close()


def test_a_variable_that_is_not_set_is_named(tmp_path: Path) -> None:
    mcp = _tools(tmp_path, t=stdio_config(env={"TOKEN": {"from_env": "UNSET_TOKEN_VAR"}}))
    with pytest.raises(McpError, match="mcp server t: TOKEN comes from the variable UNSET_TOKEN_VAR, which is not set"):
        mcp.open()
    mcp.close()


@pytest.mark.parametrize(("config", "message"), [
    ({"command": "no-such-mcp-server-program"},
     r"mcp server t \(no-such-mcp-server-program\): its command 'no-such-mcp-server-program' does not exist"),
    (stdio_config("--exit"), "it did not start: .*its stderr ends: test-server: cannot start, no config"),
    (stdio_config("--stall", timeout=1), "it did not answer initialize within 1 s"),
])
def test_a_server_that_does_not_start_is_named_with_its_stderr(tmp_path: Path, config: dict, message: str) -> None:
    mcp = _tools(tmp_path, t=config)
    started = time.monotonic()
    with pytest.raises(McpError, match=message):
        mcp.open()
    mcp.close()
    assert time.monotonic() - started < 20


def test_a_servers_stderr_is_kept_as_a_bounded_tail_in_memory_never_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where a temp file would go
    note = tmp_path / "stderr-is"
    mcp = _tools(tmp_path, t=stdio_config("--noisy", env={"STDERR_NOTE": str(note)}))
    with pytest.raises(McpError) as failed:
        mcp.open()
    mcp.close()
    assert note.read_text().startswith("pipe:")  # the 20 MB went through memory, not the disk
    assert list(temp.iterdir()) == []
    message = str(failed.value)
    assert message.endswith("its stderr ends: ... test-server: 20 MB later, giving up") and len(message) < 1000


def test_a_call_over_the_timeout_is_an_error_and_a_failure(tmp_path: Path) -> None:
    mcp = _tools(tmp_path, t=stdio_config(timeout=4))  # starting takes ~1.4 s here, longer on a busy machine
    try:
        tools = mcp.open()
        result = _call(mcp, tools, "slow", {"seconds": 30})
        assert result.startswith("Error: mcp server t (") and "tools/call slow got no answer within 4 s" in result
        assert len(mcp.failures) == 1
    finally:
        mcp.close()


def test_a_server_that_dies_fails_every_later_call(tmp_path: Path) -> None:
    mcp = _tools(tmp_path, t=stdio_config())
    try:
        tools = mcp.open()
        crashed = _call(mcp, tools, "crash")
        later = _call(mcp, tools, "echo", {"text": "still there?"})
        assert crashed.startswith("Error: mcp server t") and "crashing on purpose" in crashed
        assert later == crashed  # the same failure, named once
        assert mcp.failures == [crashed.removeprefix("Error: ")]
    finally:
        mcp.close()


@pytest.mark.parametrize("starts", ["spawn", "daemon"])
@pytest.mark.parametrize("interrupted", [False, True])
def test_nothing_the_server_started_outlives_it(tmp_path: Path, interrupted: bool, starts: str) -> None:
    pidfile = tmp_path / "pids"
    mcp = _tools(tmp_path, t=stdio_config(env={"PIDFILE": str(pidfile)}))
    try:
        tools = mcp.open()
        child = _call(mcp, tools, starts)
        started = pids(pidfile)
        assert child in started and all(alive(p) for p in started)
    finally:
        began = time.monotonic()
        mcp.close(interrupted=interrupted)
    assert wait_until_dead(started) == []
    if interrupted:
        assert time.monotonic() - began < 2


def test_a_server_left_running_is_killed_when_replio_exits(tmp_path: Path) -> None:
    """A fixture abandoned after an interrupt never closes its server: the exit hook ends it."""
    import subprocess
    import sys

    pidfile = tmp_path / "pids"
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from pydantic import TypeAdapter\n"
        "from replio_replay.tools.mcp.config import McpServer\n"
        "from replio_replay.tools.mcp.source import McpTools\n"
        f"config = TypeAdapter(McpServer).validate_python({stdio_config('--daemon', env={'PIDFILE': str(pidfile)})!r})\n"
        f"mcp = McpTools({{'t': config}}, {{'t': 'live'}}, root=Path({str(tmp_path)!r}), env={{}})\n"
        "mcp.open()\n"
        "print('open', flush=True)\n"
        "sys.exit(0)\n"  # never closed
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path.cwd()),
                                                                                   os.environ.get("PYTHONPATH")]))})
    assert done.stdout.strip() == "open", done.stderr
    assert len(pids(pidfile)) == 2 and wait_until_dead(pids(pidfile)) == []  # the server and its daemon


@SERVED
def test_calls_from_several_threads_are_all_recorded(served: tuple[McpTools, list]) -> None:
    mcp, tools = served
    before = len(mcp.records["t"].calls)
    results: list[str] = []
    threads = [threading.Thread(target=lambda i=i: results.append(_call(mcp, tools, "t_echo", {"text": str(i)})))
               for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["0", "1", "2", "3", "4"]
    assert len(mcp.records["t"].calls) == before + 5
    assert mcp.failures == []


@pytest.mark.parametrize("after", [590, 560])  # the 600-character tail starts 9 and 39 characters into the token
def test_the_stderr_tail_starts_at_a_whole_word_never_inside_a_token(tmp_path: Path, after: int) -> None:
    token = "mcp-tok-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
    program = f"import sys; sys.stderr.write('starting with {token} ' + 'y' * {after}); sys.exit(3)"
    mcp = _tools(tmp_path, t={"command": "{python}", "args": ["-c", program]})
    with pytest.raises(McpError) as failed:
        mcp.open()
    mcp.close()
    said = str(failed.value).partition("its stderr ends: ")[2]  # (the command before it holds the token)
    assert said == "... " + "y" * after
