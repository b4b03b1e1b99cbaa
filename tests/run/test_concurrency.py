"""Concurrency: --jobs 1 and --jobs 8 give the same results and cassettes, recording and replaying."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer


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
