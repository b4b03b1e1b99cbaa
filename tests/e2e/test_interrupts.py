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
