"""The runner: a worktree for each fixture that can see one, its config, cleanup on every exit, failures kept per fixture."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import replio_replay.run.runner as runner_module
from replio_replay.errors import ProviderError
from replio_replay.judge.results import Status
from replio_replay.providers.base import ChatRequest, ChatResponse, ToolCall
from replio_replay.run import worktree as worktree_module
from replio_replay.run.runner import InterruptedRun, RunOptions, run_fixture, run_suite
from replio_replay.run.worktree import TEMP_PREFIX, Removals, remove_worktree, worktree
from replio_replay.tools.base import ToolContext
from replio_replay.tools.function import tool
from tests.helpers import builtin_toolset, call, make_case, make_fixture, mock_provider, turn


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Path], list[bool]]:
    """Every worktree the runner makes, in order (the real ones, only watched), and whether each
    was made a git repository."""
    made: list[Path] = []
    repositories: list[bool] = []

    @contextmanager
    def watching(fixture: Any, settings: Mapping[str, Any], remove: Any = None, **more: Any) -> Iterator[Path]:
        with worktree(fixture, settings, remove, **more) as root:
            made.append(root)
            repositories.append((root / ".git").is_dir())
            yield root

    monkeypatch.setattr(runner_module, "worktree", watching)
    return made, repositories


@pytest.fixture
def roots(watched: tuple[list[Path], list[bool]]) -> list[Path]:
    return watched[0]


@pytest.fixture
def repositories(watched: tuple[list[Path], list[bool]]) -> list[bool]:
    return watched[1]


# the worktree itself -------------------------------------------------------------------------------


def test_worktree_provisions_files_and_config_then_removes_everything() -> None:
    fx = make_fixture(files={"src/app.py": "x = 1\n", "README.md": "hi\n"})
    with worktree(fx, {"provider": "mock", "tools_deny": []}) as root:
        assert root.name.startswith(TEMP_PREFIX)
        assert (root / "src" / "app.py").read_text() == "x = 1\n"
        assert (root / "README.md").read_text() == "hi\n"
        assert json.loads((root / ".replio" / "config.json").read_text()) == {"provider": "mock", "tools_deny": []}
    assert not root.exists()


def test_worktree_files_are_the_fixtures_text_exactly(tmp_path: Path) -> None:
    files = {"a/b/c/deep.txt": "deep\n", "a/b/side.txt": "side", "a/top.txt": "crlf\r\nkept\r\n",
             "unicode.md": "naïve café ✓ \U0001f600\n", "empty.txt": "", "big.txt": "x" * 3_000_000}
    with worktree(make_fixture(files=files), {}) as root:
        for rel, content in files.items():
            assert (root / rel).read_bytes() == content.encode("utf-8"), rel
        reference = tmp_path / "reference.txt"
        reference.write_text("what open() makes")
        assert (root / "empty.txt").stat().st_mode == reference.stat().st_mode  # the umask applies alike


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_worktree_is_removed_on_error_and_on_ctrl_c(exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        with worktree(make_fixture(files={"a.txt": "a"}), {}) as root:
            (root / "made-by-a-tool.txt").write_text("x")
            raise exc
    assert not root.exists()


def test_a_worktree_handed_to_removals_is_gone_once_they_are_waited_for() -> None:
    removals = Removals()
    made = []
    for i in range(3):
        with worktree(make_fixture(files={"d/e/f.txt": str(i)}), {}, removals) as root:
            made.append(root)
    removals.wait()
    assert not any(root.exists() for root in made)
    with worktree(make_fixture(), {}, removals) as root:  # a new thread once the last one ended
        pass
    removals.wait()
    assert not root.exists()


def test_removals_remove_the_worktrees_handed_over_together_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round of `--jobs` fixtures ends together: its worktrees go on as many threads, not one after the other."""
    together = threading.Barrier(3, timeout=5)  # broken unless three removals are in flight at once
    removed = []

    def remove(root: Path) -> None:
        together.wait()
        removed.append(threading.current_thread().name)
        remove_worktree(root)

    monkeypatch.setattr(worktree_module, "remove_worktree", remove)
    removals = Removals(3)
    roots = []
    for _ in range(6):
        with worktree(make_fixture(files={"a.txt": "a"}), {}, removals) as root:
            roots.append(root)
    removals.wait()
    assert not together.broken and len(removed) == 6 and not any(root.exists() for root in roots)


# run_fixture ---------------------------------------------------------------------------------------


def test_the_worktree_config_holds_connection_and_permissions(roots: list[Path]) -> None:
    seen: dict[str, Any] = {}

    def look(request: ChatRequest) -> ChatResponse:
        seen["config"] = json.loads((roots[-1] / ".replio" / "config.json").read_text())
        seen["files"] = sorted(str(p.relative_to(roots[-1])) for p in roots[-1].rglob("*") if p.is_file())
        return ChatResponse(text="done")

    fx = make_fixture(
        files={"pkg/mod.py": "pass\n"},
        tool_permission={"edit": "allow", "web": "deny"}, tools_deny=["grep"],
    )
    run_fixture(make_case(fx), mock_provider({"fx": [look]}), RunOptions())
    assert seen["config"] == {
        "provider": "mock",
        "model": "scripted",
        "base_url": None,
        "tool_permission": {
            "bash": "deny", "edit": "allow", "list": "allow", "mcp": "deny", "read": "allow", "web": "deny",
        },
        "tools_deny": ["grep"],
        "tools": "default",
    }
    assert seen["files"] == [".replio/config.json", "pkg/mod.py"]
    assert not roots[-1].exists()


def test_the_fixture_permissions_apply_to_the_calls(roots: list[Path]) -> None:
    fx = make_fixture(files={"a.txt": "a"}, tool_permission={"edit": "allow"}, tools_deny=["grep"],
                      verifier={"avoid": ["grep"]})
    provider = mock_provider({"fx": [turn(
        call("file_write", path="b.txt", content="new"),
        call("grep", pattern="a"),
    )]})
    result = run_fixture(make_case(fx), provider, RunOptions())
    assert result.names == ["file_write", "grep"]
    assert result.errors == 1
    assert result.reasons == ["avoid: grep was called"]
    tool_results = [m.content for m in provider.requests[-1][1].messages if m.role == "tool"]
    assert tool_results[0] == "Wrote 1 lines to b.txt."
    assert tool_results[1].startswith("Error: permission denied: grep")


def test_every_tool_is_offered_even_when_denied() -> None:
    provider = mock_provider({"fx": [turn(text="done")]})
    run_fixture(make_case(make_fixture(tools_deny=["file_write"])), provider, RunOptions())
    offered = [spec["name"] for spec in provider.requests[0][1].tools]
    assert {"file_write", "file_edit", "run_command", "web_fetch"} <= set(offered)


def test_tools_resolve_against_the_worktree_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, roots: list[Path]
) -> None:
    (tmp_path / "a.txt").write_text("WRONG: the process's directory\n")
    monkeypatch.chdir(tmp_path)
    provider = mock_provider({"fx": [turn(call("file_read", path="a.txt"))]})
    result = run_fixture(make_case(make_fixture(files={"a.txt": "right: the worktree\n"})), provider, RunOptions())
    assert result.errors == 0
    tool_result = provider.requests[-1][1].messages[-1].content
    assert tool_result == "     1  right: the worktree"
    assert os.getcwd() == str(tmp_path)


def test_the_model_never_sees_the_worktree_name(roots: list[Path]) -> None:
    provider = mock_provider({"fx": [turn(
        call("list_dir", depth=3), call("glob", pattern="**"), call("grep", pattern="."),
        call("file_read", path="src/a.py"), call("file_read", path="/abs"), call("file_read", path="../x"),
        call("file_read", path="nope"), call("run_command", command="pwd"),
    )]})
    fx = make_fixture(files={"src/a.py": "a = 1\n"}, tool_permission={"bash": "allow"})
    run_fixture(make_case(fx), provider, RunOptions())
    seen = "\n".join(m.content for _, req in provider.requests for m in req.messages)
    assert roots[0].name not in seen
    assert str(roots[0].parent) not in seen


def test_the_worktree_is_removed_after_ok_and_after_errors(roots: list[Path]) -> None:
    fixtures = {"ok": [turn(call("list_dir")), turn(text="done")],
                "provider-error": [turn(call("list_dir")), ProviderError("the server said no")],
                "harness-error": [RuntimeError("a bug")]}
    provider = mock_provider(fixtures)
    for fid in fixtures:
        result = run_fixture(make_case(make_fixture(id=fid, files={"a.txt": "a"})), provider, RunOptions())
        assert result.status is (Status.OK if fid == "ok" else Status.ERROR)
    assert len(roots) == 3
    assert not any(root.exists() for root in roots)


def test_a_provider_error_is_the_fixtures_error() -> None:
    provider = mock_provider({"fx": [turn(call("list_dir")), ProviderError("openai: HTTP 500 after 4 attempts")]})
    result = run_fixture(make_case(make_fixture(expected=["list_dir"], verifier={"must_include": ["list_dir"]})),
                         provider, RunOptions())
    assert result.status is Status.ERROR
    assert result.error == "openai: HTTP 500 after 4 attempts"
    assert result.names == ["list_dir"]
    assert result.accuracy == 0.0  # a run that failed did not do what was expected
    assert result.passed is False
    assert result.reasons == ["the run ended in error"]
    assert result.errors == 1


def test_a_harness_exception_becomes_an_internal_error_of_that_fixture() -> None:
    result = run_fixture(make_case(make_fixture()), mock_provider({"fx": [RuntimeError("unexpected")]}), RunOptions())
    assert result.status is Status.ERROR
    assert result.error == "internal error: RuntimeError: unexpected"
    assert result.errors == 1
    assert result.passed is False


def test_the_fixture_turn_limit_overrides_the_runs() -> None:
    provider = mock_provider({"*": [turn(call("list_dir", depth=i)) for i in range(1, 9)]})
    result = run_fixture(make_case(make_fixture(max_turns=2)), provider, RunOptions())
    assert result.status is Status.TRUNCATED
    assert result.calls == 2


def test_timing_only_when_asked() -> None:
    provider = mock_provider({"*": [turn(text="done")]})
    assert run_fixture(make_case(make_fixture()), provider, RunOptions()).timing is None
    timed = run_fixture(make_case(make_fixture()), provider, RunOptions(timing=True))
    assert timed.timing is not None and timed.timing["seconds"] >= 0


# run_suite -----------------------------------------------------------------------------------------


def cases(fixtures: list[Any]) -> list[Any]:
    return [make_case(f) for f in fixtures]


def test_a_harness_exception_ends_only_that_fixture(roots: list[Path]) -> None:
    fixtures = [make_fixture(id=f"fx{i}", files={"a.txt": "a"}) for i in range(4)]
    provider = mock_provider({
        "fx1": [RuntimeError("harness bug")],
        "fx2": [ProviderError("provider down")],
        "*": [turn(call("file_read", path="a.txt")), turn(text="done")],
    })
    run = run_suite(cases(fixtures), provider, builtin_toolset(), RunOptions(jobs=2))
    assert [(r.id, r.status) for r in run.fixtures] == [
        ("fx0", Status.OK), ("fx1", Status.ERROR), ("fx2", Status.ERROR), ("fx3", Status.OK),
    ]
    assert run.fixtures[1].error == "internal error: RuntimeError: harness bug"
    assert run.fixtures[2].error == "provider down"
    assert run.fixtures[3].names == ["file_read"]
    assert run.summary.errors == 2
    assert not any(root.exists() for root in roots)


def test_results_come_in_fixture_order_whatever_finishes_first() -> None:
    gate = threading.Event()

    def slow(request: ChatRequest) -> ChatResponse:
        gate.wait(5)
        return ChatResponse(text="slow")

    def fast(request: ChatRequest) -> ChatResponse:
        gate.set()
        return ChatResponse(text="fast")

    fixtures = [make_fixture(id="a-slow"), make_fixture(id="b-fast")]
    run = run_suite(cases(fixtures), mock_provider({"a-slow": [slow], "b-fast": [fast]}), builtin_toolset(),
                    RunOptions(jobs=2))
    assert [(r.id, r.answer) for r in run.fixtures] == [("a-slow", "slow"), ("b-fast", "fast")]


def test_the_run_result_carries_provider_model_and_summary() -> None:
    fixtures = [make_fixture(id="one", expected=["list_dir"]), make_fixture(id="two")]
    provider = mock_provider({"*": [turn(call("list_dir"), usage={"prompt": 5, "completion": 5})]})
    run = run_suite(cases(fixtures), provider, builtin_toolset(), RunOptions())
    assert (run.provider, run.model, run.tools) == ("mock", "scripted", "default")
    assert run.tools_hash == builtin_toolset().digest
    assert run.summary.fixtures == 2
    assert run.summary.accuracy == 1.0
    assert run.summary.calls == 2
    assert run.summary.tokens == 2 * (10 + 15)  # the mock's closing answer counts 10 + 5


def test_ctrl_c_cancels_fixtures_in_flight_and_removes_their_worktrees(
    monkeypatch: pytest.MonkeyPatch, roots: list[Path]
) -> None:
    events: list[threading.Event] = []

    class WatchedEvent(threading.Event):
        def __init__(self) -> None:
            super().__init__()
            events.append(self)

    monkeypatch.setattr(runner_module.threading, "Event", WatchedEvent)

    def wait_for_ctrl_c(request: ChatRequest) -> ChatResponse:
        assert events[0].wait(5), "the run was never cancelled"
        return ChatResponse(tool_calls=(ToolCall("late", "file_read", {"path": "f.txt"}),))

    def interrupt(result: Any) -> None:
        if result.id == "a":
            raise KeyboardInterrupt

    fixtures = [make_fixture(id=i, files={"f.txt": i}) for i in ("a", "b", "c")]
    provider = mock_provider({"a": [turn(text="done")], "b": [turn(call("list_dir")), wait_for_ctrl_c]})
    with pytest.raises(InterruptedRun) as info:
        run_suite(cases(fixtures), provider, builtin_toolset(), RunOptions(jobs=1, on_result=interrupt))
    run = info.value.run
    assert [(r.id, r.status) for r in run.fixtures] == [
        ("a", Status.OK), ("b", Status.CANCELLED), ("c", Status.CANCELLED),
    ]
    assert events[0].is_set()
    assert run.fixtures[1].names in ([], ["list_dir"])  # started or not, the late file_read never ran
    assert not any(root.exists() for root in roots)


def test_the_files_a_run_leaves_are_judged_before_the_worktree_goes(roots: list[Path]) -> None:
    fx = make_fixture(
        files={"app.toml": "port = 8080\n", "old.txt": "x"},
        tool_permission={"edit": "allow", "bash": "allow"},
        verifier={"files": {"app.toml": {"$contains": "port = 9090"}, "old.txt": {"$unchanged": True},
                            "link.txt": {"$exists": False}}},
    )
    provider = mock_provider({"fx": [
        turn(call("file_edit", path="app.toml", old_string="8080", new_string="9090"),
             call("run_command", command="ln -s /etc/hostname link.txt")),
        turn(text="done"),
    ]})
    result = run_fixture(make_case(fx), provider, RunOptions())
    assert result.passed, result.reasons  # a link leading out of the worktree reads as no file at all
    assert not roots[-1].exists()


# a worktree (and a "git" fixture's repository): made only where something can see it -----------------

STUB = {"lookup": {"description": "Look a thing up.", "parameters": {"type": "object"}, "result": "found"}}


@tool
def blind_lookup(key: str) -> str:
    """Look a key up, seeing nothing of the fixture."""
    return f"{key}: found"


@tool
def reading_lookup(key: str, ctx: ToolContext) -> str:
    """Look a key up in the fixture's files."""
    return ctx.path(key).read_text()


PYTHON_TOOLS = builtin_toolset().replace(tools=[*builtin_toolset().tools, blind_lookup, reading_lookup])


@pytest.mark.parametrize(("more", "made"), [
    ({"tools_offered": ["lookup"]}, False),  # a stub cannot see the files: no worktree for nothing
    ({"tools_offered": ["lookup", "blind_lookup"]}, False),  # nor a Python tool not taking the context
    ({"tools_offered": ["lookup", "reading_lookup"]}, True),  # one taking it can
    ({"tools_offered": ["lookup", "file_read"]}, True),
    ({"tools_offered": ["lookup", "file_read"], "single_response": True}, False),  # its calls never run
    ({"tools_offered": ["lookup"], "verifier": {"files": {"a.txt": "a"}}}, True),  # a files check reads them
    ({"tools_offered": ["lookup"], "single_response": True, "verifier": {"files": {"a.txt": "a"}}}, True),
    ({}, True),  # every built-in is offered
])
def test_a_worktree_is_made_only_where_a_tool_or_check_can_see_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, more: dict[str, Any], made: bool) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where mkdtemp makes worktrees, watched
    during: list[list[str]] = []

    def look(request: ChatRequest) -> ChatResponse:
        during.append([p.name for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)])
        return ChatResponse(text="found")

    fx = make_fixture(files={"a.txt": "a"}, tools=STUB, **more)
    result = run_fixture(make_case(fx, PYTHON_TOOLS), mock_provider({"fx": [look]}), RunOptions())
    assert result.status is Status.OK, result.error
    assert [len(names) for names in during] == [1 if made else 0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("more", "built"), [
    ({"tools_offered": ["lookup"]}, None),  # no worktree at all: no git processes for nothing
    ({"tools_offered": ["lookup", "file_read"]}, True),
    ({"tools_offered": ["lookup"], "verifier": {"files": {"a.txt": "a"}}}, True),  # a files check reads them
    ({}, True),  # every built-in is offered
])
def test_the_repository_is_built_only_where_a_tool_or_check_can_see_it(
        repositories: list[bool], more: dict[str, Any], built: bool | None) -> None:
    fx = make_fixture(files={"a.txt": "a"}, git=True, tools=STUB, **more)
    result = run_fixture(make_case(fx), mock_provider({"fx": [turn(call("lookup")), turn(text="found")]}), RunOptions())
    assert result.status is Status.OK, result.error
    assert repositories == ([] if built is None else [built])


class _Sessions:
    """Sessions meeting every MCP server as `mode` says (what a replay or a live run decides)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, case: Any, provider: Any, cancel: Any = None, watch: Any = None) -> Any:
        from replio_replay.recording.base import FixtureSession

        mode = self.mode

        class Session(FixtureSession):
            def mcp_modes(self, servers: Mapping[str, Any]) -> dict[str, Any]:
                return dict.fromkeys(servers, mode)

        return Session(provider.transport(cancel))


@pytest.mark.parametrize(("mode", "built"), [("replay", []), ("live", [True]), ("compare", [True])])
def test_an_mcp_server_started_on_the_worktree_needs_the_repository(
        repositories: list[bool], monkeypatch: pytest.MonkeyPatch, mode: str, built: list[bool]) -> None:
    from replio_replay.tools.mcp.source import McpTools

    monkeypatch.setattr(McpTools, "open", lambda self: [])  # what the servers offer is not the point here
    fx = make_fixture(files={"a.txt": "a"}, git=True, tools=STUB, tools_offered=["lookup"],
                      mcp_servers={"git": {"command": "{python}", "args": ["-m", "mcp_server_git"]}})
    result = run_fixture(make_case(fx), mock_provider({"fx": [turn(text="done")]}), RunOptions(session=_Sessions(mode)))
    assert result.status is Status.OK, result.error
    assert repositories == built
