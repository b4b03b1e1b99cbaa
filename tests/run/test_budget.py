"""--max-cost: the estimate (pure), the budget, and a live run over a loopback OpenAI-compatible
server refused before it starts or stopped once the money is spent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from replio_replay.run.budget import Budget, estimate
from tests.helpers import replio_command
from tests.support.llm_server import LLMServer, Reply, Seen

#: USD per million tokens that make each of the agent's answers (prompt 100-102, completion 10) cost about $0.11.
PRICE = {"input": 1000.0, "output": 1000.0}


def test_unrecorded_fixtures_are_estimated_at_the_mean_of_the_recorded_ones() -> None:
    assert estimate([0.2, 0.4, None]) == type(estimate([]))(0.9, 2, 1)
    assert "2 fixtures priced by the token usage of their last recording, 1 without a recording priced at " \
           "their mean" in estimate([0.2, 0.4, None]).describe()
    nothing = estimate([None, None])
    assert nothing.usd is None and "none recorded before: no estimate" in nothing.describe()
    assert estimate([]).usd == 0.0


def test_the_budget_stops_only_live_cases_once_spent() -> None:
    budget = Budget(1.0, {("r", "a", 1), ("r", "b", 1)})
    assert not budget.stops("r", "a", 1)
    budget.charge("r", "replayed", 1, 5.0)  # a replay spends nothing
    assert not budget.stops("r", "b", 1)
    budget.charge("r", "a", 1, 1.0)
    assert budget.stops("r", "b", 1) and not budget.stops("r", "replayed", 1)
    assert budget.reason() == "--max-cost 1.00 reached ($1.0000 spent)"
    budget.count_live([("r", "again", 1)])  # recorded again by --record-mode stale
    assert budget.stops("r", "again", 1)


def _priced(project: Path, prices: dict[str, dict[str, float]] | None = None) -> Path:
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "prices": prices if prices is not None else {"openai:test-model": PRICE}}))
    return project


def _run(project: Path, agent: LLMServer, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [replio_command(), "eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
         "--base-url", f"{agent.url}/v1", "--jobs", "1", "--output", "json", *extra],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _cassette(project: Path, fixture: str) -> Path:
    return project / "cassettes" / "openai" / "test-model" / f"{fixture}.yaml"


def test_a_live_run_estimated_over_max_cost_does_not_start(project: Path, agent: LLMServer) -> None:
    _priced(project)
    recorded = _run(project, agent)
    assert recorded.returncode == 0, recorded.stderr
    spent = json.loads(recorded.stdout)["summary"]["cost"]
    assert spent == round(sum(f["cost"] for f in json.loads(recorded.stdout)["fixtures"]), 6) > 0.4
    sent = len(agent.requests)

    refused = _run(project, agent, "--record-mode", "all", "--max-cost", "0.30")
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"--max-cost 0.30: this run is estimated to cost ${spent:.2f} (2 fixtures priced by the token usage " \
           "of their last recording), more than it allows" in refused.stderr
    assert len(agent.requests) == sent  # nothing was sent

    # a fixture without a recording is counted at the mean of those with one
    _cassette(project, "beta").unlink()
    refused = _run(project, agent, "--record-mode", "all", "--max-cost", "0.30")
    assert refused.returncode == 2
    assert "1 fixture priced by the token usage of their last recording, 1 without a recording priced at their " \
           "mean" in refused.stderr

    # a replay sends nothing and costs nothing now, whatever the limit; it reports what the recording cost
    replay = _run(project, agent, "--record-mode", "none", "--fixture", "alpha", "--max-cost", "0")
    assert replay.returncode == 1  # beta has no cassette left: an error, not a refusal
    alpha = json.loads(replay.stdout)["fixtures"][0]
    assert alpha["status"] == "ok" and alpha["cost"] > 0 and alpha["cost_by_role"] == {"agent": alpha["cost"]}


def test_a_live_run_stops_recording_new_fixtures_once_max_cost_is_spent(project: Path, agent: LLMServer) -> None:
    _priced(project)
    done = _run(project, agent, "--max-cost", "0.10")
    assert "--max-cost 0.10: 2 fixtures to record, none recorded before: no estimate" in done.stderr
    assert done.returncode == 1
    alpha, beta = json.loads(done.stdout)["fixtures"]
    assert alpha["status"] == "ok" and alpha["cost"] > 0.1  # finished, kept and written
    assert _cassette(project, "alpha").is_file()
    assert beta["status"] == "cancelled" and beta["pass"] is False
    assert beta["error"] == f"not run: --max-cost 0.10 reached (${alpha['cost']:.4f} spent)"
    assert not _cassette(project, "beta").exists()
    assert "fixture ended in error (or cancelled): beta" in done.stderr
    assert all("BETA" not in r.body.decode() for r in agent.requests)  # never sent


def test_max_cost_needs_a_price_for_the_model_it_counts(project: Path, agent: LLMServer) -> None:
    done = _run(_priced(project, {}), agent, "--max-cost", "1")
    assert done.returncode == 2 and not agent.requests
    assert "--max-cost 1.00: no price known for openai:test-model, so what it spends cannot be counted; add one " \
           'under "prices" in .replio/config.json' in done.stderr


def test_without_prices_no_output_carries_a_cost(project: Path, agent: LLMServer, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = _run(project, agent, "--junit-xml", str(junit))
    assert done.returncode == 0
    assert "cost" not in done.stdout and "cost" not in junit.read_text()
    table = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--fixture", "alpha",
                            "--record-mode", "none"], capture_output=True, text=True, timeout=120)
    assert "cost" not in table.stdout and "tokens" in table.stdout


def test_with_prices_every_output_carries_the_cost(project: Path, agent: LLMServer, tmp_path: Path) -> None:
    _priced(project)
    junit = tmp_path / "junit.xml"
    done = _run(project, agent, "--junit-xml", str(junit))
    data = json.loads(done.stdout)
    alpha = data["fixtures"][0]
    assert f'<property name="cost" value="{alpha["cost"]}" />' in junit.read_text()
    assert f'<property name="cost.agent" value="{alpha["cost"]}" />' in junit.read_text()
    assert data["summary"]["cost_by_role"] == {"agent": data["summary"]["cost"]}
    table = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--fixture", "alpha",
                            "--record-mode", "none"], capture_output=True, text=True, timeout=120)
    header = table.stdout.splitlines()[1].split()
    assert header[header.index("tokens") + 1] == "cost"
    assert f"cost ${alpha['cost']}" in table.stdout.replace("  ", " ")


def test_max_cost_refuses_a_value_that_is_not_a_number_of_dollars(project: Path, agent: LLMServer) -> None:
    for value in ("nan", "NaN", "-1", "inf"):
        done = _run(_priced(project), agent, "--max-cost", value)
        assert done.returncode == 2, (value, done.stderr)
        assert "Invalid value for '--max-cost'" in done.stderr and "is not in the range 0<=x<=1000000" in done.stderr
    assert not agent.requests


def test_the_estimate_prices_each_recorded_role_by_the_model_that_spoke_as_it(project: Path,
                                                                              agent: LLMServer) -> None:
    agent_reply = agent.handler
    assert agent_reply is not None

    def handle(seen: Seen) -> Reply:
        if seen.json()["model"] != "judge-model":
            return agent_reply(seen)
        return Reply(json={"id": "j", "object": "chat.completion", "model": "judge-model", "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": '{"verdict": "yes", "reason": "It read the notes."}'}}],
            "usage": {"prompt_tokens": 2000, "completion_tokens": 50, "total_tokens": 2050}})

    agent.handler = handle
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "judge": "openai:judge-model",
                                  "providers": {"openai": {"base_url": f"{agent.url}/v1"}}}))
    _priced(project, {"openai:test-model": PRICE, "openai:judge-model": {"input": 100.0, "output": 100.0}})
    alpha = project / ".replio" / "eval" / "alpha.json"
    alpha.write_text(json.dumps({**json.loads(alpha.read_text()), "verifier": {"judge": {"rubric": "It read."}}}))
    recorded = _run(project, agent)
    assert recorded.returncode == 0, recorded.stderr
    data = json.loads(recorded.stdout)
    judged = data["fixtures"][0]
    assert set(judged["cost_by_role"]) == {"agent", "judge"} and judged["cost_by_role"]["judge"] == 0.205

    refused = _run(project, agent, "--record-mode", "all", "--max-cost", "0.01")
    assert refused.returncode == 2
    assert f"this run is estimated to cost ${data['summary']['cost']:.2f} (2 fixtures priced by the token usage " \
           "of their last recording)" in refused.stderr
