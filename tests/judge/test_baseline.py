"""Baselines and score gates, pure: gate specs, metrics, regressions first, the contract's lines."""

from __future__ import annotations

from typing import Any

import pytest

from replio_replay.errors import UsageError
from replio_replay.judge.baseline import (
    Gate,
    check_runs,
    compare,
    failed_gates,
    match_runs,
    metric_value,
    parse_gates,
)
from replio_replay.judge.metrics import combine_trials, summarize
from replio_replay.judge.results import FixtureResult, RunResult


def run(model: str, *results: FixtureResult, tools: str = "default") -> RunResult:
    fixtures = list(results)
    return RunResult(provider="mock", model=model, tools=tools, fixtures=fixtures, summary=summarize(fixtures))


def fx(fid: str, passed: bool, **data: Any) -> FixtureResult:
    return FixtureResult(id=fid, passed=passed, **data)


def trials(fid: str, *passed: bool) -> list[FixtureResult]:
    return [fx(fid, p, trial=k) for k, p in enumerate(passed, start=1)]


def test_fixtures_that_passed_in_the_baseline_and_fail_now_are_the_regressions_in_run_order() -> None:
    before = run("m", fx("a", True), fx("b", True), fx("c", False), fx("d", True))
    now = run("m", fx("a", True), fx("b", False), fx("c", True), fx("d", False), fx("e", False))
    comparison = compare(now, before, "base.json")
    assert [(c.id, c.before, c.now) for c in comparison.regressed] == [("b", "pass", "FAIL"), ("d", "pass", "FAIL")]
    assert [c.id for c in comparison.fixed] == ["c"]
    assert comparison.verdicts == {"a": "pass", "b": "pass", "c": "FAIL", "d": "pass"}  # e is new: not there


def test_over_trials_a_fixture_whose_share_of_passes_fell_regressed() -> None:
    before = run("m", *combine_trials([*trials("a", True, True, True), *trials("b", True, False, True)]))
    now = run("m", *combine_trials([*trials("a", True, False, True), *trials("b", True, False, True)]))
    comparison = compare(now, before, "base.json")
    assert [(c.id, c.before, c.now) for c in comparison.regressed] == [("a", "3/3", "2/3")]
    assert metric_value(before.summary, "pass^3") == 0.5 and metric_value(now.summary, "pass^3") == 0.0
    assert metric_value(now.summary, "pass^k") == metric_value(now.summary, "pass^3")


def test_the_failed_gate_lines_are_the_contract_s() -> None:
    before = run("m", *(fx(i, i != "e") for i in "abcde"), )
    now = run("m", *(fx(i, i in "abc", tokens=100) for i in "abcde"))
    assert before.summary.pass_rate == 0.8 and now.summary.pass_rate == 0.6
    gates = [Gate("--max-drop", "pass_rate", 0.05), Gate("--max-drop", "tokens", 100),
             Gate("--fail-under", "pass_rate", 0.7), Gate("--fail-over", "tokens", 400)]
    assert failed_gates(gates, now.summary, before.summary) == [
        "pass_rate 0.80 -> 0.60 (-0.20 > 0.05)",
        "tokens 0 -> 500 (+500 > 100)",
        "pass_rate 0.60 < 0.70 (--fail-under)",
        "tokens 500 > 400 (--fail-over)",
    ]


def test_gates_that_hold_say_nothing_and_a_better_run_never_fails_max_drop() -> None:
    before = run("m", fx("a", True, tokens=900), fx("b", False, tokens=900))
    now = run("m", fx("a", True, tokens=100), fx("b", True, tokens=100))
    gates = parse_gates("--max-drop", ["pass_rate=0", "tokens=0", "errors=0"]) + \
        parse_gates("--fail-under", ["pass_rate=1"]) + parse_gates("--fail-over", ["tokens=200", "errors=0"])
    assert failed_gates(gates, now.summary, before.summary) == []


def test_a_gate_on_a_metric_not_measured_fails_saying_so() -> None:
    now = run("m", fx("a", True))  # no expected calls, one trial, no price
    lines = failed_gates(parse_gates("--fail-under", ["accuracy=0.5", "pass^3=0.5"])
                         + parse_gates("--fail-over", ["cost=1"]), now.summary, None)
    assert lines[0].startswith("accuracy not measured by this run") and "expected" in lines[0]
    assert lines[1].startswith("pass^3 not measured by this run") and "--trials" in lines[1]
    assert lines[2].startswith("cost not measured by this run") and '"prices"' in lines[2]
    assert failed_gates(parse_gates("--max-drop", ["pass_rate=0.1"]), now.summary, None) == [
        "pass_rate not in the baseline: --max-drop pass_rate cannot be checked (give a baseline that measured it)"]


def test_cost_gates_read_in_dollars() -> None:
    before = run("m", fx("a", True, cost=0.5))
    now = run("m", fx("a", True, cost=1.25))
    assert failed_gates(parse_gates("--max-drop", ["cost=0.5"]), now.summary, before.summary) == [
        "cost 0.50 -> 1.25 (+0.75 > 0.50)"]


@pytest.mark.parametrize(("flag", "spec", "said"), [
    ("--max-drop", "pass_rat=0.05", "unknown metric 'pass_rat'; did you mean 'pass_rate'?"),
    ("--fail-under", "cost=1", "--fail-under does not take cost (it gets better as it goes down); use --fail-over cost=1"),
    ("--fail-over", "pass_rate=0.5", "use --fail-under pass_rate=0.5"),
    ("--fail-under", "pass_rate", "expected METRIC=X, e.g. --fail-under pass_rate=0.8"),
    ("--fail-under", "pass_rate=1.5", "'1.5' is not a number from 0 to 1"),
    ("--max-drop", "tokens=-3", "'-3' is not a number, 0 or more"),
    ("--max-drop", "tokens=nan", "'nan' is not a number, 0 or more"),
    ("--fail-over", "errors=lots", "'lots' is not a number, 0 or more"),
    ("--fail-under", "pass^0=0.5", "unknown metric 'pass^0'"),
])
def test_a_bad_gate_is_a_usage_error_naming_it(flag: str, spec: str, said: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_gates(flag, [spec])
    assert f"{flag} {spec!r}: " in str(exc.value) and said in str(exc.value)


def test_runs_are_matched_by_provider_model_and_tools_and_a_lone_baseline_stands_for_a_lone_run() -> None:
    a, b, a_lite = run("a", fx("x", True)), run("b", fx("x", True)), run("a", fx("x", True), tools="lite")
    assert match_runs([b, a, a_lite], [a, b]) == [b, a, None]
    assert match_runs([b], [a]) == [a]  # one model against another
    checked = check_runs([b, a_lite], [Gate("--max-drop", "pass_rate", 0.1)], [a, b], "base.json")
    assert checked.unmatched == ["mock:a tools=lite"]
    assert checked.failures == ["mock:a tools=lite: pass_rate not in the baseline: --max-drop pass_rate cannot be "
                                "checked (give a baseline that measured it)"]


def test_the_comparison_s_json_gives_every_metric_before_and_now() -> None:
    before = run("m", fx("a", True, tokens=10, cost=0.1), fx("b", True, tokens=10, cost=0.1))
    now = run("m", fx("a", True, tokens=10, cost=0.1), fx("b", False, tokens=30, cost=0.3))
    data = compare(now, before, "base.json").to_json(now.summary)
    assert data == {
        "file": "base.json", "run": "mock:m", "regressed": ["b"], "fixed": [],
        "metrics": {"pass_rate": {"baseline": 1.0, "now": 0.5}, "errors": {"baseline": 0, "now": 0},
                    "tokens": {"baseline": 20, "now": 40}, "cost": {"baseline": 0.2, "now": 0.4}},
    }


def test_large_counts_are_written_whole() -> None:
    before = run("m", fx("a", True, tokens=1_000_000))
    now = run("m", fx("a", True, tokens=2_500_000))
    assert failed_gates(parse_gates("--max-drop", ["tokens=0"]), now.summary, before.summary) == [
        "tokens 1000000 -> 2500000 (+1500000 > 0)"]
