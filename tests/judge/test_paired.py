"""Paired comparisons of runs: each column against the first and each run against its baseline, on
the fixtures both ran, for the pass rate and the accuracy; `--fail-if-worse` fails only on `worse`."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from replio_replay.judge.baseline import FAIL_IF_WORSE, Gate, check_runs
from replio_replay.judge.metrics import summarize
from replio_replay.judge.paired import comparisons
from replio_replay.judge.results import FixtureResult, RunResult


def run(model: str, passed: dict[str, bool]) -> RunResult:
    fixtures = [FixtureResult(id=fid, passed=p, accuracy=float(p)) for fid, p in passed.items()]
    return RunResult(provider="mock", model=model, fixtures=fixtures, summary=summarize(fixtures))


A = run("a", {f"f{i}": i < 4 for i in range(16)})  # 4 of 16 pass
B = run("b", {f"f{i}": i < 15 for i in range(16)} | {"only-in-b": True})  # 15 of 16; one fixture a never ran


def test_a_column_against_the_first_paired_on_the_fixtures_both_ran() -> None:
    found = comparisons([A, B])
    assert [(c["metric"], c["a"], c["b"], c["n"]) for c in found] == [
        ("pass_rate", "mock:a", "mock:b", 16), ("accuracy", "mock:a", "mock:b", 16)]
    c = found[0]
    assert (c["a_only"], c["b_only"], c["test"], c["verdict"]) == (0, 11, "mcnemar-exact", "better")
    assert c["diff"] == round(11 / 16, 6)
    assert c["p_value"] == round(stats.binomtest(0, 11, 0.5).pvalue, 6)
    assert set(c) == {"a", "b", "metric", "n", "diff", "se", "ci95", "p_value", "test", "a_only", "b_only",
                      "verdict", "mde", "needed", "method", "clusters", "resamples", "withheld", "p_adjusted",
                      "adjusted_over"}
    assert (c["method"], c["clusters"], c["resamples"], c["withheld"]) == ("newcombe", 16, None, None)
    assert (c["p_adjusted"], c["adjusted_over"]) == (c["p_value"], 1)  # one comparison of the pass rate


def test_against_a_baseline_a_is_the_baseline_and_diff_is_run_minus_baseline() -> None:
    found = comparisons([A], [B])
    assert found[0]["a"] == "baseline mock:a" and found[0]["b"] == "mock:a"
    assert found[0]["diff"] == -round(11 / 16, 6) and found[0]["verdict"] == "worse"


def test_fail_if_worse_fails_on_a_worse_verdict_only() -> None:
    gate = [Gate(FAIL_IF_WORSE, "pass_rate", 0.0)]
    assert check_runs([B, A], gate, None).failures[0].startswith("mock:a vs mock:b: pass rate -0.69")
    assert check_runs([A, B], gate, None).failures == []  # better
    close = run("c", {f"f{i}": i < 5 for i in range(16)})  # one fixture more than A: noise
    checked = check_runs([A, close], gate, None)
    assert checked.failures == [] and checked.paired[0]["verdict"] == "no detectable difference"
    assert check_runs([A, B], [], None).failures == []  # without the flag, nothing fails


def test_the_table_says_each_comparison_in_one_line() -> None:
    from replio_replay.report.text import comparison_line

    close = run("c", {f"f{i}": i < 5 for i in range(16)})
    c = comparisons([A, close])[0]
    line = comparison_line(c)
    # one fixture of 16 differs: var(d) = 1/16; the fewest n with (t_{n-1,.975} + t_{n-1,.8}) · sd / sqrt(n) <= 1/16
    sd = float(np.std([1] + [0] * 15, ddof=1))
    needed = next(n for n in range(2, 1000)
                  if (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n) <= 1 / 16)
    assert needed == c["needed"] == 128
    mde = (stats.t.ppf(0.975, 15) + stats.t.ppf(0.8, 15)) * sd / 4
    assert c["mde"] == round(mde, 6)
    assert line == ("mock:c vs mock:a: pass rate +0.06 [-0.11, +0.24], p = 1, no detectable difference "
                    f"(detects ±{mde:.2f}; about 128 fixtures for ±0.06)")


def test_several_columns_are_one_family_adjusted_by_holm_and_the_line_says_so() -> None:
    from statsmodels.stats.multitest import multipletests

    from replio_replay.report.text import comparison_line

    mid = run("m", {f"f{i}": i < 10 for i in range(16)})  # 6 more than A: p = 0.031 alone
    found = [c for c in comparisons([A, mid, B]) if c["metric"] == "pass_rate"]
    raw = [c["p_value"] for c in found]
    assert [c["p_adjusted"] for c in found] == [round(p, 6) for p in multipletests(raw, method="holm")[1]]
    assert [c["adjusted_over"] for c in found] == [2, 2]
    # B's p is the smaller, doubled; m's is then taken once (0.031), so both stay better
    assert [c["verdict"] for c in found] == ["better", "better"]
    assert "Holm-adjusted p = " in comparison_line(found[0]) and "over 2 comparisons" in comparison_line(found[0])
    alone = [c for c in comparisons([A, mid]) if c["metric"] == "pass_rate"][0]
    assert "Holm" not in comparison_line(alone)


def test_holm_can_take_a_verdict_back() -> None:
    mid = run("m", {f"f{i}": i < 10 for i in range(16)})  # 6 fixtures better of 16: p = 0.031
    twin = run("t", {f"f{i}": i < 4 or 6 <= i < 12 for i in range(16)})  # 6 others better: p = 0.031
    alone = comparisons([A, mid])[0]
    assert alone["p_value"] == round(stats.binomtest(6, 6, 0.5).pvalue, 6) and alone["verdict"] == "better"
    both = [c for c in comparisons([A, mid, twin]) if c["metric"] == "pass_rate"]
    assert [c["p_adjusted"] for c in both] == [0.0625, 0.0625]
    assert [c["verdict"] for c in both] == ["no detectable difference"] * 2


def test_fail_if_worse_fails_when_nothing_pairs_naming_why() -> None:
    gate = [Gate(FAIL_IF_WORSE, "pass_rate", 0.0)]
    renamed = run("a", {f"renamed-{i}": False for i in range(16)})
    checked = check_runs([renamed], gate, [run("a", {f"f{i}": True for i in range(16)})])
    assert checked.paired == [] and len(checked.failures) == 1
    assert "none of the run's 16 fixture ids is among the 16 of baseline mock:a (fixtures renamed?)" in checked.failures[0]
    assert "--fail-if-worse cannot be checked" in checked.failures[0]
    alone = check_runs([A], gate, None).failures
    assert alone == ["--fail-if-worse has nothing to compare: give a --baseline, or several runs with --compare "
                     "or --tools"]


def test_a_withheld_verdict_is_said_and_the_gate_does_not_fail_on_it() -> None:
    def grouped(model: str, passed: bool) -> RunResult:
        fixtures = [FixtureResult(id=f"f{i}", passed=passed, group=f"g{i % 2}") for i in range(12)]
        return RunResult(provider="mock", model=model, fixtures=fixtures, summary=summarize(fixtures))

    checked = check_runs([grouped("a", True), grouped("b", False)], [Gate(FAIL_IF_WORSE, "pass_rate", 0.0)], None)
    c = checked.paired[0]
    assert (c["verdict"], c["clusters"], c["test"]) == ("withheld", 2, "sign-flip-exact-clustered")
    assert checked.failures == []
    assert checked.notes == [f"mock:b vs mock:a: pass rate verdict withheld ({c['withheld']}); --fail-if-worse did "
                             "not fail on it"]
    from replio_replay.report.text import comparison_line
    assert "verdict withheld: only 2 clusters" in comparison_line(c)


def test_an_empty_run_is_not_gated_and_says_why() -> None:
    from replio_replay.judge.baseline import parse_gates

    empty = RunResult(provider="mock", model="a", fixtures=[], summary=summarize([]))
    checked = check_runs([empty], parse_gates("--fail-under", ["pass_rate=0.8"]), None)
    assert checked.failures == []
    assert checked.notes == ["no fixture ran (an empty shard?), so --fail-under was not checked: hold the merged "
                             "shards to it (replio eval merge ... with the same flags)"]


def test_a_monte_carlo_comparison_says_its_draws() -> None:
    from replio_replay.report.text import comparison_line

    c = {**comparisons([A, B])[0], "test": "sign-flip-monte-carlo", "resamples": 100000}
    assert ", p = 0.00098 (Monte Carlo, 100000 sign flips), better (" in comparison_line(c)
