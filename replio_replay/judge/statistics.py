"""Error bars and paired comparisons, pure: how sure a rate is, and whether two variants differ.

Following Evan Miller, "Adding Error Bars to Evals" (arXiv 2411.00640): the fixtures are a sample
from a larger universe of tasks, so the fixture (not the trial) is the unit; a fixture's trials
are resamples of it, averaged into one score per fixture; fixtures of one `group` are clustered;
two variants run over the same fixtures are compared paired.

- `estimate`: a rate over fixtures. Without trials and groups, pass/fail per fixture: the Wilson
  score interval (its standard error the binomial ``sqrt(p(1-p)/n)``). Otherwise the mean of the
  per-fixture means, its standard error the CLT one over fixtures, ``sd/sqrt(n)`` (sample sd,
  n - 1), or clustered on groups when any fixture has one (Miller's eq. 4: ``sqrt(sum over
  clusters of (sum of deviations)^2) / n``; a fixture without a group is its cluster), with a
  normal interval ``mean ± 1.96 se`` cut to [0, 1] (one fixture: [0, 1], there is no spread to measure;
  every fixture, or group, scoring the same: the Wilson interval over the fixtures, or groups, since a
  CLT interval of width 0 would claim certainty that no finite suite gives).
- `compare`: b against a, paired by fixture. Pass/fail without trials: McNemar's exact test (a
  two-sided binomial test on the discordant fixtures) for the p-value; otherwise a z-test on the
  mean paired difference (CLT or clustered standard error, as above). The interval is the normal
  one around the mean difference, in both cases; `mde` is the smallest difference this many
  fixtures would detect at 80 % power and α = 0.05, ``(z_0.975 + z_0.8) · se`` (Miller's eq. 8); with
  one fixture the interval is [-1, 1] and `mde` 1. When every paired difference is the same there
  is no spread for a z-test: the p-value is the exact sign test's over the fixtures that differ
  and `mde` is None (it cannot be estimated from no variance).

Only the standard library: `statistics.NormalDist` for the normal quantiles, exact binomial sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["ALPHA", "Comparison", "Estimate", "compare", "estimate", "mcnemar_p", "needed_fixtures", "wilson"]

#: The significance level of a verdict, and the power `mde` is for.
ALPHA = 0.05
POWER = 0.8
_Z = NormalDist().inv_cdf(1 - ALPHA / 2)
_Z_POWER = NormalDist().inv_cdf(POWER)


@dataclass(frozen=True)
class Estimate:
    """A rate with its standard error, 95 % interval and the method that gave them."""

    value: float
    se: float
    ci95: tuple[float, float]
    method: str  # "wilson", "clt" or "clustered"


@dataclass(frozen=True)
class Comparison:
    """b against a over the fixtures both ran: the mean paired difference b - a and whether it is real."""

    n: int
    diff: float
    se: float
    ci95: tuple[float, float]
    p_value: float
    test: str  # "mcnemar-exact" or "paired-z" (or "paired-z-clustered")
    a_only: int  # fixtures that pass in a only (pass/fail without trials; else those a scores higher)
    b_only: int
    mde: float | None  # None when the paired differences have no spread to estimate it from

    @property
    def verdict(self) -> str:
        """``better`` or ``worse`` when p < α, by the sign of the difference; else ``no detectable difference``."""
        if self.p_value < ALPHA and self.diff != 0:
            return "better" if self.diff > 0 else "worse"
        return "no detectable difference"


def wilson(successes: int, n: int) -> tuple[float, float]:
    """The Wilson score interval (95 %) of `successes` in `n`; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + _Z ** 2 / n
    centre = (p + _Z ** 2 / (2 * n)) / denominator
    half = _Z * math.sqrt(p * (1 - p) / n + _Z ** 2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def estimate(scores: Sequence[Sequence[float]], groups: Sequence[str | None] | None = None, *,
             wilson_ok: bool = True) -> Estimate:
    """The rate over fixtures whose trials scored `scores` (one list per fixture, each score 0..1),
    `groups` naming each fixture's cluster (None: its own); `wilson_ok` false when the scores are
    already per-fixture estimates (pass^k), never a pass/fail count."""
    n = len(scores)
    if n == 0:
        return Estimate(0.0, 0.0, (0.0, 1.0), "wilson")
    clustered = groups is not None and any(g is not None for g in groups)
    binary = all(len(s) == 1 and s[0] in (0.0, 1.0) for s in scores)
    means = [sum(s) / len(s) for s in scores]
    mean = sum(means) / n
    if binary and not clustered and wilson_ok:
        return Estimate(mean, math.sqrt(mean * (1 - mean) / n), wilson(round(mean * n), n), "wilson")
    method = "clustered" if clustered else "clt"
    if n < 2:  # one fixture: no spread to estimate, so the rate of the universe may be anything
        return Estimate(mean, 0.0, (0.0, 1.0), method)
    se = _clustered_se(means, groups) if clustered and groups is not None else _clt_se(means)
    if se == 0:  # every fixture (group) scored the same: no spread for the CLT to see
        units = len(set(_cluster_keys(groups))) if clustered and groups is not None else n
        return Estimate(mean, 0.0, wilson(round(mean * units), units), "wilson")
    return Estimate(mean, se, (max(0.0, mean - _Z * se), min(1.0, mean + _Z * se)), method)


def compare(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]],
            groups: Sequence[str | None] | None = None) -> Comparison:
    """b against a, fixture by fixture (`a[i]` and `b[i]` the same fixture's trial scores)."""
    if len(a) != len(b):
        raise ValueError("compare pairs fixtures: a and b must hold the same fixtures")
    n = len(a)
    mean_a = [sum(s) / len(s) if s else 0.0 for s in a]
    mean_b = [sum(s) / len(s) if s else 0.0 for s in b]
    d = [y - x for x, y in zip(mean_a, mean_b)]
    a_only = sum(1 for x, y in zip(mean_a, mean_b) if x > y)
    b_only = sum(1 for x, y in zip(mean_a, mean_b) if y > x)
    if n == 0:
        return Comparison(0, 0.0, 0.0, (0.0, 0.0), 1.0, "paired-z", 0, 0, 0.0)
    diff = sum(d) / n
    clustered = groups is not None and any(g is not None for g in groups)
    se = _clustered_se(d, groups) if clustered and groups is not None else _clt_se(d)
    binary = all(len(s) == 1 and s[0] in (0.0, 1.0) for s in (*a, *b))
    if binary and not clustered:
        p_value, test = mcnemar_p(a_only, b_only), "mcnemar-exact"
    elif se == 0:  # every paired difference the same: no spread for a z-test, so the exact sign test
        p_value, test = mcnemar_p(a_only, b_only), "sign-exact"
    else:
        p_value = 2 * (1 - NormalDist().cdf(abs(diff) / se))
        test = "paired-z-clustered" if clustered else "paired-z"
    if n < 2:  # one fixture: the difference of the universe may be anything; nothing smaller than all of it shows
        return Comparison(n, diff, 0.0, (-1.0, 1.0), min(1.0, p_value), test, a_only, b_only, 1.0)
    return Comparison(n, diff, se, (diff - _Z * se, diff + _Z * se), min(1.0, p_value), test, a_only, b_only,
                      (_Z + _Z_POWER) * se if se else None)


def mcnemar_p(a_only: int, b_only: int) -> float:
    """McNemar's exact test: the two-sided binomial p-value of the discordant pairs (1 when there are none)."""
    m = a_only + b_only
    if m == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m
    return min(1.0, 2 * tail)


def needed_fixtures(comparison: Comparison, difference: float) -> int | None:
    """About how many fixtures would detect `difference` at 80 % power, from the observed
    variance of the paired differences (None when it is 0: any number detects any difference)."""
    if comparison.se == 0 or difference <= 0:
        return None
    variance = comparison.se ** 2 * comparison.n
    return math.ceil((_Z + _Z_POWER) ** 2 * variance / difference ** 2)


def _clt_se(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def _cluster_keys(groups: Sequence[str | None]) -> list[object]:
    """Each fixture's cluster: its group, or itself when it has none."""
    return [("group", g) if g is not None else ("alone", i) for i, g in enumerate(groups)]


def _clustered_se(values: Sequence[float], groups: Sequence[str | None]) -> float:
    """Miller's clustered standard error: each cluster's summed deviations, squared, summed; / n."""
    n = len(values)
    mean = sum(values) / n
    sums: dict[object, float] = {}
    for v, key in zip(values, _cluster_keys(groups)):
        sums[key] = sums.get(key, 0.0) + (v - mean)
    return math.sqrt(sum(s * s for s in sums.values())) / n
