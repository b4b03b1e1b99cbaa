"""Error bars and paired comparisons, each figure computed again by a reference — scipy's
`permutation_test`, `t` and `binomtest`, statsmodels' Wilson interval, cluster-robust OLS (its
default correction) and Holm — on hand-made and random inputs, at the sizes suites have (3, 5 and 12
fixtures; 2 and 3 clusters), and Newcombe's interval against a published worked example."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from replio_replay.judge.statistics import (
    MIN_CLUSTERS,
    RESAMPLES,
    compare,
    estimate,
    holm,
    mcnemar_p,
    needed_fixtures,
    newcombe,
    sign_flip,
    t_quantile,
    wilson,
)

TOL = 1e-9
SIZES = [3, 5, 12]


def _random_scores(rng: random.Random, n: int, trials: int) -> list[list[float]]:
    return [[float(rng.random() < q) for _ in range(trials)] for q in (rng.random() for _ in range(n))]


def _means(scores: list[list[float]]) -> np.ndarray:
    return np.array([sum(s) / len(s) for s in scores])


def _permutation_p(values: np.ndarray) -> float:
    """scipy's exact sign-flip test (one sample, permutation_type='samples') of the sum of `values`,
    scaled to whole numbers first (differences of trial means are multiples of 1/6 here) so that
    scipy's float sums see ties as ties."""
    if len(values) < 2:  # scipy wants two; one value's two flips are both as extreme as it
        return 1.0
    whole = np.round(np.asarray(values, dtype=float) * 60)
    return float(stats.permutation_test((whole,), np.sum, permutation_type="samples", n_resamples=np.inf,
                                        alternative="two-sided").pvalue)


def _cluster_fit(values: np.ndarray, groups: list[str | None]) -> object:
    """statsmodels' OLS of `values` on a constant, cluster-robust with its default (CR1) correction,
    t inference on G - 1 degrees of freedom."""
    ids = [g if g is not None else f"alone-{i}" for i, g in enumerate(groups)]
    codes = np.unique(ids, return_inverse=True)[1]
    return sm.OLS(values, np.ones(len(values))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)


# -- single rates --------------------------------------------------------------------------------

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


@pytest.mark.parametrize("df", [1, 2, 3, 4, 11, 29, 120, 10_000])
def test_the_t_quantiles_are_scipys(df: int) -> None:
    for p in (0.8, 0.975):
        assert t_quantile(p, df) == pytest.approx(float(stats.t.ppf(p, df)), abs=1e-9)


def _t_interval(means: np.ndarray) -> tuple[float, float]:
    low, high = stats.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=stats.sem(means))
    return max(0.0, float(low)), min(1.0, float(high))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_with_trials_the_interval_is_the_t_one_over_fixture_means(n: int, seed: int) -> None:
    rng = random.Random(seed * 100 + n)
    scores = _random_scores(rng, n, rng.randint(2, 5))
    means = _means(scores)
    e = estimate(scores)
    if stats.sem(means) == 0:
        return
    assert e.method == "t" and e.value == pytest.approx(float(means.mean()), abs=TOL)
    assert e.se == pytest.approx(float(stats.sem(means)), abs=TOL)
    expected = _t_interval(means)
    if all(m in (0.0, 1.0) for m in means):  # fixtures that all pass or all fail: never narrower than Wilson's
        w = proportion_confint(int(means.sum()), n, method="wilson")
        expected = (min(expected[0], w[0]), max(expected[1], w[1]))
    assert e.ci95 == pytest.approx(expected, abs=TOL)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=4), min_size=2, max_size=30))
def test_any_rate_interval_holds_the_t_one_and_stays_in_0_1(scores: list[list[float]]) -> None:
    means = _means(scores)
    e = estimate(scores)
    assert 0.0 <= e.ci95[0] <= e.value <= e.ci95[1] <= 1.0
    if stats.sem(means) > 0:
        low, high = _t_interval(means)
        assert e.ci95[0] <= low + TOL and e.ci95[1] >= high - TOL


def test_a_pass_hat_k_resting_on_one_fixture_of_15_is_no_narrower_than_wilson() -> None:
    e = estimate([[1.0]] + [[0.0]] * 14, wilson_ok=False)  # pass^k: one fixture passes every trial
    low, high = proportion_confint(1, 15, method="wilson")
    assert e.method == "t" and e.ci95[1] >= high - TOL and e.ci95[0] <= low + TOL
    t_high = _t_interval(np.array([1.0] + [0.0] * 14))[1]
    assert t_high < high  # what the t interval alone would have claimed
    e = estimate([[1.0]] + [[1 / 3]] + [[0.0]] * 13, wilson_ok=False)
    assert e.ci95[1] >= wilson(4 / 3, 15)[1] - TOL


@pytest.mark.parametrize("clusters", [2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_clustered_rates_are_statsmodels_cluster_robust_ols_with_its_default_correction(clusters: int,
                                                                                        seed: int) -> None:
    rng = random.Random(500 + 10 * clusters + seed)
    n = rng.randint(clusters + 1, 20)
    scores = _random_scores(rng, n, 3)
    groups = [f"g{i % clusters}" for i in range(n)]
    means = _means(scores)
    e = estimate(scores, groups)
    fit = _cluster_fit(means, groups)
    if fit.bse[0] < 1e-12:
        return
    assert e.method == "t-clustered"
    assert e.se == pytest.approx(float(fit.bse[0]), abs=TOL)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert e.ci95 == pytest.approx((max(0.0, low), min(1.0, high)), abs=TOL)


@pytest.mark.parametrize("seed", range(4))
def test_clustered_with_fixtures_alone_is_statsmodels_too(seed: int) -> None:
    rng = random.Random(700 + seed)
    n = rng.randint(6, 30)
    scores = _random_scores(rng, n, rng.randint(2, 4))
    groups = [rng.choice(["a", "b", "c", None]) for _ in range(n)]  # unequal clusters, some alone
    fit = _cluster_fit(_means(scores), groups)
    assert estimate(scores, groups).se == pytest.approx(float(fit.bse[0]), abs=TOL)


@pytest.mark.parametrize("n", SIZES)
def test_a_group_given_to_one_fixture_does_not_narrow_anything(n: int) -> None:
    rng = random.Random(n)
    scores = _random_scores(rng, n, 3)
    other = _random_scores(rng, n, 3)
    grouped = ["only"] + [None] * (n - 1)
    assert estimate(scores, grouped).ci95 == pytest.approx(estimate(scores).ci95, abs=TOL)
    assert estimate(scores, grouped).se == pytest.approx(estimate(scores).se, abs=TOL)
    plain, alone = compare(scores, other), compare(scores, other, grouped)
    assert (alone.se, alone.p_value) == pytest.approx((plain.se, plain.p_value), abs=TOL)
    assert alone.ci95 == pytest.approx(plain.ci95, abs=TOL)


def test_the_edges_one_fixture_and_identical_trials() -> None:
    one = estimate([[1.0, 0.0, 1.0]])
    assert one.value == pytest.approx(2 / 3) and one.ci95 == (0.0, 1.0) and one.method == "t"
    assert estimate([[1.0, 0.0], [0.0, 0.0]], ["g", "g"]).ci95 == (0.0, 1.0)  # one cluster: as one fixture
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


# -- the sign-flip permutation test ---------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_the_exact_sign_flip_test_is_scipys_permutation_test(n: int, seed: int) -> None:
    rng = random.Random(900 + 10 * n + seed)
    d = [Fraction(rng.randint(-3, 3), 3) for _ in range(n)]
    p, draws = sign_flip(d)
    assert draws is None
    assert p == pytest.approx(_permutation_p(np.array([float(x) for x in d])), abs=TOL)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.fractions(min_value=-1, max_value=1, max_denominator=6), min_size=1, max_size=12))
def test_the_exact_sign_flip_test_is_scipys_on_random_differences(d: list[Fraction]) -> None:
    p, draws = sign_flip(d)
    assert draws is None
    assert p == pytest.approx(_permutation_p(np.array([float(x) for x in d])), abs=1e-9)


def test_no_exact_test_of_3_fixtures_goes_below_a_quarter() -> None:
    assert sign_flip([Fraction(-1)] * 3) == (0.25, None)
    assert sign_flip([Fraction(0)] * 5) == (1.0, None)


def test_past_the_exact_budget_a_fixed_seed_monte_carlo_that_agrees_with_scipys() -> None:
    rng = random.Random(3)
    primes = (7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83)
    d = [Fraction(rng.randint(1, p - 1), p) * rng.choice([-1, 1]) for p in primes] * 2  # no common grid
    d.append(Fraction(3, 5))
    p, draws = sign_flip(d)
    assert draws == RESAMPLES and sign_flip(d) == (p, draws)  # the same p every time
    values = np.array([float(x) for x in d])
    reference = stats.permutation_test((values,), np.mean, permutation_type="samples", n_resamples=20_000,
                                       alternative="two-sided", random_state=np.random.default_rng(11)).pvalue
    # within the two estimates' noise (scipy's 20,000 draws: 0.003) and the four standard errors added (0.005)
    assert abs(p - reference) < 0.02 and p >= reference - 0.01
    assert compare([[0.0]] * len(d), [[0.0]] * len(d)).test == "mcnemar-exact"


# -- paired comparisons ---------------------------------------------------------------------------

@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (0, 5), (3, 1), (7, 2), (10, 10), (0, 40)])
def test_mcnemar_exact_is_a_two_sided_binomial_test(a_only: int, b_only: int) -> None:
    expected = 1.0 if a_only + b_only == 0 else stats.binomtest(b_only, a_only + b_only, 0.5).pvalue
    assert mcnemar_p(a_only, b_only) == pytest.approx(expected, abs=TOL)
    from statsmodels.stats.contingency_tables import mcnemar
    if a_only + b_only:
        assert mcnemar_p(a_only, b_only) == pytest.approx(mcnemar([[5, a_only], [b_only, 5]], exact=True).pvalue,
                                                          abs=TOL)


def test_newcombes_interval_is_the_published_one() -> None:
    """Fagerland, Lydersen and Laake (2014, Stat Methods Med Res; and their 2017 book, ch. 8): complete
    response before and after consolidation therapy (Cavo et al. 2012), 59, 6, 16, 80: Newcombe's
    square-and-add interval -0.0621 (-0.1186 to -0.0046)."""
    low, high = newcombe(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


def _newcombe_by_hand(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Newcombe's method 10 written again from the paper, with statsmodels' Wilson intervals."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, method="wilson")
    l2, u2 = proportion_confint(a + c, n, method="wilson")
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    phi = 0.0 if denominator == 0 else (max(cross - n / 2, 0) if cross >= 0 else cross) / np.sqrt(denominator)
    delta = np.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    epsilon = np.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return p1 - p2 - delta, p1 - p2 + epsilon


@settings(max_examples=40, deadline=None)
@given(st.tuples(*[st.integers(0, 15)] * 4).filter(lambda t: sum(t) > 0))
def test_newcombes_interval_on_random_tables(table: tuple[int, int, int, int]) -> None:
    low, high = newcombe(*table)
    assert (low, high) == pytest.approx(_newcombe_by_hand(*table), abs=1e-9)
    n = sum(table)
    assert -1.0 <= low <= (table[1] - table[2]) / n <= high <= 1.0 and high > low


def test_a_paired_pass_fail_comparison_by_hand() -> None:
    # 20 fixtures: 9 pass in both, 2 in a only, 6 in b only, 3 in neither
    a = [[1.0]] * 9 + [[1.0]] * 2 + [[0.0]] * 6 + [[0.0]] * 3
    b = [[1.0]] * 9 + [[0.0]] * 2 + [[1.0]] * 6 + [[0.0]] * 3
    c = compare(a, b)
    assert (c.n, c.a_only, c.b_only, c.test, c.method) == (20, 2, 6, "mcnemar-exact", "newcombe")
    assert c.diff == pytest.approx(0.2) and c.p_value == pytest.approx(stats.binomtest(2, 8, 0.5).pvalue, abs=TOL)
    d = np.array([0.0] * 9 + [-1.0] * 2 + [1.0] * 6 + [0.0] * 3)
    assert c.se == pytest.approx(float(stats.sem(d)), abs=TOL)
    assert c.ci95 == pytest.approx(_newcombe_by_hand(9, 6, 2, 3), abs=TOL)
    assert c.p_value == pytest.approx(_permutation_p(d[d != 0]), abs=TOL)  # McNemar's exact is the sign-flip test
    assert c.verdict == "no detectable difference"  # p = 0.289
    assert c.mde == pytest.approx((stats.t.ppf(0.975, 19) + stats.t.ppf(0.8, 19)) * stats.sem(d), abs=TOL)
    assert compare([[0.0]] * 12, [[1.0]] * 12).verdict == "better"
    assert compare([[1.0]] * 12, [[0.0]] * 12).verdict == "worse"


def test_the_issues_reproductions_are_not_worse() -> None:
    # 3 fixtures × 3 trials, two going 3/3 -> 0/3: the z-test said p = 0.045, worse
    a = [[1.0] * 3, [1.0] * 3, [0.0, 1.0, 0.0]]
    b = [[0.0] * 3, [0.0] * 3, [0.0, 1.0, 0.0]]
    c = compare(a, b)
    assert (c.test, c.p_value, c.verdict) == ("sign-flip-exact", 0.5, "no detectable difference")
    assert c.p_value == pytest.approx(_permutation_p(np.array([-1.0, -1.0, 0.0])), abs=TOL)
    assert -1.0 <= c.ci95[0] <= c.diff <= c.ci95[1] <= 1.0 and c.ci95[1] > 0  # the interval agrees: 0 is in it
    one = compare([[1.0], [1.0], [0.0]], [[0.0], [0.0], [0.0]])  # one trial: McNemar's
    assert (one.test, one.p_value, one.verdict) == ("mcnemar-exact", 0.5, "no detectable difference")
    assert one.ci95[0] >= -1.0 and one.ci95[1] > 0
    # 4 of 4 fixtures better: p = 0.125, never an interval of width 0
    four = compare([[0.0]] * 4, [[1.0]] * 4)
    assert four.p_value == 0.125 and four.verdict == "no detectable difference" and four.ci95[1] - four.ci95[0] > 0.3


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_with_trials_the_test_is_the_sign_flip_one_and_the_interval_the_t_one(n: int, seed: int) -> None:
    rng = random.Random(200 + 10 * n + seed)
    k = rng.randint(2, 4)
    a, b = _random_scores(rng, n, k), _random_scores(rng, n, k)
    d = _means(b) - _means(a)
    c = compare(a, b)
    assert c.test == "sign-flip-exact" and c.p_value == pytest.approx(_permutation_p(d), abs=TOL)
    if stats.sem(d) == 0:
        assert c.method == "square-and-add" and c.ci95[0] < c.diff < c.ci95[1]
        return
    low, high = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert (c.method, c.se) == ("t", pytest.approx(float(stats.sem(d)), abs=TOL))
    assert c.ci95 == pytest.approx((max(-1.0, low), min(1.0, high)), abs=TOL)
    assert c.mde == pytest.approx((stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * stats.sem(d), abs=TOL)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=3, max_size=3), min_size=n, max_size=n),
    st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=3, max_size=3), min_size=n, max_size=n))))
def test_a_verdict_says_better_or_worse_only_when_the_exact_test_rejects(pair: tuple[list, list]) -> None:
    a, b = pair
    c = compare(a, b)
    d = _means(b) - _means(a)
    assert c.p_value == pytest.approx(_permutation_p(d), abs=TOL)
    assert (c.verdict in ("better", "worse")) == (_permutation_p(d) < 0.05 and d.mean() != 0)
    assert -1.0 <= c.ci95[0] <= c.diff + TOL and c.diff - TOL <= c.ci95[1] <= 1.0


@pytest.mark.parametrize("clusters", [2, 3, 6, 8])
@pytest.mark.parametrize("seed", range(3))
def test_a_clustered_comparison_flips_clusters_and_is_statsmodels_cr1(clusters: int, seed: int) -> None:
    rng = random.Random(1000 + 10 * clusters + seed)
    n = clusters * rng.randint(2, 3)
    a, b = _random_scores(rng, n, 2), _random_scores(rng, n, 2)
    groups = [f"g{i % clusters}" for i in range(n)]
    d = _means(b) - _means(a)
    c = compare(a, b, groups)
    sums = np.array([d[[g == f"g{j}" for g in groups]].sum() for j in range(clusters)])
    assert c.test == "sign-flip-exact-clustered" and c.clusters == clusters
    assert c.p_value == pytest.approx(_permutation_p(sums), abs=TOL)
    fit = _cluster_fit(d, groups)
    assert c.se == pytest.approx(float(fit.bse[0]), abs=TOL)
    if fit.bse[0] > 1e-12:
        low, high = fit.conf_int(alpha=0.05)[0]
        assert c.ci95 == pytest.approx((max(-1.0, low), min(1.0, high)), abs=TOL)
    if clusters < MIN_CLUSTERS:
        assert c.verdict == "withheld" and f"only {clusters} clusters" in (c.withheld or "")
    else:
        assert c.withheld is None


def test_two_clusters_never_declare_worse() -> None:
    # the CR0 z-test said worse at p = 0.0047 for two clusters going from passing to failing
    a = [[1.0, 1.0]] * 6 + [[1.0, 0.0]] * 6
    b = [[0.0, 0.0]] * 12
    c = compare(a, b, ["x"] * 6 + ["y"] * 6)
    assert c.verdict == "withheld" and c.p_value == 0.5 and c.clusters == 2


def test_paired_differences_without_spread_take_the_sign_flip_test_and_no_mde() -> None:
    a, b = [[0.0, 0.0]] * 6, [[0.5, 0.5]] * 6  # every fixture half a trial better: no variance
    c = compare(a, b)
    assert (c.test, c.mde, c.diff, c.method) == ("sign-flip-exact", None, 0.5, "square-and-add")
    assert c.p_value == pytest.approx(stats.binomtest(6, 6, 0.5).pvalue, abs=TOL)
    assert c.verdict == "better"
    la, ua = proportion_confint(0, 6, method="wilson")
    lb, ub = proportion_confint(3, 6, method="wilson")
    assert c.ci95 == pytest.approx((0.5 - np.hypot(0.5 - lb, ua), 0.5 + np.hypot(ub - 0.5, 0.0)), abs=TOL)
    nothing = compare([[0.0] * 3] * 5, [[0.0] * 3] * 5)  # both fail everything: b - a is within Wilson's reach
    assert nothing.ci95 == pytest.approx((-proportion_confint(0, 5, method="wilson")[1],
                                          proportion_confint(0, 5, method="wilson")[1]), abs=TOL)
    few = compare(a[:4], b[:4])  # four fixtures all better is still p = 0.125: not enough
    assert few.p_value == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue, abs=TOL)
    assert few.verdict == "no detectable difference"


def test_holm_is_statsmodels_holm() -> None:
    rng = random.Random(5)
    for size in (1, 2, 3, 7):
        ps = [rng.random() ** 3 for _ in range(size)]
        assert holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]), abs=TOL)


def test_how_many_fixtures_a_difference_needs_by_the_t_power_formula() -> None:
    c = compare([[0.0, 1.0]] * 10 + [[1.0, 1.0]] * 10, [[1.0, 1.0]] * 10 + [[0.0, 1.0]] * 10)
    sd = float(np.std([0.5] * 10 + [-0.5] * 10, ddof=1))

    def enough(n: int, delta: float) -> bool:
        return (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / np.sqrt(n) <= delta

    for delta in (0.08, 0.3, 0.9):
        needed = needed_fixtures(c, delta)
        assert needed is not None and enough(needed, delta) and not enough(needed - 1, delta)
    assert needed_fixtures(compare([[1.0]] * 3, [[1.0]] * 3), 0.1) is None


def test_the_summary_carries_each_rates_error_bar_and_its_method() -> None:
    from replio_replay.judge.metrics import combine_trials, summarize
    from replio_replay.judge.results import FixtureResult

    plain = summarize([FixtureResult(id=f"f{i}", passed=i < 13) for i in range(20)])
    assert plain.ci_method == {"pass_rate": "wilson"} and plain.se == {"pass_rate": 0.106654}
    assert plain.ci95 == {"pass_rate": (0.432854, 0.818808)}
    grouped = summarize([FixtureResult(id=f"f{i}", passed=i < 13, group="ab"[i % 2] if i < 6 else None,
                                       accuracy=float(i < 10)) for i in range(20)])
    assert grouped.ci_method == {"pass_rate": "t-clustered", "accuracy": "t-clustered"}
    passes = {"a": [True, True, False], "b": [True] * 3, "c": [False] * 3}
    trials = summarize(combine_trials([FixtureResult(id=f, passed=p, trial=k) for f, ps in passes.items()
                                       for k, p in enumerate(ps, 1)]))
    assert trials.ci_method == {"pass_rate": "t", "pass^1": "t", "pass^2": "t", "pass^3": "t"}
    assert trials.se is not None and trials.se["pass_rate"] == pytest.approx(float(stats.sem([2 / 3, 1, 0])), abs=1e-6)


def test_the_worked_examples_of_the_error_bars_page() -> None:
    """docs/explanation/error-bars.md, each figure as printed there."""
    w = estimate([[1.0]] * 13 + [[0.0]] * 7)
    assert (round(w.se, 4), round(w.ci95[0], 3), round(w.ci95[1], 3)) == (0.1067, 0.433, 0.819)
    assert round(estimate([[1.0]] * 20).ci95[0], 3) == 0.839 and round(estimate([[1.0]]).ci95[0], 3) == 0.207
    t = estimate([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert (round(t.value, 3), round(t.se, 3), round(t.ci95[0], 3), round(t.ci95[1], 3)) == (0.5, 0.215, 0.0, 1.0)
    assert round(float(stats.t.ppf(0.975, 3)), 3) == 3.182
    g = estimate([[1.0], [1.0], [0.0], [1.0], [0.0], [0.0]], ["a", "a", "a", "b", "b", None])
    assert round(g.se, 3) == 0.144
    a = [[1.0]] * 9 + [[1.0]] * 2 + [[0.0]] * 6 + [[0.0]] * 3
    b = [[1.0]] * 9 + [[0.0]] * 2 + [[1.0]] * 6 + [[0.0]] * 3
    c = compare(a, b)
    assert c.mde is not None
    assert (round(c.p_value, 3), round(c.ci95[0], 2), round(c.ci95[1], 2), round(c.mde, 2)) == (0.289, -0.08, 0.44, 0.41)
    assert needed_fixtures(c, 0.10) == 300
    assert needed_fixtures(c, abs(c.diff)) == 77  # the table's "about 77 fixtures for ±0.20"
    trials = compare([[1.0] * 3, [1.0] * 3, [0.0, 1.0, 0.0]], [[0.0] * 3, [0.0] * 3, [0.0, 1.0, 0.0]])
    assert (round(trials.diff, 2), round(trials.ci95[0], 2), round(trials.ci95[1], 2), trials.p_value) == \
        (-0.67, -1.0, 0.77, 0.5)


@pytest.mark.parametrize("n", range(1, 60))
def test_a_wilson_interval_of_none_or_all_ends_at_the_rate_itself(n: int) -> None:
    """At 0 of n (or n of n) the bound is the rate exactly: floating point left the bound about 1e-17 above 0 at n = 3, 6, 7, ...
    an interval that did not hold its own estimate (hypothesis found it)."""
    assert wilson(0, n)[0] == 0.0 and wilson(n, n)[1] == 1.0
    assert estimate([[0.0, 0.0]] * max(n, 2)).ci95[0] == 0.0
