"""--max-cost: the estimate (pure), the budget, and a live run over a loopback OpenAI-compatible
server refused before it starts or stopped once the money is spent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from replio_replay.errors import ProviderResponseError
from replio_replay.prices import Price, dollars
from replio_replay.providers.base import Exchange
from replio_replay.providers.openai import OpenAIProvider
from replio_replay.run.budget import Budget, Meter, estimate
from tests.helpers import replio_command, replio_in_process
from tests.providers.samples import first_turn, settings
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
    budget.spend(0.6)
    assert not budget.stops("r", "b", 1)
    budget.spend(0.4)
    assert budget.stops("r", "b", 1) and not budget.stops("r", "replayed", 1)
    assert budget.reason() == "--max-cost 1.00 reached ($1.00 spent)"
    budget.count_live([("r", "again", 1)])  # recorded again by --record-mode stale
    assert budget.stops("r", "again", 1)


def test_the_budget_stops_live_cases_once_spending_is_not_counted_and_says_amounts_as_they_are() -> None:
    budget = Budget(0.00001, {("r", "a", 1)})
    budget.spend(0.000042)
    assert budget.reason() == "--max-cost 0.00001 reached ($0.000042 spent)"
    budget = Budget(5.0, {("r", "a", 1)})
    budget.refuse("x")
    budget.refuse("y")  # the first one is the cause
    assert budget.stops("r", "a", 1) and not budget.stops("r", "replayed", 1)
    assert budget.reason() == ("--max-cost 5.00: the cost of an answer to fixture 'x' could not be counted (its "
                               "error says why), so no more is recorded")


def _priced(project: Path, prices: dict[str, dict[str, float]] | None = None) -> Path:
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "prices": prices if prices is not None else {"openai:test-model": PRICE}}))
    return project


def _args(project: Path, agent: LLMServer, *extra: str) -> list[str]:
    return ["eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
            "--base-url", f"{agent.url}/v1", "--jobs", "1", "--output", "json", *extra]


def _started(project: Path, agent: LLMServer, *extra: str) -> subprocess.CompletedProcess[str]:
    """The run as the installed `replio` process (the family's one test through real processes: a live
    run, and one refused)."""
    return subprocess.run([replio_command(), *_args(project, agent, *extra)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def _run(project: Path, agent: LLMServer, *extra: str) -> subprocess.CompletedProcess[str]:
    """The run in this process: what --max-cost chooses, sends and prints does not depend on the process."""
    return replio_in_process(*_args(project, agent, *extra))


def _replay(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """alpha replayed, its table printed, in this process."""
    return replio_in_process("eval", "--path", project, "run", "--fixture", "alpha", "--record-mode", "none", *extra)


def _cassette(project: Path, fixture: str) -> Path:
    return project / "cassettes" / "openai" / "test-model" / f"{fixture}.yaml"


def test_a_live_run_estimated_over_max_cost_does_not_start(project: Path, agent: LLMServer) -> None:
    _priced(project)
    recorded = _started(project, agent)
    assert recorded.returncode == 0, recorded.stderr
    spent = json.loads(recorded.stdout)["summary"]["cost"]
    assert spent == round(sum(f["cost"] for f in json.loads(recorded.stdout)["fixtures"]), 6) > 0.4
    sent = len(agent.requests)

    refused = _started(project, agent, "--record-mode", "all", "--max-cost", "0.30")
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"--max-cost 0.30: this run is estimated to cost ${dollars(spent)} (2 fixtures priced by the token usage " \
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
    assert beta["error"] == f"not run: --max-cost 0.10 reached (${dollars(alpha['cost'])} spent)"
    assert not _cassette(project, "beta").exists()
    assert "fixture ended in error (or cancelled): beta" in done.stderr
    assert all("BETA" not in r.body.decode() for r in agent.requests)  # never sent


def test_max_cost_needs_a_price_for_the_model_it_counts(project: Path, agent: LLMServer) -> None:
    done = _run(_priced(project, {}), agent, "--max-cost", "1")
    assert done.returncode == 2 and not agent.requests
    assert "--max-cost 1.00: no price known for openai:test-model (agent), so what it spends cannot be counted; add one " \
           'under "prices" in .replio/config.json' in done.stderr


def test_without_prices_no_output_carries_a_cost(project: Path, agent: LLMServer, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = _run(project, agent, "--junit-xml", str(junit))
    assert done.returncode == 0
    assert "cost" not in done.stdout and "cost" not in junit.read_text()
    table = _replay(project)
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
    table = _replay(project)
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
    assert f"this run is estimated to cost ${dollars(data['summary']['cost'])} (2 fixtures priced by the token usage " \
           "of their last recording)" in refused.stderr


def _without_usage(agent: LLMServer, usage: Any) -> None:
    """The agent's answers carry `usage` instead of their token counts (None: no usage at all)."""
    reply = agent.handler
    assert reply is not None

    def handle(seen: Seen) -> Reply:
        answer = reply(seen)
        body = {k: v for k, v in answer.json.items() if k != "usage"}
        return Reply(json=body if usage is None else {**body, "usage": usage})

    agent.handler = handle


@pytest.mark.parametrize(("usage", "why"), [
    (None, "gave no prompt and completion token counts"),
    ({"prompt_tokens": "100", "completion_tokens": "10", "total_tokens": "110"},
     "gave no prompt and completion token counts"),
    ({"total_tokens": 110}, "gave only a total token count, not its prompt and completion tokens"),
])
def test_an_answer_whose_cost_cannot_be_counted_stops_the_recording_under_max_cost(
        project: Path, agent: LLMServer, usage: Any, why: str) -> None:
    _priced(project)
    _without_usage(agent, usage)
    done = _run(project, agent, "--max-cost", "0.00001")
    assert done.returncode == 1, done.stderr
    alpha, beta = json.loads(done.stdout)["fixtures"]
    stopped = (f"fixture 'alpha': the agent's answer from openai:test-model {why}, so what it cost cannot be "
               "counted under --max-cost: the recording stopped (without --max-cost it records, its cost unknown)")
    assert alpha["status"] == "cancelled" and alpha["error"] == stopped
    assert beta["status"] == "cancelled"
    assert beta["error"] == ("not run: --max-cost 0.00001: the cost of an answer to fixture 'alpha' could not be "
                             "counted (its error says why), so no more is recorded")
    assert len(agent.requests) == 1  # alpha's first answer; nothing more was sent
    assert not (project / "cassettes").exists() or not any((project / "cassettes").rglob("*.yaml"))
    # alpha's answer was paid for but not counted: its cost is unknown, never $0
    assert "cost" not in alpha and alpha["cost_unknown"] == ["agent"]
    assert "cost" not in json.loads(done.stdout)["summary"]


def test_without_max_cost_an_answer_without_usage_leaves_the_cost_unknown(project: Path, agent: LLMServer,
                                                                         tmp_path: Path) -> None:
    _priced(project)
    _without_usage(agent, {"total_tokens": 110})
    done = _run(project, agent)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [f["cost_unknown"] for f in data["fixtures"]] == [["agent"], ["agent"]]
    assert all("cost" not in f and "cost_by_role" not in f for f in data["fixtures"])
    assert data["summary"]["cost_unknown"] == 2 and "cost" not in data["summary"]
    junit, html = tmp_path / "junit.xml", tmp_path / "report.html"
    table = _replay(project, "--fail-over", "cost=1", "--junit-xml", str(junit), "--html", str(html))
    assert '<property name="cost.unknown" value="agent" />' in junit.read_text()
    assert 'name="cost"' not in junit.read_text()
    assert "cost unknown" in html.read_text()
    header = table.stdout.splitlines()[1].split()
    row = next(line.split() for line in table.stdout.splitlines() if line.split()[:1] == ["alpha"])
    assert row[header.index("cost")] == "unknown"  # the replay reports what the recording cost: unknown
    assert "cost unknown (no token counts for 1 fixture)" in table.stdout
    assert table.returncode == 1  # a gate on a cost that is unknown fails, saying why
    assert "cost not measured by this run: --fail-over cost cannot be checked (the cost is unknown for 1 " \
           "fixture" in table.stderr


def _judged(project: Path, agent: LLMServer, judge_usage: dict[str, int] | None = None) -> None:
    """alpha and beta judged by openai:judge-model, served by `agent` too (each of its answers
    2000 prompt and 50 completion tokens, or `judge_usage`), whose base URL the config names."""
    agent_reply = agent.handler
    assert agent_reply is not None

    def handle(seen: Seen) -> Reply:
        if seen.json()["model"] != "judge-model":
            return agent_reply(seen)
        body = {"id": "j", "object": "chat.completion", "model": "judge-model", "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": '{"verdict": "yes", "reason": "It read the notes."}'}}]}
        return Reply(json={**body, **({"usage": judge_usage} if judge_usage else {})})

    agent.handler = handle
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "judge": "openai:judge-model",
                                  "providers": {"openai": {"base_url": f"{agent.url}/v1"}}}))
    for name in ("alpha", "beta"):
        path = project / ".replio" / "eval" / f"{name}.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "verifier": {"judge": {"rubric": "It answered."}}}))


def _judge_requests(agent: LLMServer) -> int:
    return sum(1 for r in agent.requests if r.json()["model"] == "judge-model")


def test_max_cost_needs_a_price_for_every_model_the_run_sends_something(project: Path, agent: LLMServer) -> None:
    _judged(project, agent)
    beta = project / ".replio" / "eval" / "beta.json"
    beta.write_text(json.dumps({**json.loads(beta.read_text()),
                                "user": {"instructions": "Ask which files there are.", "provider": "openai:user-model"}}))
    done = _run(_priced(project), agent, "--max-cost", "1")
    assert done.returncode == 2 and not agent.requests
    assert "--max-cost 1.00: no price known for openai:judge-model (judge), openai:user-model (simulated user), so " \
           "what it spends cannot be counted" in done.stderr


def test_rejudge_under_max_cost_estimates_and_counts_only_the_judges_it_sends(project: Path,
                                                                              agent: LLMServer) -> None:
    _judged(project, agent, {"prompt_tokens": 2000, "completion_tokens": 50, "total_tokens": 2050})
    judge_price = {"input": 10.0, "output": 10.0}  # $0.0205 an answer
    _priced(project, {"openai:test-model": PRICE, "openai:judge-model": judge_price})
    recorded = _run(project, agent)
    assert recorded.returncode == 0, recorded.stderr
    fixtures = json.loads(recorded.stdout)["fixtures"]
    assert [f["cost_by_role"]["judge"] for f in fixtures] == [0.0205, 0.0205]
    assert all(f["cost_by_role"]["agent"] > 0.2 for f in fixtures)  # the agent's part: recorded, not sent again

    # the two judges fit $0.05; the agent's recorded $0.44 is neither estimated nor charged again
    rejudged = _run(project, agent, "--rejudge", "--max-cost", "0.05")
    assert rejudged.returncode == 0, rejudged.stderr
    assert "--max-cost 0.05: $0.041 (2 fixtures priced by the token usage of their last recording)" in rejudged.stderr
    assert [f["status"] for f in json.loads(rejudged.stdout)["fixtures"]] == ["ok", "ok"]
    assert _judge_requests(agent) == 4

    # nor does the agent's model need a price: nothing is sent to it
    _priced(project, {"openai:judge-model": judge_price})
    sent = len(agent.requests)
    again = _run(project, agent, "--rejudge", "--max-cost", "0.05")
    assert again.returncode == 0, again.stderr
    assert len(agent.requests) == sent + 2 and _judge_requests(agent) == 6
    refused = _run(project, agent, "--rejudge", "--max-cost", "0.03")
    assert refused.returncode == 2 and "this run is estimated to cost $0.041" in refused.stderr


def test_a_judge_answer_whose_cost_cannot_be_counted_stops_its_fixture_under_max_cost(project: Path,
                                                                                     agent: LLMServer) -> None:
    _judged(project, agent)  # the judge's answers carry no usage
    _priced(project, {"openai:test-model": PRICE, "openai:judge-model": {"input": 1.0, "output": 1.0}})
    done = _run(project, agent, "--max-cost", "5")
    assert done.returncode == 1, done.stderr
    alpha, beta = json.loads(done.stdout)["fixtures"]
    assert alpha["status"] == "cancelled" and alpha["error"].startswith(
        "fixture 'alpha': the judge's answer from openai:judge-model gave no prompt and completion token counts")
    assert beta["status"] == "cancelled" and beta["error"].startswith("not run: --max-cost 5.00: the cost of an "
                                                                      "answer to fixture 'alpha' could not be counted")
    assert not any((project / "cassettes").rglob("*.yaml"))


def _responses_stream(usage: dict[str, int]) -> bytes:
    """A streamed Responses answer, as an agent's SDK asks the relay for it."""
    done = {"id": "r", "object": "response", "status": "completed", "usage": usage,
            "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]}
    events = [{"type": "response.created", "response": {**done, "status": "in_progress", "output": []}},
              {"type": "response.completed", "response": done}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_the_meter_charges_each_live_answer_by_its_format_and_stops_at_one_it_cannot_count(
        llm_server: LLMServer) -> None:
    provider = OpenAIProvider(settings(base_url=f"{llm_server.url}/v1"))
    budget = Budget(1.0, set())
    meter = Meter(budget, "fx", lambda p: Price(input=1000.0, output=1000.0))  # $0.001 a token
    exchange = Exchange("fx", meter.watch(provider, provider.transport()))
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
    llm_server.reply(json={**answer, "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
    assert provider.generate(first_turn(), exchange).text == "hi"  # the answer goes on as it came
    assert budget.spent == 0.11

    # an agent's streamed Responses request through the relay: read by its own format
    llm_server.reply(body=_responses_stream({"input_tokens": 20, "output_tokens": 5}),
                     headers={"content-type": "text/event-stream"})
    url = provider.relay_url("responses")
    assert url is not None and exchange.transport is not None
    streamed = exchange.transport.handle_request(httpx.Request("POST", url, json={"stream": True}))
    assert b"response.completed" in streamed.read() and budget.spent == 0.135

    llm_server.reply(json=answer)  # no usage: what it cost is not counted, and the fixture stops
    with pytest.raises(ProviderResponseError, match="the agent's answer from openai:test-model gave no prompt and "
                                                     "completion token counts"):
        provider.generate(first_turn(), exchange)
    assert meter.uncounted == {"agent"} and budget.uncounted == "fx" and budget.spent == 0.135
    sent = len(llm_server.requests)
    with pytest.raises(ProviderResponseError, match="the recording stopped"):
        provider.generate(first_turn(), exchange)
    assert len(llm_server.requests) == sent  # nothing more is sent
    provider.close()
