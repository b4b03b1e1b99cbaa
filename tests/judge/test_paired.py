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
                      "verdict", "mde", "needed"}


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
    line = comparison_line(comparisons([A, close])[0])
    # one fixture of 16 differs: var(d) = (1/16)(15/16)·16/15 = 1/16, so (1.96 + 0.84)² · (1/16) / (1/16)² fixtures
    needed = math.ceil((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2 * np.var([1] + [0] * 15, ddof=1) / (1 / 16) ** 2)
    assert needed == 126
    assert line == ("mock:c vs mock:a: pass rate +0.06 [-0.06, +0.18], p = 1, no detectable difference "
                    "(detects ±0.18; about 126 fixtures for ±0.06)")
