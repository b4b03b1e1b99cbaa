"""What `run` writes besides its table: an 80-column table, --output-file in each format, file modes."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replio_replay.judge.results import FixtureResult, RunResult, Status, Summary
from replio_replay.report.text import write_compare, write_findings
from tests.helpers import call, replio_command, replio_in_process, turn, write_json

LONG_ID = "a-rather-long-fixture-id"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two local fixtures played by the mock provider: one long id with many calls, one failing."""
    return write_project(tmp_path / "proj")


def write_project(root: Path) -> Path:
    write_json(root / ".replio" / "config.json",
               {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "max_turns": 9})
    write_json(root / "script.json", {
        LONG_ID: [turn(call("list_dir", depth=i)) for i in range(1, 11)] + [turn(text="done")],
        "short": [turn(text="no tools")],
    })
    write_json(root / ".replio" / "eval" / f"{LONG_ID}.json", {"task": "Look around.", "expected": ["list_dir"]})
    write_json(root / ".replio" / "eval" / "short.json", {"task": "Find x.", "verifier": {"must_include": ["grep"]}})
    return root


def replio(project: Path, *args: str, env: dict[str, str] | None = None, umask: int | None = None
           ) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a subprocess, as a user runs it (piped)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("CI", None)
    return subprocess.run(
        [replio_command(), "eval", "--path", str(project), "run", "--no-cassettes",
         "--fixture", LONG_ID, "--fixture", "short", *args],
        capture_output=True, text=True, env=full_env, timeout=60,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,  # noqa: PLW1509
    )


def test_the_table_fits_80_columns_without_cutting_ids_or_names(project: Path) -> None:
    result = replio(project, env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines[:10])
    assert lines[:10] == [
        "mock:scripted",
        "fixture                  status    pass  acc calls red err tokens drift req",
        "------------------------ --------- ---- ---- ----- --- --- ------ ----- ---",
        "a-rather-long-fixture-id truncated pass 0.00     9   0   0    135   new",
        "    list_dir > list_dir > list_dir > list_dir > list_dir > list_dir > list_dir >",
        "    list_dir > list_dir",
        "short                    ok        FAIL    -     0   0   0     15   new",
        "key: acc accuracy, red redundant, err errors, req request drift",
        "2 fixtures  accuracy 0.00 [0.00, 0.79]  pass rate 0.50 [0.09, 0.91]  calls 9",
        "redundant 0  errors 0  tokens 150  drifted 0  new 2",
    ]


def test_without_a_width_the_table_is_one_line_per_fixture(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    result = subprocess.run(
        [replio_command(), "eval", "--path", str(project), "run", "--no-cassettes",
         "--fixture", LONG_ID], capture_output=True, text=True, env=env, timeout=60)
    row = result.stdout.splitlines()[3]
    assert row.startswith(LONG_ID) and row.endswith("list_dir > list_dir")


@pytest.mark.parametrize(("output", "kind"), [("table", "json"), ("json", "json"), ("junit", "junit")])
def test_output_file_follows_the_output_format(project: Path, tmp_path: Path, output: str, kind: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What is written where: `replio`'s run in the test's process (its umask is a real process's, below)."""
    monkeypatch.delenv("CI", raising=False)
    target = tmp_path / "out" / "result"
    result = replio_in_process("eval", "--path", project, "run", "--no-cassettes", "--fixture", LONG_ID,
                               "--fixture", "short", "--output", output, "--output-file", target)
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    if kind == "json":
        assert [f["id"] for f in json.loads(text)["fixtures"]] == [LONG_ID, "short"]
    else:
        assert ET.fromstring(text).get("tests") == "2"
        assert text == result.stdout


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_report_files_follow_the_umask(project: Path, tmp_path: Path, umask: int) -> None:
    json_file, junit_file = tmp_path / "r.json", tmp_path / "r.xml"
    replio(project, "--output-file", str(json_file), "--junit-xml", str(junit_file), umask=umask)
    for path in (json_file, junit_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_compare_cells_mark_drift_and_no_golden_and_leave_errors_uncompared() -> None:
    change = {"path": "answer", "kind": "answer_changed", "old": "a", "new": "b"}
    fixtures = [FixtureResult(id="drifted", passed=True, drift=[change]),
                FixtureResult(id="fresh", passed=True, drift=None),
                FixtureResult(id="failed", status=Status.ERROR, error="boom", drift=None),
                FixtureResult(id="same", passed=True, drift=[])]
    runs = [RunResult(provider="p", model=m, fixtures=fixtures, summary=Summary()) for m in ("a", "b")]
    out = io.StringIO()
    write_compare(runs, out, rich=False)
    cells = {line.split()[0]: line.split()[1:] for line in out.getvalue().splitlines()
             if line.split()[:1] in (["drifted"], ["fresh"], ["failed"], ["same"])}
    assert cells["drifted"] == ["pass", "ok", "-", "0c", "drift", "1"] * 2
    assert cells["fresh"] == ["pass", "ok", "-", "0c", "no", "golden"] * 2
    assert cells["failed"] == ["FAIL", "error", "-", "0c"] * 2
    assert cells["same"] == ["pass", "ok", "-", "0c"] * 2


def test_the_findings_say_why_a_run_stopped_short_and_why_it_failed() -> None:
    fixtures = [FixtureResult(id="full", status=Status.TRUNCATED, error="the context window is full",
                              reasons=["answer: expected 42"]),
                FixtureResult(id="broke", status=Status.ERROR, error="HTTP 500", reasons=["the run ended in error"])]
    out = io.StringIO()
    write_findings(RunResult(provider="p", model="m", fixtures=fixtures, summary=Summary()), out, rich=False)
    assert out.getvalue().splitlines() == ["  full: truncated: the context window is full",
                                           "  full: answer: expected 42",
                                           "  broke: error: HTTP 500"]
