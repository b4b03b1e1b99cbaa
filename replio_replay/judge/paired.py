"""Paired comparisons of two runs, pure: whether b differs from a, fixture by fixture, beyond the noise.

Two runs over the same fixtures (two models with `--compare`, two tool sets with `--tools`, a run
and its baseline) are compared on the fixtures both ran, each fixture's trials averaged into one
score (see `statistics.compare`), for the pass rate and the accuracy. Each comparison is the JSON
object the results hold under ``comparisons``; `worse` lists those a `--fail-if-worse` gate fails on.

Several comparisons of one metric (columns of `--compare a,b,c` or `--tools A,B,C`, runs against
their baselines) are one family: their p-values are adjusted together by Holm's method
(`p_adjusted`, over `adjusted_over` comparisons), and the verdict is taken at the adjusted p.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .metrics import units
from .results import FixtureResult, RunResult
from .statistics import compare, holm, needed_fixtures, verdict

__all__ = ["METRICS", "comparisons", "detects_text", "p_text", "paired", "withheld", "worse"]

#: The metrics compared.
METRICS = ("pass_rate", "accuracy")


def _scores(result: FixtureResult, metric: str) -> list[float]:
    if metric == "pass_rate":
        return [1.0 if u.passed else 0.0 for u in units(result)]
    return [u.accuracy for u in units(result) if u.accuracy is not None]


def paired(a: RunResult, b: RunResult, a_label: str, b_label: str) -> list[dict[str, Any]]:
    """b against a, for each metric both measured on some fixture both ran."""
    mine = {f.id: f for f in a.fixtures}
    both = [(mine[f.id], f) for f in b.fixtures if f.id in mine]
    out = []
    for metric in METRICS:
        pairs = [(_scores(x, metric), _scores(y, metric), y.group or x.group) for x, y in both]
        pairs = [(sa, sb, g) for sa, sb, g in pairs if sa and sb]
        if not pairs:
            continue
        c = compare([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs])
        out.append({"a": a_label, "b": b_label, "metric": metric, "n": c.n, "diff": round(c.diff, 6),
                    "se": round(c.se, 6), "ci95": [round(c.ci95[0], 6), round(c.ci95[1], 6)],
                    "p_value": round(c.p_value, 6), "test": c.test, "a_only": c.a_only, "b_only": c.b_only,
                    "verdict": c.verdict, "mde": None if c.mde is None else round(c.mde, 6),
                    "needed": needed_fixtures(c, abs(c.diff)), "method": c.method, "clusters": c.clusters,
                    "resamples": c.resamples, "withheld": c.withheld,
                    "p_adjusted": round(c.p_value, 6), "adjusted_over": 1})
    return out


def comparisons(runs: Sequence[RunResult], baselines: Sequence[RunResult | None] | None = None) -> list[dict[str, Any]]:
    """Each run after the first against the first (a side-by-side); and each run against its
    baseline, when `baselines` gives one (a the baseline, b the run)."""
    out: list[dict[str, Any]] = []
    labels = [r.key.label for r in runs]
    for run, label in zip(runs[1:], labels[1:]):
        out += paired(runs[0], run, labels[0], label)
    for run, label, base in zip(runs, labels, baselines or []):
        if base is not None:
            out += paired(base, run, f"baseline {label}", label)
    return _adjusted(out)


def _adjusted(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each metric's comparisons as one family: Holm-adjusted p-values, and verdicts taken at them."""
    for metric in METRICS:
        family = [c for c in found if c["metric"] == metric]
        for c, p in zip(family, holm([c["p_value"] for c in family])):
            c.update(p_adjusted=round(p, 6), adjusted_over=len(family),
                     verdict=verdict(c["diff"], p, c["withheld"]))
    return found


def worse(found: Sequence[dict[str, Any]]) -> list[str]:
    """The lines `--fail-if-worse` fails on: a comparison of the pass rate whose verdict is `worse`."""
    return [f"{c['b']} vs {c['a']}: pass rate {c['diff']:+.2f} [{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}], "
            f"{p_text(c)}: worse (--fail-if-worse)" for c in found
            if c["metric"] == "pass_rate" and c["verdict"] == "worse"]


def withheld(found: Sequence[dict[str, Any]]) -> list[str]:
    """The notes of `--fail-if-worse` on pass-rate comparisons whose verdict was withheld: it does not fail on them."""
    return [f"{c['b']} vs {c['a']}: pass rate verdict withheld ({c['withheld']}); --fail-if-worse did not fail "
            "on it" for c in found if c["metric"] == "pass_rate" and c["verdict"] == "withheld"]


def p_text(c: dict[str, Any]) -> str:
    """A comparison's p-value as a line says it: `p = 0.012`, then the Holm-adjusted one when its family has several."""
    if c.get("adjusted_over", 1) > 1:
        return f"p = {c['p_value']:.2g}, Holm-adjusted p = {c['p_adjusted']:.2g} over {c['adjusted_over']} comparisons"
    return f"p = {c['p_value']:.2g}"


def detects_text(c: dict[str, Any]) -> str:
    """What a comparison's suite can detect, as a line says it: `detects ±0.14`, then about how many
    fixtures would detect the difference seen when it was not detected. A smallest detectable
    difference of 1 or more is no difference a rate can have: the suite is too small to detect any."""
    if c.get("mde") is None:
        return "no spread to tell what it detects"
    said = f"detects ±{c['mde']:.2f}" if c["mde"] < 1 else f"too few fixtures to detect any difference, ±{c['mde']:.2f} at the least"
    if c["verdict"] == "no detectable difference" and c.get("needed") and round(abs(c["diff"]), 2):
        said += f"; about {c['needed']} fixtures for ±{abs(c['diff']):.2f}"
    return said

