"""A saved result is read back as input: every number in it checked when it is loaded (finite, within
its bounds), so a bad one is exit 2 naming the file and the field, before anything runs or is sent:
`run --baseline`, a baseline the config names (`run`, `diff`), `report` and `merge`, through the
installed `replio`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import UsageError
from replio_replay.judge.metrics import summarize
from replio_replay.judge.results import MAX_NUMBER, FixtureResult, RunResult
from replio_replay.report.saved import read_saved
from tests.helpers import replio_command, write_json
from tests.support.llm_server import LLMServer


def _saved() -> dict[str, Any]:
    """A result as `run --output-file` writes it: two fixtures, costed, three trials each."""
    fixtures = [FixtureResult(id=fid, passed=True, calls=1, tokens=10, cost=0.001, drift=[]) for fid in ("alpha", "beta")]
    return RunResult(provider="openai", model="test-model", fixtures=fixtures, summary=summarize(fixtures)).to_json()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            data = data[int(key)] if key.isdigit() else data[key]  # type: ignore[index]
        data[last] = value
    return change


#: (how the file is spoilt, the words that name the field and its problem)
SPOILT = {
    "400 digits": (_set("summary.tokens", int("9" * 400)), "summary.tokens: Input should be less than or equal "
                                                          f"to {MAX_NUMBER}"),
    "1e999": (_set("fixtures.1.cost", "INF"), "the number at fixtures.1.cost is too large to be read"),
    "NaN": (_set("summary.pass_rate", "NAN"), "NaN is not a JSON number"),
    "negative tokens": (_set("fixtures.0.tokens", -3), "fixtures.0.tokens: Input should be greater than or equal to 0"),
    "rate 1.5": (_set("summary.pass_rate", 1.5), "summary.pass_rate: Input should be less than or equal to 1"),
    "a billion trials": (_set("summary.trials", 10**9), "summary.trials: Input should be less than or equal to 100"),
    "an interval past 1": (_set("summary.ci95", {"pass_rate": [0.5, 7]}), "summary.ci95.pass_rate.1: Input should "
                                                                          "be less than or equal to 1"),
    "tokens by role": (_set("fixtures.0.tokens_by_role", {"agent": {"prompt": 2**60}}),
                       "fixtures.0.tokens_by_role.agent.prompt: Input should be less than or equal to"),
}


def spoilt(path: Path, how: str) -> Path:
    data = _saved()
    SPOILT[how][0](data)
    # JSON has no spelling for these two, so they go in as the text a hand or another tool wrote
    path.write_text(json.dumps(data).replace('"INF"', "1e999").replace('"NAN"', "NaN"), encoding="utf-8")
    return path


def replio(project: Path, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([replio_command(), "eval", "--path", str(project), *map(str, args)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)


@pytest.mark.parametrize("how", SPOILT)
def test_each_number_is_checked_when_the_file_is_read(tmp_path: Path, how: str) -> None:
    path = spoilt(tmp_path / "bad.json", how)
    with pytest.raises(UsageError) as info:
        read_saved(path)
    assert str(info.value).startswith(f"{path}: ") and SPOILT[how][1] in str(info.value)


def test_numbers_at_their_bounds_are_taken(tmp_path: Path) -> None:
    data = _saved()
    _set("summary.tokens", MAX_NUMBER)(data)
    _set("summary.pass_rate", 1)(data)
    _set("fixtures.0.cost", 0)(data)
    assert read_saved(write_json(tmp_path / "ok.json", data)).runs[0].summary.tokens == MAX_NUMBER


@pytest.mark.parametrize("how", ["400 digits", "1e999", "rate 1.5"])
def test_a_bad_baseline_exits_2_before_anything_is_sent(project: Path, llm_server: LLMServer, how: str) -> None:
    bad = spoilt(project / "base.json", how)
    env = {**os.environ, "OPENAI_BASE_URL": f"{llm_server.url}/v1"}
    done = replio(project, "run", "--fixture", "alpha", "--baseline", bad, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"replio: error: {bad}: ") and SPOILT[how][1] in done.stderr
    assert "Traceback" not in done.stderr and llm_server.requests == []
    assert not (project / "cassettes").exists()


def test_a_bad_baseline_the_config_names_stops_run_and_diff(project: Path, llm_server: LLMServer) -> None:
    spoilt(project / "base.json", "400 digits")
    write_json(project / ".replio" / "config.json", {"provider": "openai:test-model", "baseline": "base.json"})
    env = {**os.environ, "OPENAI_BASE_URL": f"{llm_server.url}/v1"}
    for command in ("run", "diff"):  # diff replays by default: here it would record, were it not stopped
        done = replio(project, command, "--fixture", "alpha", "--record-mode", "once", env=env)
        assert done.returncode == 2 and done.stdout == "", (command, done.stderr)
        assert "base.json: not a replio result: summary.tokens: Input should be less than or equal to" in done.stderr
    assert llm_server.requests == []


@pytest.mark.parametrize("command", ["report", "merge"])
def test_report_and_merge_refuse_a_bad_result_naming_it(tmp_path: Path, command: str) -> None:
    good = write_json(tmp_path / "good.json", _saved())
    bad = spoilt(tmp_path / "bad.json", "negative tokens")
    out = tmp_path / "out.file"
    done = replio(tmp_path, command, good, bad, "--output-file", out)
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    assert done.stderr == f"replio: error: {bad}: not a replio result: {SPOILT['negative tokens'][1]}; give a file " \
                          "that replio eval run --output json or --output-file wrote\n"
