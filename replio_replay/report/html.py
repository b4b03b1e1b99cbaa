"""The HTML report: runs as one self-contained page, a view model (pure) rendered by Jinja2 templates.

Everything a model, a tool or a file produced is untrusted text. The templates escape it
(autoescape), the page loads nothing, and its Content-Security-Policy lets only the report's own
script (named by its hash) run, so even text that slipped past escaping could not execute.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Union

import jinja2
from markupsafe import Markup

from ..judge.baseline import Comparison
from ..judge.results import FixtureResult, RunResult, TrialResult
from ..recording.again import fixture_hint
from .text import (
    compared,
    describe_change,
    drift_text,
    fmt_cost,
    fmt_metric,
    fmt_rate,
    fmt_ratio,
    has_cost,
    request_drift_text,
    units,
    whose,
)

__all__ = ["GROUPS", "Report", "build_report", "render_html"]

Unit = Union[FixtureResult, TrialResult]

#: The matrix's order: verdicts differ between runs (or trials), then drift, then failures, the rest.
GROUPS = ("differ", "drifted", "failed", "stable")
_PALETTE = ("#3566c8", "#e0782a", "#2b9a58", "#c43b3b", "#8a5cc2", "#8c6d31", "#cf5aa0", "#55697a")
PLOT = 120  # the bars' height at the panel's largest value, in SVG units
TOP = 18  # room above the tallest bar for its value
BAR, GAP = 26, 10


@dataclass(frozen=True)
class Cell:
    """One fixture in one run and trial, as the matrix shows it; `verdict` is "" when it was not run."""

    verdict: str
    status: str = ""
    accuracy: str = ""
    calls: int = 0
    drift: str = ""  # "-", "new" (no golden yet) or the number of changes from the golden
    request_drift: str = ""  # "" (nothing replayed), "-" or the number of changed requests


@dataclass(frozen=True)
class Changes:
    """One drift list: golden drift or request drift, its title and items as (sign, text)."""

    kind: str
    title: str
    lines: list[tuple[str, str]]


@dataclass(frozen=True)
class Call:
    """One tool call of the conversation: arguments as indented JSON (or the raw text sent)."""

    name: str
    arguments: str
    result: str | None


@dataclass(frozen=True)
class Said:
    """One message of a conversation: the user's, the agent's (with the calls it asked for), or a
    tool's result (`calls` holds that one call, its result the text)."""

    role: str
    text: str
    calls: list[Call]


@dataclass(frozen=True)
class EndState:
    """The environments' end state as indented canonical JSON (cut at `STATE_CAP`), and each state
    check beside it: (the turn, or "" for the fixture's own; the check; what it expects as JSON, or
    ""; whether it held)."""

    text: str | None
    checks: list[tuple[str, str, str, bool]]

    @property
    def passed(self) -> int:
        return sum(held for *_, held in self.checks)


@dataclass(frozen=True)
class Side:
    """One run's side of a fixture's detail; `task` only when the runs' tasks differ; `said`, the
    conversation's messages, only for a fixture of several user turns; `state`, for a fixture with
    environments or state checks."""

    label: str
    result: FixtureResult | None
    cells: list[Cell]
    changes: list[Changes]
    calls: list[Call]
    task: str | None
    said: list[Said] | None = None
    user_calls: list[Call] = field(default_factory=list)  # the simulated user's own, apart from the agent's
    state: EndState | None = None


@dataclass(frozen=True)
class Row:
    """One fixture: its group, its cells per run and trial, and each run's side of its detail."""

    id: str
    group: str
    differ: bool
    golden_drift: bool
    request_drift: bool
    failed: bool
    cells: list[list[Cell]]
    task: str | None
    sides: list[Side]
    regressed: bool = False  # passed in a run's baseline, fails now: shown first

    @property
    def drifted(self) -> bool:
        """Whether it drifted from its golden or its recorded requests, in any run."""
        return self.golden_drift or self.request_drift


@dataclass(frozen=True)
class Column:
    """One run (provider, model, tool set) and how many trials it ran."""

    label: str
    run: RunResult
    trials: int


@dataclass(frozen=True)
class Bar:
    """One bar of the chart, placed in its panel's SVG units."""

    x: float
    y: float
    height: float
    value: str
    series: str
    colour: str


@dataclass(frozen=True)
class Panel:
    """One metric of the chart: a bar per series (run, or run and trial)."""

    title: str
    width: int
    bars: list[Bar]
    bar_width: int = BAR
    baseline: int = TOP + PLOT


@dataclass(frozen=True)
class BaselineView:
    """One run against its baseline: each metric with its delta, and the fixtures that regressed."""

    label: str
    origin: str
    against: str  # the baseline run's label
    metrics: list[tuple[str, str, str, str]]  # name, baseline, now, delta
    regressed: list[tuple[str, str, str]]  # fixture id, verdict there, verdict now
    fixed: list[str]


@dataclass(frozen=True)
class Report:
    """Everything the template shows, computed up front."""

    title: str
    columns: list[Column]
    summary: list[tuple[str, list[str]]]
    series: list[tuple[str, str]]
    panels: list[Panel]
    rows: list[Row]
    problems: list[tuple[str, str]]
    counts: dict[str, int]
    baselines: list[BaselineView] = field(default_factory=list)

    @property
    def trials(self) -> bool:
        """Whether any run has several trials (the matrix then has a row of trial headers)."""
        return any(c.trials > 1 for c in self.columns)


def render_html(runs: Sequence[RunResult], *, problems: Sequence[tuple[str, str]] = (),
                origins: Sequence[str] = (), comparisons: Sequence[Comparison | None] | None = None) -> str:
    """The report of `runs` as one HTML document; `origins` names where each run came from (a
    file), shown only to tell apart runs of the same provider, model and tool set; `comparisons`
    (per run, None where it has no baseline) add the baseline section and mark regressed fixtures."""
    env = _environment()
    # The report's own script: trusted package data, inserted as it is and allowed by its hash.
    script = env.loader.get_source(env, "report.js")[0] if env.loader else ""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return env.get_template("report.html.j2").render(
        report=build_report(runs, problems=problems, origins=origins, comparisons=comparisons or ()),
        script=Markup(script), script_hash=f"sha256-{digest}",
    )


def build_report(runs: Sequence[RunResult], *, problems: Sequence[tuple[str, str]] = (),
                 origins: Sequence[str] = (), comparisons: Sequence[Comparison | None] = ()) -> Report:
    """The view model of the report (pure)."""
    columns = [Column(label, run, run.summary.trials or max((f.n or 1 for f in run.fixtures), default=1))
               for label, run in zip(_labels(runs, origins), runs)]
    by_id = [{f.id: f for f in run.fixtures} for run in runs]
    rows = [_row(fid, columns, [results.get(fid) for results in by_id])
            for fid in dict.fromkeys(f.id for run in runs for f in run.fixtures)]
    regressed = {c.id for cmp in comparisons if cmp for c in cmp.regressed}
    rows = [dataclasses.replace(r, regressed=r.id in regressed) for r in rows]
    rows.sort(key=lambda r: (not r.regressed, GROUPS.index(r.group)))
    series = [(label, _PALETTE[i % len(_PALETTE)]) for i, (label, _) in enumerate(_points(columns))]
    # fixtures, in any run: the summary's rows of the same names count them per run
    counts = {flag: sum(getattr(r, flag) for r in rows)
              for flag in ("differ", "drifted", "golden_drift", "request_drift", "failed")}
    return Report(
        title="replio report: " + " vs ".join(c.label for c in columns), columns=columns,
        summary=_summary(columns), series=series, panels=_panels(columns, series), rows=rows,
        problems=list(problems), counts={"fixtures": len(rows), **counts},
        baselines=[_baseline(c, cmp) for c, cmp in zip(columns, comparisons) if cmp is not None],
    )


def _baseline(column: Column, comparison: Comparison) -> BaselineView:
    metrics = []
    for name, (before, now) in comparison.metrics(column.run.summary).items():
        delta = "" if before is None or now is None else _signed(name, now - before)
        metrics.append((name, fmt_metric(name, before), fmt_metric(name, now), delta))
    return BaselineView(column.label, comparison.origin, comparison.baseline.key.label, metrics,
                        [(c.id, c.before, c.now) for c in comparison.regressed], [c.id for c in comparison.fixed])


def _signed(name: str, delta: float) -> str:
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    return sign + fmt_metric(name, abs(delta)).lstrip("$")


def _labels(runs: Sequence[RunResult], origins: Sequence[str]) -> list[str]:
    labels = [r.label for r in runs]
    if origins:
        labels = [f"{label} ({origin})" if labels.count(label) > 1 else label
                  for label, origin in zip(labels, origins)]
    return [f"{label} #{labels[:i].count(label) + 1}" if labels.count(label) > 1 else label
            for i, label in enumerate(labels)]


def _cell(unit: Unit, unjudged: bool = False) -> Cell:
    return Cell("unjudged" if unjudged else "pass" if unit.passed else "FAIL", unit.status.value, fmt_ratio(unit.accuracy), unit.calls,
                drift_text([unit.drift] if compared(unit) else []), request_drift_text([unit.request_drift]))


def _cells(result: FixtureResult | None, trials: int) -> list[Cell]:
    """A cell per trial of the run; a trial the fixture lacks shows as not run."""
    cells = [_cell(u, bool(result.unjudged)) for u in units(result)] if result else []
    return cells + [Cell("")] * (trials - len(cells))


def _row(fid: str, columns: Sequence[Column], results: Sequence[FixtureResult | None]) -> Row:
    """The fixture `fid` across the runs (`results`, None where a run lacks it)."""
    cells = [_cells(r, c.trials) for r, c in zip(results, columns)]
    verdicts = {cell.verdict for per_run in cells for cell in per_run}
    golden_drift = any(_golden_drift(r) for r in results if r)
    request_drift = any(_request_drift(r) for r in results if r)
    failed = any(c.verdict == "FAIL" for per_run in cells for c in per_run)
    differ = len(verdicts) > 1
    group = "differ" if differ else "drifted" if golden_drift or request_drift else "failed" if failed else "stable"
    tasks = {r.task for r in results if r and r.task is not None}
    sides = [_side(fid, c, r, cs, r.task if r and len(tasks) > 1 else None)
             for c, r, cs in zip(columns, results, cells)]
    return Row(fid, group, differ, golden_drift, request_drift, failed, cells,
               next(iter(tasks)) if len(tasks) == 1 else None, sides)


def _golden_drift(result: FixtureResult) -> bool:
    return any(u.drift for u in units(result))


def _request_drift(result: FixtureResult) -> bool:
    return any(u.request_drift for u in units(result))


def _side(fid: str, column: Column, result: FixtureResult | None, cells: list[Cell], task: str | None) -> Side:
    if result is None:
        return Side(column.label, None, cells, [], [], None)
    changes = []
    for unit in units(result):
        trial = f" (trial {unit.trial})" if result.trials else ""
        if unit.drift:
            changes.append(Changes("golden", f"drift from golden{trial}: {_changes(unit.drift)}",
                                   [(sign, result.shown_text(text)) for sign, text in map(describe_change, unit.drift)]))
        if unit.request_drift:
            hint = fixture_hint(unit.request_drift, fid, column.run.tools)
            changes.append(Changes("request", f"request drift{trial}: {_changes(unit.request_drift)}; {hint}",
                                   [_request_change(c) for c in unit.request_drift]))
    calls = [Call(result.shown(c.name), _arguments(c.arguments), c.result) for c in result.trace]
    said = None if result.conversation is None else [_said(result, m) for m in result.conversation]
    user_calls = [Call(result.shown(c.name), _arguments(c.arguments), c.result) for c in result.user_trace or []]
    return Side(column.label, result, cells, changes, calls, task, said, user_calls, _end_state(result))


#: Characters of an end state the page shows (the JSON result holds all of it, up to its own bound).
STATE_CAP = 50_000


def _end_state(result: FixtureResult) -> EndState | None:
    """The end state and the state checks' verdicts beside it; None when the fixture has neither."""
    if result.state is None and not result.state_checks:
        return None
    text = None
    if result.state is not None:
        text = json.dumps(result.state, indent=2, sort_keys=True, ensure_ascii=False)
        if len(text) > STATE_CAP:
            text = text[:STATE_CAP] + f"\n[... cut: {len(text) - STATE_CAP} more characters; the JSON result holds all]"
    checks = [(f"turn {c.turn}" if c.turn else "", c.check,
               "" if c.expected is None else json.dumps(c.expected, ensure_ascii=False), c.passed)
              for c in result.state_checks or ()]
    return EndState(text, checks)


def _request_change(change: dict[str, object]) -> tuple[str, str]:
    """A request-drift change as a line, naming whose request it is when not the agent's."""
    sign, text = describe_change(change)
    return sign, f"{whose(change).strip()} {text}".lstrip()


def _said(result: FixtureResult, message: dict[str, Any]) -> Said:
    if message["role"] == "tool":
        return Said("tool", "", [Call(result.shown(str(message.get("name"))), "", str(message["content"]))])
    calls = [Call(result.shown(c["name"]), _arguments(c["arguments"]), None) for c in message.get("calls", ())]
    return Said(str(message["role"]), str(message["content"]), calls)


def _changes(items: Sequence[object]) -> str:
    return f"{len(items)} change{'' if len(items) == 1 else 's'}"


def _arguments(arguments: dict[str, object] | str) -> str:
    """The arguments as one line of JSON when short, else indented; the raw text if not JSON."""
    if isinstance(arguments, str):
        return arguments
    line = json.dumps(arguments, ensure_ascii=False)
    return line if len(line) <= 72 else json.dumps(arguments, indent=2, ensure_ascii=False)


def _summary(columns: Sequence[Column]) -> list[tuple[str, list[str]]]:
    summaries = [c.run.summary for c in columns]
    rows: list[tuple[str, list[str]]] = [
        ("fixtures", [str(s.fixtures) for s in summaries]),
        ("pass rate", [fmt_rate(s, "pass_rate", s.pass_rate) for s in summaries]),
        ("accuracy", [fmt_rate(s, "accuracy", s.accuracy) for s in summaries]),
        ("calls", [str(s.calls) for s in summaries]),
        ("redundant", [str(s.redundant) for s in summaries]),
        ("errors", [str(s.errors) for s in summaries]),
        ("tokens", [str(s.tokens) for s in summaries]),
        *([("cost (USD)", [fmt_cost(s) for s in summaries])] if any(has_cost(s) for s in summaries) else []),
        ("golden drift", [str(s.drifted) for s in summaries]),
        ("request drift", [str(sum(map(_request_drift, c.run.fixtures))) for c in columns]),
        ("no golden yet", [str(s.new) for s in summaries]),
    ]
    most = max((c.trials for c in columns), default=1)
    for k in range(1, most + 1) if most > 1 else ():
        rows.append((f"pass^{k}", [fmt_rate(s, f"pass^{k}", (s.pass_hat_k or {}).get(str(k))) for s in summaries]))
        rows.append((f"pass@{k}", [fmt_ratio((s.pass_at_k or {}).get(str(k))) for s in summaries]))
    if any(s.flaky for s in summaries):
        rows.append(("flaky", [", ".join(s.flaky or []) or "-" for s in summaries]))
    rows.append(("tool set", [f"{c.run.tools} ({c.run.tools_hash or 'no digest'})" for c in columns]))
    return rows


#: The chart's metrics: title, whether it is a ratio (0..1) or a count.
_METRICS = (("pass rate", True), ("accuracy", True), ("calls", False), ("tokens", False))


def _points(columns: Sequence[Column]) -> list[tuple[str, tuple[float | None, ...]]]:
    """One chart series per run, or per run and trial: its label and its value of each metric."""
    points: list[tuple[str, tuple[float | None, ...]]] = []
    for c in columns:
        if c.trials == 1:
            s = c.run.summary
            points.append((c.label, (s.pass_rate, s.accuracy, s.calls, s.tokens)))
            continue
        for k in range(1, c.trials + 1):
            picked = [u for f in c.run.fixtures for u in units(f) if u.trial == k]
            accuracies = [u.accuracy for u in picked if u.accuracy is not None]
            points.append((f"{c.label} trial {k}", (
                sum(u.passed for u in picked) / len(picked) if picked else None,
                sum(accuracies) / len(accuracies) if accuracies else None,
                sum(u.calls for u in picked), sum(u.tokens for u in picked),
            )))
    return points


def _panels(columns: Sequence[Column], series: Sequence[tuple[str, str]]) -> list[Panel]:
    points = _points(columns)
    panels = []
    for i, (title, ratio) in enumerate(_METRICS):
        values = [p[1][i] for p in points]
        top = 1.0 if ratio else max([v for v in values if v is not None] + [1])
        bars = []
        for j, (value, (label, colour)) in enumerate(zip(values, series)):
            height = 0.0 if value is None else round(PLOT * value / top, 1)
            text = "-" if value is None else f"{value:.2f}" if ratio else _compact(value)
            bars.append(Bar(GAP + j * (BAR + GAP), TOP + PLOT - height, height, text, label, colour))
        panels.append(Panel(title, max(120, GAP + len(bars) * (BAR + GAP)), bars))
    return panels


def _compact(value: float) -> str:
    """A count short enough to stand above a bar: 950, 95.2k, 1.3M."""
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.1f}".removesuffix(".0") + suffix
    return str(int(value))


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("replio_replay.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.globals["fmt_cost"] = fmt_cost
    return env
