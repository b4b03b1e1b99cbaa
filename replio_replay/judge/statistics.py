"""Error bars and paired comparisons, pure: how sure a rate is, and whether two variants differ.

Following Evan Miller, "Adding Error Bars to Evals" (arXiv 2411.00640): the fixtures are a sample
from a larger universe of tasks, so the fixture (not the trial) is the unit; a fixture's trials
are resamples of it, averaged into one score per fixture; fixtures of one `group` are clustered
(a fixture without a group is a cluster of its own); two variants run over the same fixtures are
compared paired. Every method is one that holds at the sizes suites have (a dozen fixtures, a
few clusters), not only asymptotically:

- `estimate`: a rate over fixtures. Pass/fail per fixture without trials or groups: the Wilson
  score interval. Otherwise the mean of the per-fixture means, its standard error the sample one
  (``sd/sqrt(n)``) or, with groups, the cluster-robust one with the small-cluster correction
  (CR1, statsmodels' default: ``sqrt(G/(G-1)) · sqrt(sum over clusters of (summed deviations)²) / n``),
  and a Student t interval on n - 1 (G - 1) degrees of freedom, cut to [0, 1]. A pass^k, or fixture
  scores that are all 0 or 1, never get an interval narrower than Wilson's over the fixtures
  (clusters): the t interval is the union with it. One fixture: [0, 1]; no spread at all: Wilson's.
- `compare`: b against a, paired by fixture. Pass/fail without trials or groups: McNemar's exact
  test and Newcombe's hybrid score interval for paired proportions (his method 10). Otherwise an
  exact sign-flip permutation test of the per-fixture differences (with groups: of the
  per-cluster sums), enumerated exactly over the distinct sums while that is cheap, else a
  fixed-seed Monte Carlo (`RESAMPLES` draws, its p-value raised by four of its standard errors so
  that no other seed would give another verdict but at odds below 1 in 30,000); the interval is
  the t one on n - 1 (G - 1) degrees of freedom, cut to [-1, 1] (every difference the same, so no
  spread: the two rates' Wilson intervals squared and added, as Newcombe's are). With groups, fewer than
  `MIN_CLUSTERS` clusters withhold the verdict. `mde` and `needed_fixtures` come from the same t
  quantiles (80 % power, α = 0.05).
- `holm`: the step-down adjustment of several p-values of one family.

Only the standard library: `statistics.NormalDist` for the normal quantiles, a continued fraction
for Student's t, exact integer sums for the permutation and binomial tests.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from operator import add
from statistics import NormalDist

__all__ = ["ALPHA", "MIN_CLUSTERS", "RESAMPLES", "Comparison", "Estimate", "compare", "estimate", "holm",
           "mcnemar_p", "needed_fixtures", "newcombe", "sign_flip", "t_quantile", "verdict", "wilson"]

#: The significance level of a verdict, and the power `mde` is for.
ALPHA = 0.05
POWER = 0.8
_Z = NormalDist().inv_cdf(1 - ALPHA / 2)
#: Below this many clusters a clustered comparison gives no verdict: a sign-flip test over 5
#: clusters cannot reach p < 0.05 (its smallest p is 2/2^5), and cluster-robust intervals
#: under-cover badly with so few (Cameron, Gelbach and Miller 2008).
MIN_CLUSTERS = 6
#: Monte Carlo draws of the sign-flip test when the exact enumeration would cost more than
#: `_EXACT_BUDGET` additions, and the seed that makes a run repeat its p-values.
RESAMPLES = 100_000
_SEED = 20241104
_EXACT_BUDGET = 1 << 22
_GRID = 10 ** 6  # the largest common denominator the exact enumeration scales the differences by


@dataclass(frozen=True)
class Estimate:
    """A rate with its standard error, 95 % interval and the method that gave them."""

    value: float
    se: float
    ci95: tuple[float, float]
    method: str  # "wilson", "t" or "t-clustered"


@dataclass(frozen=True)
class Comparison:
    """b against a over the fixtures both ran: the mean paired difference b - a and whether it is real."""

    n: int
    diff: float
    se: float
    ci95: tuple[float, float]
    p_value: float
    test: str  # "mcnemar-exact", "sign-flip-exact" or "sign-flip-monte-carlo" (+ "-clustered" with groups)
    a_only: int  # fixtures that pass in a only (pass/fail without trials; else those a scores higher)
    b_only: int
    mde: float | None  # None when the paired differences have no spread to estimate it from
    method: str = "t"  # the interval's: "newcombe", "t", "t-clustered", or "square-and-add" (no spread)
    clusters: int = 0  # the units the test flips: fixtures, or clusters with groups
    resamples: int | None = None  # the Monte Carlo draws; None for an exact test
    withheld: str | None = None  # why no verdict is given (too few clusters), else None

    @property
    def verdict(self) -> str:
        """See `verdict`, at this comparison's own p-value."""
        return verdict(self.diff, self.p_value, self.withheld)


def verdict(diff: float, p_value: float, withheld: str | None = None) -> str:
    """``better`` or ``worse`` when the test rejects (p < α), by the sign of `diff`; ``withheld``
    when no verdict may be given; else ``no detectable difference``."""
    if withheld:
        return "withheld"
    if p_value < ALPHA and diff != 0:
        return "better" if diff > 0 else "worse"
    return "no detectable difference"


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The Wilson score interval (95 %) of `successes` in `n` (a mean times n may be fractional);
    (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + _Z ** 2 / n
    centre = (p + _Z ** 2 / (2 * n)) / denominator
    half = _Z * math.sqrt(max(0.0, p * (1 - p)) / n + _Z ** 2 / (4 * n * n)) / denominator
    # The interval always holds p; at p = 0 (or 1) its bound is p exactly, which floating point
    # can miss by 1e-17 (centre and half are then equal in exact arithmetic).
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def estimate(scores: Sequence[Sequence[float]], groups: Sequence[str | None] | None = None, *,
             wilson_ok: bool = True) -> Estimate:
    """The rate over fixtures whose trials scored `scores` (one list per fixture, each score 0..1),
    `groups` naming each fixture's cluster (None: its own); `wilson_ok` false when the scores are
    already per-fixture estimates (pass^k), never a pass/fail count: their interval is then the t
    one, widened to Wilson's where that is wider."""
    n = len(scores)
    if n == 0:
        return Estimate(0.0, 0.0, (0.0, 1.0), "wilson")
    clustered = groups is not None and any(g is not None for g in groups)
    binary = all(len(s) == 1 and s[0] in (0.0, 1.0) for s in scores)
    means = [sum(s) / len(s) for s in scores]
    mean = sum(means) / n
    if binary and not clustered and wilson_ok:
        return Estimate(mean, math.sqrt(mean * (1 - mean) / n), wilson(round(mean * n), n), "wilson")
    method = "t-clustered" if clustered else "t"
    if n < 2:  # one fixture: no spread to estimate, so the rate of the universe may be anything
        return Estimate(mean, 0.0, (0.0, 1.0), method)
    units = _units(groups) if clustered and groups is not None else n
    if units < 2:  # one cluster: as one fixture
        return Estimate(mean, 0.0, (0.0, 1.0), method)
    se = _clustered_se(means, groups) if clustered and groups is not None else _sem(means)
    if se == 0:  # every fixture (cluster) scored the same: no spread for an interval to come from
        return Estimate(mean, 0.0, wilson(round(mean * units), units), "wilson")
    half = t_quantile(1 - ALPHA / 2, units - 1) * se
    low, high = max(0.0, mean - half), min(1.0, mean + half)
    if not wilson_ok or all(m in (0.0, 1.0) for m in means):  # no narrower than a pass/fail count's
        w_low, w_high = wilson(mean * units, units)
        low, high = min(low, w_low), max(high, w_high)
    return Estimate(mean, se, (low, high), method)


def compare(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]],
            groups: Sequence[str | None] | None = None) -> Comparison:
    """b against a, fixture by fixture (`a[i]` and `b[i]` the same fixture's trial scores)."""
    if len(a) != len(b):
        raise ValueError("compare pairs fixtures: a and b must hold the same fixtures")
    n = len(a)
    mean_a = [_exact_mean(s) for s in a]
    mean_b = [_exact_mean(s) for s in b]
    d = [y - x for x, y in zip(mean_a, mean_b)]
    a_only = sum(1 for x, y in zip(mean_a, mean_b) if x > y)
    b_only = sum(1 for x, y in zip(mean_a, mean_b) if y > x)
    if n == 0:
        return Comparison(0, 0.0, 0.0, (-1.0, 1.0), 1.0, "sign-flip-exact", 0, 0, None, clusters=0)
    diff = float(sum(d) / n)
    clustered = groups is not None and any(g is not None for g in groups)
    floats = [float(x) for x in d]
    if clustered and groups is not None:
        sums: dict[object, Fraction] = {}
        for value, key in zip(d, _cluster_keys(groups)):
            sums[key] = sums.get(key, Fraction(0)) + value
        flipped = list(sums.values())
        se = _clustered_se(floats, groups)
    else:
        flipped, se = d, _sem(floats)
    units = len(flipped)
    binary = all(len(s) == 1 and s[0] in (0.0, 1.0) for s in (*a, *b))
    resamples = None
    if binary and not clustered:
        p_value, test = mcnemar_p(a_only, b_only), "mcnemar-exact"
    else:
        p_value, resamples = sign_flip(flipped)
        test = ("sign-flip-exact" if resamples is None else "sign-flip-monte-carlo") + ("-clustered" if clustered else "")
    withheld = (f"only {units} clusters (groups, a fixture without one its own): a clustered comparison needs "
                f"at least {MIN_CLUSTERS}" if clustered and units < MIN_CLUSTERS else None)
    if n < 2 or units < 2:  # one fixture (cluster): the difference of the universe may be anything
        return Comparison(n, diff, se, (-1.0, 1.0), p_value, test, a_only, b_only, 1.0,
                          "t-clustered" if clustered else "t", units, resamples, withheld)
    df = units - 1
    mde = (t_quantile(1 - ALPHA / 2, df) + t_quantile(POWER, df)) * se if se else None
    if binary and not clustered:
        both = sum(1 for x, y in zip(mean_a, mean_b) if x == y == 1)
        ci, method = newcombe(both, b_only, a_only, n - both - a_only - b_only), "newcombe"
    elif se == 0:  # every difference the same: no spread to see, so each rate's Wilson interval, squared and added
        ci, method = _square_and_add(float(sum(mean_a) / n), float(sum(mean_b) / n), units), "square-and-add"
    else:
        half = t_quantile(1 - ALPHA / 2, df) * se
        ci, method = (max(-1.0, diff - half), min(1.0, diff + half)), "t-clustered" if clustered else "t"
    return Comparison(n, diff, se, ci, p_value, test, a_only, b_only, mde, method, units, resamples, withheld)


def newcombe(both: int, first_only: int, second_only: int, neither: int) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, Stat Med 17:2635, method 10) for p1 - p2 of paired
    pass/fail: p1 the first variant's rate (`both + first_only` of n), p2 the second's; each rate's
    Wilson interval, combined with the correlation of the two (corrected towards 0 as he does)."""
    n = both + first_only + second_only + neither
    if n == 0:
        return -1.0, 1.0
    p1, p2 = (both + first_only) / n, (both + second_only) / n
    l1, u1 = wilson(both + first_only, n)
    l2, u2 = wilson(both + second_only, n)
    margins = (both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    phi = 0.0
    if margins:
        cross = both * neither - first_only * second_only
        phi = (cross - n / 2 if cross > n / 2 else 0.0 if cross >= 0 else cross) / math.sqrt(margins)
    theta = p1 - p2
    lower = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    upper = theta + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, lower), min(1.0, upper)


def _square_and_add(a: float, b: float, units: int) -> tuple[float, float]:
    """b - a bounded by the two rates' Wilson intervals over `units`, combined as Newcombe's are
    with no correlation: wide enough for any rates that would give these means."""
    la, ua = wilson(a * units, units)
    lb, ub = wilson(b * units, units)
    diff = b - a
    return (max(-1.0, diff - math.hypot(b - lb, ua - a)), min(1.0, diff + math.hypot(ub - b, a - la)))


def sign_flip(values: Sequence[Fraction]) -> tuple[float, int | None]:
    """The two-sided p-value of the sign-flip permutation test of `values` (paired differences, or
    per-cluster sums of them): the share of the 2^m ways of flipping their signs whose sum is at
    least as far from 0 as theirs; and None when it was enumerated exactly, else the Monte Carlo
    draws it was estimated from."""
    nonzero = [abs(v) for v in values if v]
    if not nonzero:
        return 1.0, None
    observed = abs(sum(values, Fraction(0)))
    scale = math.lcm(*(v.denominator for v in nonzero))
    if scale <= _GRID:
        weights = [int(v * scale) for v in nonzero]
        if sum(weights) * len(weights) <= _EXACT_BUDGET:
            return _exact_sign_flip(weights, int(observed * scale)), None
    return _monte_carlo_sign_flip(nonzero, observed), RESAMPLES


def _exact_sign_flip(weights: Sequence[int], observed: int) -> float:
    """Exact: how many subsets of `weights` take the + sign for each total, counted by a subset-sum
    table (a flip's sum is 2·(the + part) - total); equal sums share a cell, so this is cheap."""
    total = sum(weights)
    counts = [1] + [0] * total
    for w in weights:
        counts = list(map(add, counts, [0] * w + counts[:total + 1 - w]))
    extreme = sum(c for x, c in enumerate(counts) if abs(2 * x - total) >= observed)
    return min(1.0, extreme / 2 ** len(weights))


def _monte_carlo_sign_flip(values: Sequence[Fraction], observed: Fraction) -> float:
    """`RESAMPLES` random sign flips from a fixed seed; the p-value ``(hits + 1) / (draws + 1)``,
    raised by four of its standard errors so that the verdict does not rest on the seed."""
    rng = random.Random(_SEED)
    alike = sorted(Counter(float(v) for v in values).items())
    target = float(observed) * (1 - 1e-12)
    hits = 0
    for _ in range(RESAMPLES):
        total = sum(v * (2 * rng.getrandbits(c).bit_count() - c) for v, c in alike)
        hits += abs(total) >= target
    p = (hits + 1) / (RESAMPLES + 1)
    return min(1.0, p + 4 * math.sqrt(p * (1 - p) / RESAMPLES))


def mcnemar_p(a_only: int, b_only: int) -> float:
    """McNemar's exact test: the two-sided binomial p-value of the discordant pairs (1 when there are none)."""
    m = a_only + b_only
    if m == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m
    return min(1.0, 2 * tail)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of one family's p-values, in their order: the i-th smallest
    times (m - i + 1), never below an earlier one, at most 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def needed_fixtures(comparison: Comparison, difference: float) -> int | None:
    """About how many fixtures would detect `difference` at 80 % power: the fewest n with
    ``(t_{n-1, 0.975} + t_{n-1, 0.8}) · sd / sqrt(n) <= difference``, sd from the observed variance of
    the paired differences (None when it is 0: any number detects any difference)."""
    if comparison.se == 0 or difference <= 0 or comparison.n < 2:
        return None
    variance = comparison.se ** 2 * comparison.n
    n = max(2, math.ceil((_Z + NormalDist().inv_cdf(POWER)) ** 2 * variance / difference ** 2))
    while n < 10 ** 7 and (t_quantile(1 - ALPHA / 2, n - 1) + t_quantile(POWER, n - 1)) ** 2 * variance > n * difference ** 2:
        n += 1 if n < 1000 else n // 1000
    return n


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (0.5 < p < 1) on `df` degrees of freedom, by bisection of its CDF."""
    if df > 10 ** 6:
        return NormalDist().inv_cdf(p)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        low, high = high, high * 2
    for _ in range(200):
        mid = (low + high) / 2
        if _t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-13 * max(1.0, high):
            break
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t²)."""
    return 1 - 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * f


def _exact_mean(scores: Sequence[float]) -> Fraction:
    """A fixture's mean score, exactly (trial scores are 0 or 1, or floats taken as they are)."""
    return sum((Fraction(s) for s in scores), Fraction(0)) / len(scores) if scores else Fraction(0)


def _sem(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return _noise_apart(math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n))


def _noise_apart(se: float) -> float:
    """`se`, or 0 when it is rounding noise (means that are equal but for the last bits of a float)."""
    return se if se > 1e-12 else 0.0


def _cluster_keys(groups: Sequence[str | None]) -> list[object]:
    """Each fixture's cluster: its group, or itself when it has none."""
    return [("group", g) if g is not None else ("alone", i) for i, g in enumerate(groups)]


def _units(groups: Sequence[str | None]) -> int:
    return len(set(_cluster_keys(groups)))


def _clustered_se(values: Sequence[float], groups: Sequence[str | None]) -> float:
    """The cluster-robust standard error of the mean with statsmodels' default small-cluster
    correction (CR1): sqrt(G/(G-1)) times each cluster's summed deviations, squared, summed, / n.
    A fixture alone in its cluster adds exactly what it adds to the sample standard error."""
    n = len(values)
    mean = sum(values) / n
    sums: dict[object, float] = {}
    for v, key in zip(values, _cluster_keys(groups)):
        sums[key] = sums.get(key, 0.0) + (v - mean)
    g = len(sums)
    if g < 2:
        return 0.0
    return _noise_apart(math.sqrt(g / (g - 1)) * math.sqrt(sum(s * s for s in sums.values())) / n)
