"""Cost, pure: the arithmetic, the tables' precedence, and the results that carry it (or leave it out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replio_replay.config import load_project_config
from replio_replay.errors import ConfigError
from replio_replay.judge.metrics import combine_trials, summarize
from replio_replay.judge.results import FixtureResult, RunResult
from replio_replay.prices import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    Price,
    cost,
    dollars,
    price_for,
    price_table,
)
from replio_replay.providers.base import Usage
from replio_replay.run.engine import Transcript
from replio_replay.run.scoring import judge_transcript
from tests.helpers import make_fixture


def test_cost_is_tokens_times_price_per_million() -> None:
    price = Price(input=2.5, output=10.0)
    assert cost(price, 1_000_000, 0) == 2.5
    assert cost(price, 1200, 300) == round((1200 * 2.5 + 300 * 10.0) / 1e6, 6) == 0.006
    assert cost(price, 0, 0) == 0.0


def test_cached_prompt_tokens_cost_the_cached_rate_or_else_the_input_rate() -> None:
    assert cost(Price(input=2.0, output=8.0, cached_input=0.5), 1000, 100, cached=400) == \
        round((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6, 6)
    assert cost(Price(input=2.0, output=8.0), 1000, 100, cached=400) == cost(Price(input=2.0, output=8.0), 1000, 100)
    assert cost(Price(input=2.0, output=8.0, cached_input=0.0), 10, 0, cached=50) == 0.0  # never more than prompt


def test_the_first_table_with_the_model_wins_and_the_config_overlays_the_dated_defaults() -> None:
    mine = Price(input=1.0, output=1.0)
    table = price_table({"openai:gpt-4o": mine})
    assert table["openai:gpt-4o"] == mine and table["openai:gpt-4o-mini"] == DEFAULT_PRICES["openai:gpt-4o-mini"]
    toolset = {"openai:gpt-4o": Price(input=9.0, output=9.0)}
    assert price_for("openai", "gpt-4o", toolset, table) == toolset["openai:gpt-4o"]
    assert price_for("ollama", "qwen2.5", toolset, table) is None  # no price: no cost, never 0
    assert PRICES_AS_OF[:4].isdigit() and len(PRICES_AS_OF) == 10


def test_the_config_s_prices_are_checked(tmp_path: Path) -> None:
    config = tmp_path / ".replio" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"prices": {"openai:gpt-4o": {"input": 1, "output": 2, "cached_input": 0.5}}}))
    assert load_project_config(tmp_path).prices["openai:gpt-4o"] == Price(input=1, output=2, cached_input=0.5)
    for bad in ({"gpt-4o": {"input": 1, "output": 2}}, {"openai:x": {"input": -1, "output": 2}},
                {"openai:x": {"input": 1}}, {"openai:x": {"input": 1, "output": 2, "currency": "EUR"}}):
        config.write_text(json.dumps({"prices": bad}))
        with pytest.raises(ConfigError, match=r"config\.json: .*prices"):
            load_project_config(tmp_path)


def test_a_priced_transcript_costs_what_its_agent_spent_and_an_unpriced_one_has_no_cost() -> None:
    fixture = make_fixture(id="a", task="t")
    price = {"agent": Price(input=3.0, output=15.0)}
    transcript = Transcript(tokens=1500, tokens_by_role={"agent": {"prompt": 1000, "completion": 500}})
    priced = judge_transcript(fixture, transcript, prices=price)
    assert priced.cost == 0.0105 and priced.cost_by_role == {"agent": 0.0105}
    totals_only = Transcript(tokens=1500)
    totals_only.count("agent", Usage(total=1500))
    unknown = judge_transcript(fixture, totals_only, prices=price)
    assert unknown.cost is None and unknown.cost_by_role is None and unknown.cost_unknown == ["agent"]
    unpriced = judge_transcript(fixture, transcript)
    assert unpriced.cost is None and "cost" not in RunResult(
        provider="p", model="m", fixtures=[unpriced], summary=summarize([unpriced])).to_json()["fixtures"][0]


def test_each_role_is_priced_by_the_model_that_spoke_as_it_and_an_unpriced_role_is_left_out() -> None:
    fixture = make_fixture(id="a", task="t")
    transcript = Transcript(tokens=1500, tokens_by_role={
        "agent": {"prompt": 1000, "completion": 500, "cached": 400},
        "user": {"prompt": 2000, "completion": 100},
        "judge": {"prompt": 800, "completion": 20}})
    prices = {"agent": Price(input=3.0, output=15.0, cached_input=0.3), "user": Price(input=0.15, output=0.6)}
    result = judge_transcript(fixture, transcript, prices=prices)
    # agent: 600 x 3 + 400 x 0.3 + 500 x 15; user: 2000 x 0.15 + 100 x 0.6; the judge has no price
    assert result.cost_by_role == {"agent": 0.00942, "user": 0.00036}
    assert result.cost == 0.00978


def test_the_summary_adds_costs_per_role_over_trials_and_leaves_cost_out_when_none_is_known() -> None:
    results = [FixtureResult(id="a", trial=k, cost=0.25, cost_by_role={"agent": 0.25}) for k in (1, 2)]
    results.append(FixtureResult(id="b", cost=0.5, cost_by_role={"agent": 0.4, "judge": 0.1}))
    combined = combine_trials(results)
    assert combined[0].cost == 0.5 and [t.cost for t in combined[0].trials or []] == [0.25, 0.25]
    summary = summarize(combined)
    assert summary.cost == 1.0 and summary.cost_by_role == {"agent": 0.9, "judge": 0.1}
    plain = [FixtureResult(id="a", tokens=10)]
    data = RunResult(provider="p", model="m", fixtures=plain, summary=summarize(plain)).to_json()
    assert "cost" not in data["summary"] and "cost_by_role" not in data["summary"]


def test_a_role_whose_answers_were_not_all_counted_makes_the_fixture_s_cost_unknown() -> None:
    fixture = make_fixture(id="a", task="t")
    transcript = Transcript()
    for usage in (Usage(100, 10), Usage(None, None), Usage(100, 10)):  # one answer without usage
        transcript.count("judge", usage)
    transcript.count("agent", Usage(1000, 500))
    transcript.count("user", Usage(prompt=30))  # no completion count: uncounted, but the user has no price
    prices = {"agent": Price(input=3.0, output=15.0), "judge": Price(input=1.0, output=1.0)}
    result = judge_transcript(fixture, transcript, prices=prices)
    assert result.cost is None and result.cost_by_role is None and result.cost_unknown == ["judge"]
    counted = judge_transcript(fixture, transcript, prices={"agent": prices["agent"]})  # only the agent priced
    assert counted.cost == 0.0105 and counted.cost_unknown is None


def test_the_summary_leaves_the_cost_out_and_counts_the_fixtures_whose_cost_is_unknown() -> None:
    results = [FixtureResult(id="a", trial=1, cost=0.25, cost_by_role={"agent": 0.25}),
               FixtureResult(id="a", trial=2, cost_unknown=["agent"]),
               FixtureResult(id="b", cost=0.5, cost_by_role={"agent": 0.5})]
    combined = combine_trials(results)
    assert combined[0].cost is None and combined[0].cost_unknown == ["agent"]
    assert [t.cost_unknown for t in combined[0].trials or []] == [None, ["agent"]]
    summary = summarize(combined)  # $0.75 counted, and one trial's cost unknown: no total that understates it
    assert summary.cost is None and summary.cost_by_role is None and summary.cost_unknown == 1
    data = RunResult(provider="p", model="m", fixtures=combined, summary=summary).to_json()
    assert data["summary"]["cost_unknown"] == 1 and "cost" not in data["summary"]
    assert data["fixtures"][0]["cost_unknown"] == ["agent"] and "cost" not in data["fixtures"][0]
    assert "cost_unknown" not in data["fixtures"][1] and "cost_unknown" not in data["fixtures"][0]["trials"][0]


@pytest.mark.parametrize(("usd", "shown"), [
    (0, "0.00"), (1, "1.00"), (0.1, "0.10"), (1.0312, "1.0312"), (0.000042, "0.000042"), (0.00001, "0.00001"),
    (0.1 + 0.2, "0.30"),  # float noise past the millionth costs are counted to
    (1e-7, "0.0000001"),  # an amount given finer (a limit) is shown whole, never as 0.00
    (1234.5, "1234.50"),
])
def test_amounts_are_shown_with_as_many_digits_as_they_have(usd: float, shown: str) -> None:
    assert dollars(usd) == shown
