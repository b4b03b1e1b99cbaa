"""Concurrency: --jobs 1 and --jobs 8 give the same results and cassettes, recording and replaying;
--jobs bounds the fixtures in flight for the whole run, across tool sets and providers."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path

from click.testing import CliRunner

from replio_replay.cli import main
from tests.helpers import replio_command
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import run_args


def _suite(project: Path, n: int) -> list[str]:
    folder = project / ".replio" / "eval"
    ids = []
    for i in range(n):
        plan = "ALPHA" if i % 2 else "BETA"
        (folder / f"load-{i:02d}.json").write_text(json.dumps({
            "task": f"{plan} {i}: look around.", "files": {"notes.txt": f"note {i}\n", "a.txt": "a\n"},
        }))
        ids.append(f"load-{i:02d}")
    return ids


def _run(project: Path, ids: list[str], *args: str) -> str:
    fixture_args = [a for i in ids for a in ("--fixture", i)]
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", *fixture_args,
                                       "--output", "json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_jobs_do_not_change_results_or_cassettes(project: Path, agent: LLMServer, tmp_path: Path) -> None:
    ids = _suite(project, 24)
    url = f"{agent.url}/v1"
    one = _run(project, ids, "--base-url", url, "--jobs", "1", "--cassettes", str(tmp_path / "one"))
    eight = _run(project, ids, "--base-url", url, "--jobs", "8", "--cassettes", str(tmp_path / "eight"))
    assert one == eight
    files_one = sorted((tmp_path / "one").rglob("*.yaml"))
    files_eight = sorted((tmp_path / "eight").rglob("*.yaml"))
    assert [p.name for p in files_one] == [p.name for p in files_eight] == [f"{i}.yaml" for i in ids]
    for a, b in zip(files_one, files_eight):
        assert a.read_text() == b.read_text(), f"{a.name} differs between --jobs 1 and --jobs 8"
        assert f"{a.stem.split('-')[1].lstrip('0') or '0'}: look around" in a.read_text()
    agent.close()

    replay_one = _run(project, ids, "--record-mode", "none", "--jobs", "1", "--cassettes", str(tmp_path / "eight"))
    replay_eight = _run(project, ids, "--record-mode", "none", "--jobs", "8", "--cassettes", str(tmp_path / "one"))
    assert replay_one == replay_eight
    assert [f["names"] for f in json.loads(replay_one)["fixtures"]] == [f["names"] for f in json.loads(one)["fixtures"]]


def test_jobs_bounds_the_fixtures_in_flight_for_the_whole_run(project: Path, agent: LLMServer) -> None:
    """`--tools A,B --jobs 1` runs one fixture at a time across both tool sets, as its header says."""
    variant = project / ".replio" / "tools" / "terse.json"
    variant.parent.mkdir()
    variant.write_text(json.dumps({"override": {"glob": {"description": "Find files by pattern."}}}))
    plan = agent.handler
    assert plan is not None
    arrivals: list[float] = []

    def slow(seen: Seen) -> Reply:
        arrivals.append(time.monotonic())
        return dataclasses.replace(plan(seen), delay=0.3)

    agent.handler = slow
    done = subprocess.run([replio_command(), *run_args(project, "--base-url", f"{agent.url}/v1", "--jobs", "1",
                                                       "--tools", "default,terse", "--record-mode", "all")],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "OPENAI_API_KEY": "sk-test-0123456789abcdef"})
    assert done.returncode == 0, done.stderr
    assert "recording 4 fixtures, 1 at a time" in done.stderr
    assert len(arrivals) == 8  # two requests for each fixture of each tool set
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert min(gaps) >= 0.25, f"two requests were in flight at once: {gaps}"
