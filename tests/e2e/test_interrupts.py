"""Real subprocess runs of `replio`, interrupted: nothing half-written, no worktrees left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
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


def _napping() -> list[int]:
    """Live (not zombie) processes whose command line holds NAP."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if NAP.encode() in cmdline and b"pytest" not in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


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
from replio_replay import hookimpl

@hookimpl
def register_fixtures(fixtures):
    """Take a long time to start."""
    time.sleep(30)
'''


def test_an_interrupt_during_start_up_exits_130_with_a_message(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "slow_plugin.py").write_text(SLOW_PLUGIN)
    info = site / "slow_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: slow-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[replio]\nslow = slow_plugin\n")
    project = write_project(tmp_path / "proj", provider="mock")
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen([_replio(), "eval", "--path", str(project), "run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
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
