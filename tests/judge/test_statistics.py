"""Error bars and paired comparisons, each figure computed again by scipy and statsmodels (to 1e-9),
on hand-made and random inputs: 0 and 1 rates, one fixture, trials, clusters of unequal size."""

from __future__ import annotations

import random

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from replio_replay.judge.statistics import compare, estimate, mcnemar_p, needed_fixtures, wilson

TOL = 1e-9


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 20), (20, 20), (11, 20), (3, 7), (150, 151)])
def test_wilson_is_statsmodels_wilson(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert wilson(k, n) == pytest.approx((low, high), abs=TOL)


def test_a_pass_rate_without_trials_is_wilson_and_by_hand() -> None:
    # 13 of 20 pass: p = 0.65, se = sqrt(0.65 * 0.35 / 20) = 0.10665
    e = estimate([[1.0]] * 13 + [[0.0]] * 7)
    assert (e.value, e.method) == (0.65, "wilson")
    assert e.se == pytest.approx((0.65 * 0.35 / 20) ** 0.5, abs=TOL)
    assert e.ci95 == pytest.approx(proportion_confint(13, 20, method="wilson"), abs=TOL)
    assert estimate([[1.0]] * 5).ci95[1] == 1.0 and estimate([[1.0]] * 5).se == 0.0  # every fixture passes


def _random_scores(rng: random.Random, n: int, trials: int) -> list[list[float]]:
    return [[float(rng.random() < q) for _ in range(trials)] for q in (rng.random() for _ in range(n))]


@pytest.mark.parametrize("seed", range(6))
def test_with_trials_the_standard_error_is_the_clt_one_over_fixture_means(seed: int) -> None:
    rng = random.Random(seed)
    scores = _random_scores(rng, rng.randint(2, 40), rng.randint(2, 5))
    means = [sum(s) / len(s) for s in scores]
    e = estimate(scores)
    assert e.method == "clt"
    assert e.value == pytest.approx(float(np.mean(means)), abs=TOL)
    assert e.se == pytest.approx(float(stats.sem(means)), abs=TOL)
    low, high = stats.norm.interval(0.95, loc=np.mean(means), scale=stats.sem(means))
    assert e.ci95 == pytest.approx((max(0.0, low), min(1.0, high)), abs=TOL)


@pytest.mark.parametrize("seed", range(6))
def test_clustered_standard_error_is_statsmodels_cluster_robust_one(seed: int) -> None:
    rng = random.Random(100 + seed)
    n = rng.randint(4, 40)
    scores = _random_scores(rng, n, rng.randint(1, 4))
    groups = [rng.choice(["a", "b", "c", None]) for _ in range(n)]  # unequal clusters, some alone
    means = np.array([sum(s) / len(s) for s in scores])
    ids = [g if g is not None else f"alone-{i}" for i, g in enumerate(groups)]
    codes = np.unique(ids, return_inverse=True)[1]
    fit = sm.OLS(means, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": codes, "use_correction": False})
    e = estimate(scores, groups)
    assert e.method == "clustered"
    assert e.se == pytest.approx(float(fit.bse[0]), abs=TOL)


def test_the_edges_one_fixture_and_identical_trials() -> None:
    one = estimate([[1.0, 0.0, 1.0]])
    assert one.value == pytest.approx(2 / 3) and one.ci95 == (0.0, 1.0) and one.method == "clt"
    single = compare([[1.0]], [[0.0]])
    assert (single.ci95, single.mde, single.p_value, single.verdict) == ((-1.0, 1.0), 1.0, 1.0,
                                                                        "no detectable difference")
    same = estimate([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]])  # all trials identical: the fixtures still vary
    assert same.se == pytest.approx(float(stats.sem([1.0, 0.0, 1.0])), abs=TOL)


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_every_fixture_scoring_the_same_gets_the_wilson_interval_not_a_width_of_zero(score: float) -> None:
    trials = estimate([[score] * 3] * 5)
    low, high = proportion_confint(int(score) * 5, 5, alpha=0.05, method="wilson")
    assert (trials.se, trials.method) == (0.0, "wilson") and trials.ci95 == pytest.approx((low, high), abs=TOL)
    assert trials.ci95[1] - trials.ci95[0] > 0.4
    grouped = estimate([[score]] * 6, ["a", "a", "a", "b", "b", None])  # three clusters, so Wilson over 3
    low, high = proportion_confint(int(score) * 3, 3, alpha=0.05, method="wilson")
    assert grouped.method == "wilson" and grouped.ci95 == pytest.approx((low, high), abs=TOL)


def test_paired_differences_without_spread_take_the_exact_sign_test_and_no_mde() -> None:
    a, b = [[0.0, 0.0]] * 6, [[0.5, 0.5]] * 6  # every fixture half a trial better: no variance
    c = compare(a, b)
    assert (c.test, c.mde, c.diff) == ("sign-exact", None, 0.5)
    assert c.p_value == pytest.approx(stats.binomtest(6, 6, 0.5).pvalue, abs=TOL)
    assert c.verdict == "better"
    few = compare(a[:4], b[:4])  # four fixtures all better is still p = 0.125: not enough
    assert few.p_value == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue, abs=TOL)
    assert few.verdict == "no detectable difference"


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (0, 5), (3, 1), (7, 2), (10, 10), (0, 40)])
def test_mcnemar_exact_is_a_two_sided_binomial_test(a_only: int, b_only: int) -> None:
    expected = 1.0 if a_only + b_only == 0 else stats.binomtest(b_only, a_only + b_only, 0.5).pvalue
    assert mcnemar_p(a_only, b_only) == pytest.approx(expected, abs=TOL)
    from statsmodels.stats.contingency_tables import mcnemar
    if a_only + b_only:
        assert mcnemar_p(a_only, b_only) == pytest.approx(mcnemar([[5, a_only], [b_only, 5]], exact=True).pvalue,
                                                          abs=TOL)


def test_a_paired_pass_fail_comparison_by_hand() -> None:
    # 20 fixtures: 9 pass in both, 2 in a only, 6 in b only, 3 in neither
    a = [[1.0]] * 9 + [[1.0]] * 2 + [[0.0]] * 6 + [[0.0]] * 3
    b = [[1.0]] * 9 + [[0.0]] * 2 + [[1.0]] * 6 + [[0.0]] * 3
    c = compare(a, b)
    assert (c.n, c.a_only, c.b_only, c.test) == (20, 2, 6, "mcnemar-exact")
    assert c.diff == pytest.approx(0.2) and c.p_value == pytest.approx(stats.binomtest(2, 8, 0.5).pvalue, abs=TOL)
    d = np.array([0.0] * 9 + [-1.0] * 2 + [1.0] * 6 + [0.0] * 3)
    assert c.se == pytest.approx(float(stats.sem(d)), abs=TOL)
    assert c.ci95 == pytest.approx(stats.norm.interval(0.95, loc=d.mean(), scale=stats.sem(d)), abs=TOL)
    assert c.verdict == "no detectable difference"  # p = 0.289
    assert c.mde == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * stats.sem(d), abs=TOL)
    assert compare([[0.0]] * 12, [[1.0]] * 12).verdict == "better"
    assert compare([[1.0]] * 12, [[0.0]] * 12).verdict == "worse"


@pytest.mark.parametrize("seed", range(6))
def test_with_trials_the_paired_test_is_a_z_test_on_the_mean_difference(seed: int) -> None:
    rng = random.Random(200 + seed)
    n, k = rng.randint(3, 30), rng.randint(2, 4)
    a, b = _random_scores(rng, n, k), _random_scores(rng, n, k)
    d = np.array([sum(y) / k - sum(x) / k for x, y in zip(a, b)])
    c = compare(a, b)
    se = stats.sem(d)
    assert c.test == "paired-z" and c.se == pytest.approx(float(se), abs=TOL)
    assert c.p_value == pytest.approx(float(2 * stats.norm.sf(abs(d.mean()) / se)) if se else 1.0, abs=TOL)
    assert c.ci95 == pytest.approx(stats.norm.interval(0.95, loc=d.mean(), scale=se), abs=TOL)


def test_how_many_fixtures_a_difference_needs() -> None:
    c = compare([[0.0, 1.0]] * 10 + [[1.0, 1.0]] * 10, [[1.0, 1.0]] * 10 + [[0.0, 1.0]] * 10)
    variance = float(np.var([0.5] * 10 + [-0.5] * 10, ddof=1))
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert needed_fixtures(c, 0.08) == int(np.ceil(z ** 2 * variance / 0.08 ** 2))
    assert needed_fixtures(compare([[1.0]] * 3, [[1.0]] * 3), 0.1) is None


def test_the_summary_carries_each_rates_error_bar_and_its_method() -> None:
    from replio_replay.judge.metrics import combine_trials, summarize
    from replio_replay.judge.results import FixtureResult

    plain = summarize([FixtureResult(id=f"f{i}", passed=i < 13) for i in range(20)])
    assert plain.ci_method == {"pass_rate": "wilson"} and plain.se == {"pass_rate": 0.106654}
    assert plain.ci95 == {"pass_rate": (0.432854, 0.818808)}
    grouped = summarize([FixtureResult(id=f"f{i}", passed=i < 13, group="ab"[i % 2] if i < 6 else None,
                                       accuracy=float(i < 10)) for i in range(20)])
    assert grouped.ci_method == {"pass_rate": "clustered", "accuracy": "clustered"}
    passes = {"a": [True, True, False], "b": [True] * 3, "c": [False] * 3}
    trials = summarize(combine_trials([FixtureResult(id=f, passed=p, trial=k) for f, ps in passes.items()
                                       for k, p in enumerate(ps, 1)]))
    assert trials.ci_method == {"pass_rate": "clt", "pass^1": "clt", "pass^2": "clt", "pass^3": "clt"}
    assert trials.se is not None and trials.se["pass_rate"] == pytest.approx(float(stats.sem([2 / 3, 1, 0])), abs=1e-6)


def test_the_worked_examples_of_the_error_bars_page() -> None:
    """docs/explanation/error-bars.md, each figure as printed there."""
    w = estimate([[1.0]] * 13 + [[0.0]] * 7)
    assert (round(w.se, 4), round(w.ci95[0], 3), round(w.ci95[1], 3)) == (0.1067, 0.433, 0.819)
    assert round(estimate([[1.0]] * 20).ci95[0], 3) == 0.839 and round(estimate([[1.0]]).ci95[0], 3) == 0.207
    t = estimate([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert (round(t.value, 3), round(t.se, 3), round(t.ci95[0], 3), round(t.ci95[1], 3)) == (0.5, 0.215, 0.078, 0.922)
    g = estimate([[1.0], [1.0], [0.0], [1.0], [0.0], [0.0]], ["a", "a", "a", "b", "b", None])
    assert round(g.se, 3) == 0.118
    a = [[1.0]] * 9 + [[1.0]] * 2 + [[0.0]] * 6 + [[0.0]] * 3
    b = [[1.0]] * 9 + [[0.0]] * 2 + [[1.0]] * 6 + [[0.0]] * 3
    c = compare(a, b)
    assert (round(c.p_value, 3), round(c.ci95[0], 2), round(c.ci95[1], 2), round(c.mde, 2)) == (0.289, -0.07, 0.47, 0.39)
    assert needed_fixtures(c, 0.10) == 298
    assert needed_fixtures(c, abs(c.diff)) == 75  # the table's "about 75 fixtures for ±0.20"
