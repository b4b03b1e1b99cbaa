"""Repeated trials: pass^k and pass@k by hand, trial cassettes and goldens, seeds, deterministic replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.judge.metrics import combine_trials, pass_at_k, pass_hat_k, summarize
from replio_replay.judge.results import FixtureResult
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import run_args


def test_pass_hat_k_and_pass_at_k_by_hand() -> None:
    # n = 3 trials, c = 2 passed: pass^1 = 2/3, pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0
    assert [round(pass_hat_k(2, 3, k), 4) for k in (1, 2, 3)] == [0.6667, 0.3333, 0.0]
    # pass@1 = 2/3, pass@2 = 1 - C(1,2)/C(3,2) = 1, pass@3 = 1
    assert [round(pass_at_k(2, 3, k), 4) for k in (1, 2, 3)] == [0.6667, 1.0, 1.0]
    assert pass_hat_k(0, 3, 1) == 0.0 and pass_at_k(3, 3, 3) == 1.0


def test_the_summary_averages_pass_hat_k_over_fixtures_and_names_the_flaky_ones() -> None:
    results = [FixtureResult(id="a", passed=p, trial=k) for k, p in enumerate([True, True, False], 1)]
    results += [FixtureResult(id="b", passed=True, trial=k) for k in (1, 2, 3)]
    combined = combine_trials(results)
    assert [(r.id, r.passes, r.n) for r in combined] == [("a", 2, 3), ("b", 3, 3)]
    summary = summarize(combined)
    assert summary.fixtures == 2 and summary.trials == 3
    assert summary.pass_hat_k == {"1": round((2 / 3 + 1) / 2, 4), "2": round((1 / 3 + 1) / 2, 4), "3": 0.5}
    assert summary.pass_at_k == {"1": round((2 / 3 + 1) / 2, 4), "2": 1.0, "3": 1.0}
    assert summary.flaky == ["a"]
    assert summary.pass_rate == round(5 / 6, 4)


def _seeded(seen: Seen) -> Reply:
    """Reads notes.txt when the seed is even, answers at once when it is odd."""
    body = seen.json()
    read = any(m["role"] == "tool" for m in body["messages"])
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if body["seed"] % 2 == 0 and not read:
        message["tool_calls"] = [{"id": "c", "type": "function",
                                  "function": {"name": "file_read", "arguments": '{"path": "notes.txt"}'}}]
    else:
        message["content"] = f"done with seed {body['seed']}"
    return Reply(json={"choices": [{"index": 0, "message": message}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _run(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def test_trials_record_their_own_cassettes_and_goldens_and_replay_identically(
    project: Path, llm_server: LLMServer
) -> None:
    llm_server.handler = _seeded
    fixture = project / ".replio" / "eval" / "alpha.json"
    fixture.write_text(json.dumps({**json.loads(fixture.read_text()), "verifier": {"must_include": ["file_read"]}}))
    code, recorded = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--trials", "3",
                                    "--update-golden"))
    assert code == 0
    assert sorted({s.json()["seed"] for s in llm_server.requests}) == [0, 1, 2]
    folder = project / "cassettes" / "openai" / "test-model"
    assert sorted(p.name for p in folder.glob("alpha*")) == ["alpha.t2.yaml", "alpha.t3.yaml", "alpha.yaml"]
    assert sorted(p.name for p in (project / "golden" / "openai" / "test-model").glob("alpha*")) == [
        "alpha.json", "alpha.t2.json", "alpha.t3.json"]
    alpha = recorded["fixtures"][0]
    assert (alpha["passes"], alpha["n"]) == (2, 3)  # alpha expects file_read: seed 1 answers without it
    assert [(t["trial"], t["pass"]) for t in alpha["trials"]] == [(1, True), (2, False), (3, True)]
    assert recorded["summary"]["trials"] == 3 and recorded["summary"]["flaky"] == ["alpha"]
    llm_server.close()

    code, replayed = _run(*run_args(project, "--record-mode", "none", "--trials", "3", "--strict"))
    assert code == 0

    def outcome(report: dict[str, Any]) -> list[Any]:
        keys = ("trial", "status", "pass", "accuracy", "calls", "tokens")
        return [[{k: t[k] for k in keys} for t in f["trials"]] for f in report["fixtures"]]

    assert outcome(replayed) == outcome(recorded)
    assert all(t["drift"] == [] and t["request_drift"] == [] for f in replayed["fixtures"] for t in f["trials"])
    assert replayed["summary"]["pass_hat_k"] == recorded["summary"]["pass_hat_k"]
    again = CliRunner().invoke(main, run_args(project, "--record-mode", "none", "--trials", "3"))
    assert again.stdout == CliRunner().invoke(main, run_args(project, "--record-mode", "none", "--trials", "3")).stdout
    table = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture",
                                      "beta", "--record-mode", "none", "--trials", "3"])
    assert "2/3" in table.stdout and "pass^3" in table.stdout and "flaky: alpha" in table.stdout


def test_one_trial_keeps_todays_output(project: Path, llm_server: LLMServer) -> None:
    llm_server.handler = _seeded
    code, report = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1"))
    assert code == 0
    assert "trials" not in report["fixtures"][0] and "pass_hat_k" not in report["summary"]


@pytest.mark.parametrize("trials", ["0", "101"])
def test_a_trial_count_out_of_range_is_a_usage_error(project: Path, trials: str) -> None:
    result = CliRunner().invoke(main, [*run_args(project), "--trials", trials])
    assert result.exit_code == 2


def test_status_lists_trial_recordings_and_prune_keeps_them(project: Path, llm_server: LLMServer) -> None:
    llm_server.handler = _seeded
    assert _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--trials", "2"))[0] == 0
    status = CliRunner().invoke(main, ["eval", "--path", str(project), "status", "--prune", "--output", "json"])
    report = json.loads(status.stdout)
    assert report["orphans"] == []
    trials = sorted((e["fixture"], e["trial"]) for e in report["entries"] if e["fixture"] in ("alpha", "beta"))
    assert trials == [("alpha", 1), ("alpha", 2), ("beta", 1), ("beta", 2)]
    assert (project / "cassettes" / "openai" / "test-model" / "alpha.t2.yaml").exists()
