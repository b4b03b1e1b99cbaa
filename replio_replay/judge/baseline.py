"""Pure: a run compared with a saved baseline, and the score gates that fail CI on a regression.

A *comparison* pairs a run with its entry in a saved result (matched by provider, model and
tool set; a baseline of one run stands for a run of one), and lists the fixtures that passed
there and fail now — with trials, those whose share of passing trials fell, which is where
pass^k drops — before the ones it fixed, and each metric before and now.

A *gate* is a flag's `METRIC=X`. Every metric has a better direction: up for the fractions
(`pass_rate`, `accuracy`, `pass^k`), down for the counts (`errors`, `tokens`, `cost`).
`--fail-under` bounds a fraction from below and `--fail-over` a count from above, with or
without a baseline; `--max-drop` bounds how much a metric may get worse than the baseline's
(a fall of a fraction, a rise of a count). A gate on a metric the run (or the baseline) does
not have — accuracy without `expected`, pass^3 of one trial, cost without a price — fails
saying so, as a gate that cannot be checked must not pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._runtime.wording import did_you_mean, plural
from ..errors import UsageError
from ..prices import dollars
from .paired import comparisons as paired_comparisons
from .paired import withheld, worse
from .results import FixtureResult, RunResult, Summary

__all__ = ["FAIL_IF_WORSE", "FRACTIONS", "GATE_FLAGS", "METRICS", "Change", "Checked", "Comparison", "Gate", "check_runs", "compare",
           "failed_gates", "match_runs", "metric_value", "parse_gates"]

#: The metrics where higher is better (fractions, 0..1); the others are counts where lower is better.
FRACTIONS = ("pass_rate", "accuracy", "pass^k")
METRICS = (*FRACTIONS, "errors", "tokens", "cost")
#: Each gate flag and the metrics it takes.
GATE_FLAGS = {"--fail-under": FRACTIONS, "--fail-over": METRICS[len(FRACTIONS):], "--max-drop": METRICS}
_PASS_HAT = re.compile(r"pass\^(k|[1-9][0-9]*)")


#: The gate that fails on a paired comparison whose pass-rate verdict is `worse`, not on a threshold.
FAIL_IF_WORSE = "--fail-if-worse"


@dataclass(frozen=True)
class Gate:
    """One `flag METRIC=X` (`--fail-if-worse`: the pass rate, no limit)."""

    flag: str
    metric: str
    limit: float

    @property
    def needs_baseline(self) -> bool:
        return self.flag == "--max-drop"


def parse_gates(flag: str, specs: Sequence[str]) -> list[Gate]:
    """Each `METRIC=X` given to `flag`; a UsageError naming the spec, with did-you-mean, when one is bad."""
    return [_parse(flag, spec) for spec in specs]


def _parse(flag: str, spec: str) -> Gate:
    takes = GATE_FLAGS[flag]
    name, sep, value = (part.strip() for part in spec.partition("="))
    shown = ", ".join(m.replace("pass^k", "pass^K") for m in takes)
    if not sep or not name:
        raise UsageError(f"{flag} {spec!r}: expected METRIC=X, e.g. {flag} {takes[0]}={_example(flag, takes[0])}")
    metric = "pass^k" if _PASS_HAT.fullmatch(name) else name
    if metric not in takes:
        other = next((f for f, ms in GATE_FLAGS.items() if metric in ms and f != "--max-drop"), None)
        why = (f"{flag} does not take {name} (it gets better as it goes "
               f"{'up' if metric in FRACTIONS else 'down'}); use {other} {name}={value}; " if other
               else f"unknown metric {name!r}; {did_you_mean(name, takes)}")
        raise UsageError(f"{flag} {spec!r}: {why}{flag} takes: {shown}")
    try:
        limit = float(value)
    except ValueError:
        limit = float("nan")
    if limit != limit or limit < 0 or limit == float("inf") or (metric in FRACTIONS and limit > 1):
        bound = "a number from 0 to 1" if metric in FRACTIONS else "a number, 0 or more"
        raise UsageError(f"{flag} {spec!r}: {value!r} is not {bound}, e.g. {flag} {metric}={_example(flag, metric)}")
    return Gate(flag, name, limit)


def _example(flag: str, metric: str) -> str:
    return {"tokens": "5000", "errors": "0", "cost": "1.00"}.get(metric, "0.05" if flag == "--max-drop" else "0.8")


def metric_value(summary: Summary, metric: str) -> float | None:
    """`metric` of a run's summary (`pass^K`: pass^k for k = K; `pass^k`: for k = the run's trials);
    None when the run does not measure it."""
    found = _PASS_HAT.fullmatch(metric)
    if found:
        k = found[1] if found[1] != "k" else str(summary.trials or 1)
        if k == "1" and not summary.pass_hat_k:
            return summary.pass_rate  # pass^1 of one trial is the pass rate
        return (summary.pass_hat_k or {}).get(k)
    value: float | None = getattr(summary, metric)
    return value


@dataclass(frozen=True)
class Change:
    """A fixture whose verdict moved: `before` and `now` as the table shows them (`pass`, `FAIL`, `2/3`)."""

    id: str
    before: str
    now: str


@dataclass(frozen=True)
class Comparison:
    """A run against its baseline run."""

    origin: str  # the baseline file
    baseline: RunResult
    regressed: list[Change] = field(default_factory=list)  # passed there (more often), fail now
    fixed: list[Change] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)  # fixture id -> its verdict in the baseline

    def metrics(self, now: Summary) -> dict[str, tuple[float | None, float | None]]:
        """Each metric measured on either side -> (baseline, now)."""
        names = [*METRICS[:2], *(f"pass^{k}" for k in (now.pass_hat_k or {})), *METRICS[3:]]
        pairs = {m: (metric_value(self.baseline.summary, m), metric_value(now, m)) for m in names}
        return {m: pair for m, pair in pairs.items() if pair != (None, None)}

    def to_json(self, now: Summary) -> dict[str, Any]:
        """The `baseline` key of a run's JSON."""
        return {
            "file": self.origin,
            "run": self.baseline.key.label,
            "regressed": [c.id for c in self.regressed],
            "fixed": [c.id for c in self.fixed],
            "metrics": {m: {"baseline": before, "now": after} for m, (before, after) in self.metrics(now).items()},
        }


def _share(result: FixtureResult) -> float:
    """The share of its trials that passed (1 or 0 for one trial)."""
    return (result.passes or 0) / (result.n or 1) if result.trials else float(result.passed)


def compare(run: RunResult, baseline: RunResult, origin: str) -> Comparison:
    """`run` against `baseline` (from the file `origin`): its regressions first, in the run's order."""
    before = {f.id: f for f in baseline.fixtures}
    regressed, fixed = [], []
    for result in run.fixtures:
        old = before.get(result.id)
        if old is None:
            continue
        change = Change(result.id, old.verdict, result.verdict)
        if _share(result) < _share(old):
            regressed.append(change)
        elif _share(result) > _share(old):
            fixed.append(change)
    return Comparison(origin, baseline, regressed, fixed, {i: f.verdict for i, f in before.items()})


def match_runs(runs: Sequence[RunResult], saved: Sequence[RunResult]) -> list[RunResult | None]:
    """Each of `runs`' entry in `saved`: the one of the same provider, model and tool set; a
    baseline of one run is every run's when nothing matches it by name (one model against another)."""
    by_key = {r.key: r for r in saved}
    only = saved[0] if len(saved) == 1 else None
    return [by_key.get(run.key) or only for run in runs]


@dataclass(frozen=True)
class Checked:
    """Runs checked against their baselines and gates: each run's comparison (None: no baseline, or
    no run of it there), and one line per failed gate, naming the run when there are several."""

    comparisons: list[Comparison | None]
    failures: list[str]
    unmatched: list[str]  # the runs the baseline has no run for
    gated: bool = False  # whether any gate was given
    #: Paired comparisons (see `paired`): each run against the first, and against its baseline.
    paired: list[dict[str, Any]] = field(default_factory=list)
    #: What a reader should know about gates that held without being failed: not checked on an empty
    #: run (a shard that holds no fixture), a verdict withheld.
    notes: list[str] = field(default_factory=list)

    def regression_lines(self, runs: Sequence[RunResult]) -> list[str]:
        """Per run with regressions, one line naming them: `passed in the baseline, fail now: a (pass -> FAIL)`."""
        lines = []
        for run, comparison in zip(runs, self.comparisons):
            if comparison is None or not comparison.regressed:
                continue
            which = ", ".join(f"{c.id} ({c.before} -> {c.now})" for c in comparison.regressed)
            label = f" ({run.key.label})" if len(runs) > 1 else ""
            lines.append(f"passed in the baseline {comparison.origin}, fail now{label}: {which}")
        return lines


def check_runs(runs: Sequence[RunResult], gates: Sequence[Gate], baseline: Sequence[RunResult] | None,
               origin: str = "") -> Checked:
    """Compare each of `runs` with its run in `baseline` (from the file `origin`), and hold each to `gates`."""
    bases = match_runs(runs, baseline) if baseline is not None else [None] * len(runs)
    comparisons = [None if base is None else compare(run, base, origin) for run, base in zip(runs, bases)]
    failures: list[str] = []
    notes: list[str] = []
    scored = [g for g in gates if g.flag != FAIL_IF_WORSE]
    for run, base in zip(runs, bases):
        prefix = f"{run.key.label}: " if len(runs) > 1 else ""
        if not run.fixtures and scored:
            notes.append(prefix + _empty(scored))
            continue
        failures += [prefix + line for line in failed_gates(scored, run.summary, None if base is None else base.summary)]
    found = paired_comparisons(runs, bases)
    if len(scored) < len(gates) and not any(run.fixtures for run in runs):
        notes.append(_empty([g for g in gates if g.flag == FAIL_IF_WORSE]))
    elif len(scored) < len(gates):
        failures += worse(found) + _unpaired(runs, bases, found)
        notes += withheld(found)
    unmatched = [run.key.label for run, base in zip(runs, bases) if baseline is not None and base is None]
    return Checked(comparisons, failures, unmatched, gated=bool(gates), paired=found, notes=notes)


def _empty(gates: Sequence[Gate]) -> str:
    """Why `gates` were not checked on a run of no fixture: an empty shard exits 0, its merged result is gated."""
    flags = ", ".join(dict.fromkeys(g.flag for g in gates))
    return (f"no fixture ran (an empty shard?), so {flags} was not checked: hold the merged shards to it "
            "(replio eval merge ... with the same flags)")


def _unpaired(runs: Sequence[RunResult], bases: Sequence[RunResult | None],
              found: Sequence[dict[str, Any]]) -> list[str]:
    """The lines `--fail-if-worse` fails on when it has nothing to judge: no second run nor
    baseline, or a pair of runs with no fixture id in common (fixtures renamed?)."""
    wanted = [(runs[0].key.label, run.key.label, runs[0], run) for run in runs[1:]]
    wanted += [(f"baseline {run.key.label}", run.key.label, base, run) for run, base in zip(runs, bases) if base]
    if not wanted:
        return [f"{FAIL_IF_WORSE} has nothing to compare: give a --baseline, or several runs with --compare or --tools"]
    judged = {(c["a"], c["b"]) for c in found if c["metric"] == "pass_rate"}
    lines = []
    for a_label, b_label, a, b in wanted:
        if (a_label, b_label) not in judged:
            lines.append(f"{b_label} vs {a_label}: none of the run's {len(b.fixtures)} fixture ids is among the "
                         f"{len(a.fixtures)} of {a_label} (fixtures renamed?), so {FAIL_IF_WORSE} cannot be checked; "
                         "compare runs of the same fixtures")
    return lines


def failed_gates(gates: Sequence[Gate], now: Summary, baseline: Summary | None) -> list[str]:
    """One line per gate that fails (`pass_rate 0.80 -> 0.60 (-0.20 > 0.05)`); [] when all hold."""
    lines = []
    for gate in gates:
        value = metric_value(now, gate.metric)
        if value is None:
            lines.append(f"{gate.metric} not measured by this run: {gate.flag} {gate.metric} cannot be checked "
                         f"({_why_missing(gate.metric, now)})")
            continue
        if gate.flag == "--fail-under" and value < gate.limit:
            lines.append(f"{gate.metric} {_fmt(gate.metric, value)} < {_fmt(gate.metric, gate.limit)} (--fail-under)")
        elif gate.flag == "--fail-over" and value > gate.limit:
            lines.append(f"{gate.metric} {_fmt(gate.metric, value)} > {_fmt(gate.metric, gate.limit)} (--fail-over)")
        elif gate.flag == "--max-drop":
            line = _drop(gate, value, baseline)
            if line:
                lines.append(line)
    return lines


def _drop(gate: Gate, value: float, baseline: Summary | None) -> str | None:
    before = None if baseline is None else metric_value(baseline, gate.metric)
    if before is None:
        return (f"{gate.metric} not in the baseline: --max-drop {gate.metric} cannot be checked "
                "(give a baseline that measured it)")
    worse = before - value if _higher_is_better(gate.metric) else value - before
    if round(worse, 6) <= gate.limit:
        return None
    delta = value - before
    sign = "+" if delta >= 0 else "-"
    return (f"{gate.metric} {_fmt(gate.metric, before)} -> {_fmt(gate.metric, value)} "
            f"({sign}{_fmt(gate.metric, abs(delta))} > {_fmt(gate.metric, gate.limit)})")


def _higher_is_better(metric: str) -> bool:
    return metric in FRACTIONS or bool(_PASS_HAT.fullmatch(metric))


def _fmt(metric: str, value: float) -> str:
    if metric == "cost":
        return dollars(value)
    if metric in ("errors", "tokens"):
        return f"{value:.0f}" if value == int(value) else str(value)
    return f"{value:.2f}"


def _why_missing(metric: str, summary: Summary) -> str:
    if metric == "accuracy":
        return "no fixture declares expected calls"
    if metric == "cost" and summary.cost_unknown:
        return (f"the cost is unknown for {plural(summary.cost_unknown, 'fixture')}: an answer gave no prompt and "
                "completion token counts (see cost_unknown in the JSON)")
    if metric == "cost":
        return "no price known for its model: add one under \"prices\" in .replio/config.json"
    if not summary.fixtures:
        return "no fixture ran"
    return "run more trials, e.g. --trials 3"
