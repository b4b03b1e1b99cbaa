"""Real subprocess runs of `replio`, interrupted: nothing half-written, no worktrees left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
from tests.support.plugins import install_plugin
from tests.support.project import write_project


def _replio() -> str:
    return str(Path(sys.executable).with_name("replio"))


def _many_fixtures(project: Path, n: int) -> None:
    folder = project / ".replio" / "eval"
    for i in range(n):
        (folder / f"slow-{i:02d}.json").write_text(json.dumps({
            "task": f"ALPHA {i}: read notes.txt", "files": {"notes.txt": "hello\n"}, "expected": ["file_read"],
        }))


def _start(project: Path, server: LLMServer, tmp: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_CONFIG_HOME": str(tmp / "xdg")}
    env.pop("CI", None)
    args = [_replio(), "eval", "--path", str(project), "run", "--base-url", f"{server.url}/v1", *extra]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_requests(server: LLMServer, n: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(server.requests) < n:
        assert time.monotonic() < deadline, "the run never reached the server"
        time.sleep(0.02)


def _slow_agent(server: LLMServer, delay: float) -> None:
    agent = openai_agent({"ALPHA": [[("file_read", {"path": "notes.txt"})], "hello"]})

    def slow(seen):
        reply = agent(seen)
        reply.delay = delay
        return reply

    server.handler = slow


def test_kill_mid_recording_leaves_no_partial_cassette(tmp_path: Path, llm_server: LLMServer) -> None:
    project = write_project(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    _slow_agent(llm_server, delay=0.4)
    proc = _start(project, llm_server, temp, "--record-mode", "once", "--fixture", "alpha")
    _wait_for_requests(llm_server, 2)  # the second request: the first exchange is in memory only
    proc.kill()
    proc.wait(timeout=10)
    cassettes = project / "cassettes"
    assert not cassettes.exists() or not [p for p in cassettes.rglob("*") if p.is_file()]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupting_a_concurrent_run(tmp_path: Path, llm_server: LLMServer, sig: int) -> None:
    project = write_project(tmp_path / "proj")
    _many_fixtures(project, 12)
    temp = tmp_path / "tmp"
    temp.mkdir()
    _slow_agent(llm_server, delay=0.5)
    proc = _start(project, llm_server, temp, "--record-mode", "once", "--jobs", "4", "--output", "json")
    _wait_for_requests(llm_server, 4)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    report = json.loads(out)
    statuses = {f["status"] for f in report["fixtures"]}
    assert "cancelled" in statuses
    assert {f"slow-{i:02d}" for i in range(12)} <= {f["id"] for f in report["fixtures"]}
    assert list(temp.iterdir()) == [], "worktrees left behind"
    leftovers = [p for p in (project / "cassettes").rglob("*.tmp")] if (project / "cassettes").exists() else []
    assert leftovers == []
    for cassette in (project / "cassettes").rglob("*.yaml") if (project / "cassettes").exists() else []:
        text = cassette.read_text()
        assert text.rstrip().endswith(("'", '"', "}", "]")) or "interactions" in text
        fixture = next(f for f in report["fixtures"] if f["id"] == cassette.stem)
        assert fixture["status"] == "ok"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_does_not_wait_for_a_request_in_flight(tmp_path: Path, llm_server: LLMServer,
                                                             sig: int) -> None:
    project = write_project(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    _slow_agent(llm_server, delay=30)
    proc = _start(project, llm_server, temp, "--record-mode", "once", "--jobs", "2", "--output", "json")
    _wait_for_requests(llm_server, 2)
    started = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=25)
    assert time.monotonic() - started < 10, "the run waited for the 30 s requests"
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert {f["status"] for f in report["fixtures"]} == {"cancelled"}
    assert not (project / "cassettes").exists() or not list((project / "cassettes").rglob("*.yaml"))
    assert list(temp.iterdir()) == [], "worktrees left behind"


def test_a_second_ctrl_c_exits_at_once_with_the_partial_report(tmp_path: Path, llm_server: LLMServer) -> None:
    project = write_project(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    _slow_agent(llm_server, delay=30)
    proc = _start(project, llm_server, temp, "--record-mode", "once", "--output", "json")
    _wait_for_requests(llm_server, 1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=25)
    assert proc.returncode == 130, err
    assert "Aborted!" not in err
    assert out, err
    assert {"alpha", "beta"} <= {f["id"] for f in json.loads(out)["fixtures"]}


#: A number only the napping command tool's command line holds, to find its process.
NAP = "61.2345"


def _command_project(root: Path) -> Path:
    """A project whose fixture offers a command tool that sleeps a minute."""
    project = write_project(root)
    (project / ".replio" / "eval" / "alpha.json").write_text(json.dumps({
        "task": "ALPHA: take a nap.",
        "tools": {"nap": {"description": "Sleep.", "category": "read",
                          "command": [sys.executable, "-c", f"import time; time.sleep({NAP})"]}},
        "tools_offered": ["nap"],
    }))
    return project


def _napping(marker: str = NAP, under: int | None = None) -> list[int]:
    """Live (not zombie) processes whose command line holds `marker` (descendants of `under` only,
    when given: another test on another worker may nap the same nap)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and b"pytest" not in cmdline and state != "Z" and \
                (under is None or _descends(int(proc.name), under)):
            found.append(int(proc.name))
    return found


def _descends(pid: int, ancestor: int) -> bool:
    """Whether `pid` is `ancestor` or one of its descendants (by the parents /proc names)."""
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def test_an_interrupt_ends_a_tool_call_in_flight_and_its_process(tmp_path: Path, llm_server: LLMServer) -> None:
    project = _command_project(tmp_path / "proj")
    temp = tmp_path / "tmp"
    temp.mkdir()
    llm_server.handler = openai_agent({"ALPHA": [[("nap", {})], "rested"]})
    proc = _start(project, llm_server, temp, "--no-cassettes", "--fixture", "alpha", "--output", "json")
    deadline = time.monotonic() + 20
    while not _napping():
        assert time.monotonic() < deadline, "the command tool never started"
        time.sleep(0.02)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=25)
    assert time.monotonic() - started < 10
    assert proc.returncode == 130, err
    assert json.loads(out)["fixtures"][0]["status"] == "cancelled"
    deadline = time.monotonic() + 5
    while _napping():
        assert time.monotonic() < deadline, "the command tool's process outlived the run"
        time.sleep(0.05)


SLOW_PLUGIN = '''
import time
from pathlib import Path
from replio_replay import hookimpl

@hookimpl
def register_fixtures(fixtures):
    """Take a long time to start, once it says so."""
    Path(%r).touch()
    time.sleep(30)
'''


def test_an_interrupt_during_start_up_exits_130_with_a_message(tmp_path: Path) -> None:
    site, loading = tmp_path / "site", tmp_path / "loading"
    name = install_plugin(site, "slow_plugin", SLOW_PLUGIN % str(loading))
    project = write_project(tmp_path / "proj", provider="mock")
    (project / ".replio" / "config.json").write_text(json.dumps({"provider": "mock", "plugins": [name]}))
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen([_replio(), "eval", "--path", str(project), "run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not loading.exists():  # a loaded machine may take seconds to import replio
        assert time.monotonic() < deadline, "the plugin never started loading"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=25)
    assert proc.returncode == 130
    assert "replio: interrupted while starting; nothing was run." in err
    assert "Traceback" not in err and "Aborted!" not in err


def test_worktrees_of_a_killed_run_are_removed_by_the_next_one(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    temp = tmp_path / "tmp"
    stale = temp / f"replio-wt-{gone.pid}-abc"
    mine = temp / f"replio-wt-{os.getpid()}-def"
    for folder in (stale, mine):
        (folder / ".replio").mkdir(parents=True)
    project = write_project(tmp_path / "proj", provider="mock")
    env = {**os.environ, "TMPDIR": str(temp), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = subprocess.run([_replio(), "eval", "--path", str(project), "run", "--fixture", "alpha"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert not stale.exists()
    assert mine.exists(), "a worktree of a live process was removed"


#: What a stub's `when` and the answer check look for: under a backtracking engine (Python's `re`)
#: the lookup's argument and the answer each take hours, holding the interpreter and its signals.
BACKTRACKING_PLAN = [[("lookup", {"q": "a" * 34 + "b"})], [("nap", {})], "abcdefghijklmnopqrstuvwxyzab!"]
#: The nap of this test's command tool, apart from the other tests' NAP.
LONG_NAP = "62.3456"


def _backtracking_project(root: Path, nap: str) -> Path:
    """The alpha fixture: a lookup whose stub matches `^(a+)+$`, then the napping command tool."""
    project = write_project(root)
    (project / ".replio" / "eval" / "alpha.json").write_text(json.dumps({
        "task": "ALPHA: look the letters up, then take a nap.",
        "tools": {
            "lookup": {"description": "Look up.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                       "results": [{"when": {"q": {"$regex": "^(a+)+$"}}, "result": "only a's"},
                                   {"result": "not only a's"}]},
            "nap": {"description": "Sleep.", "category": "read",
                    "command": [sys.executable, "-c", f"import time; time.sleep({nap})"]},
        },
        "tools_offered": ["lookup", "nap"],
        "verifier": {"answer": {"$regex": r"^(\w+\s?)+$"}},
    }))
    return project


def _sigterm_once(proc: subprocess.Popen[str], ready: Callable[[], bool], never: str) -> tuple[str, str]:
    """SIGTERM `proc` once `ready()` holds; its output, after checking it ended within seconds with 130."""
    try:
        deadline = time.monotonic() + 20
        while not ready():
            assert time.monotonic() < deadline, never
            time.sleep(0.02)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=25)
        assert time.monotonic() - started < 10
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    return out, err


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("replay", [False, True], ids=["recording", "offline-replay"])
def test_sigterm_ends_a_run_whose_fixture_has_backtracking_patterns(tmp_path: Path, llm_server: LLMServer,
                                                                    replay: bool) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    llm_server.handler = openai_agent({"ALPHA": BACKTRACKING_PLAN})
    project = _backtracking_project(tmp_path / "proj", "0" if replay else LONG_NAP)
    if replay:
        proc = _start(project, llm_server, temp, "--record-mode", "once", "--fixture", "alpha")
        try:
            proc.communicate(timeout=30)  # the lookup's stub matched in time, the answer was judged
        finally:
            proc.kill()
        assert proc.returncode in (0, 1)
        project = _backtracking_project(tmp_path / "proj2", LONG_NAP)
        shutil.copytree(tmp_path / "proj" / "cassettes", project / "cassettes")
        llm_server.close()
    before = _files(project)
    proc = _start(project, llm_server, temp, "--record-mode", "none" if replay else "once", "--fixture", "alpha",
                  "--output", "json")
    # the nap: the lookup went by, so its stub's `when` was matched
    out, err = _sigterm_once(proc, lambda: _napping(LONG_NAP, under=proc.pid), "the run never reached the nap")
    fixture = json.loads(out)["fixtures"][0]
    assert fixture["status"] == "cancelled" and fixture["names"] == ["lookup", "nap"]
    assert fixture["trace"][0]["result"] == "not only a's"
    assert _files(project) == before, "a cassette or golden was written"
    assert list(temp.iterdir()) == [], "worktrees left behind"


SPINNING_PLUGIN = '''
from pathlib import Path

from replio_replay import ToolContext, hookimpl, tool


@tool(category="read")
def spin(ctx: ToolContext) -> str:
    """Compute for ever, in pure Python."""
    Path(%r).touch()
    n = 0
    while True:
        n += sum(range(1000)) %% 7


@hookimpl
def register_tools(tools):
    """Offer the spinning tool."""
    tools["spin"] = spin
'''


def test_sigterm_ends_an_offline_run_while_python_code_computes(tmp_path: Path) -> None:
    """A tool that never stops computing holds a worker, never the main thread: the run ends."""
    site, spinning = tmp_path / "site", tmp_path / "spinning"
    name = install_plugin(site, "spinner", SPINNING_PLUGIN % str(spinning))
    project = write_project(tmp_path / "proj", provider="mock")
    (project / ".replio" / "eval" / "alpha.json").write_text(json.dumps({"task": "Spin.", "tools_offered": ["spin"]}))
    (project / "script.json").write_text(json.dumps({"alpha": [{"tool_calls": [{"name": "spin", "arguments": {}}]},
                                                               {"text": "Done."}]}))
    (project / ".replio" / "config.json").write_text(json.dumps(
        {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "tool_timeout": 120,
         "plugins": [name]}))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "TMPDIR": str(temp), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen([_replio(), "eval", "--path", str(project), "run", "--fixture", "alpha",
                             "--output", "json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = _sigterm_once(proc, spinning.exists, "the tool never started")
    assert json.loads(out)["fixtures"][0]["status"] == "cancelled"
    assert list(temp.iterdir()) == [], "worktrees left behind"


def test_an_interrupted_diff_says_so(tmp_path: Path, llm_server: LLMServer) -> None:
    project = write_project(tmp_path / "proj")
    _slow_agent(llm_server, delay=0.5)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.Popen([_replio(), "eval", "--path", str(project), "diff", "--fixture", "alpha", "--base-url",
                             f"{llm_server.url}/v1", "--record-mode", "once"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_requests(llm_server, 1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "interrupted: fixtures in flight were cancelled; the report above is partial."
