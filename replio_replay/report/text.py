"""Human-readable reports of a fixture list and of runs, as lines and tables (formatting only)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .._runtime.diffing import Change
from .._runtime.wording import plural
from ..judge.metrics import units
from ..judge.results import Status
from ..prices import dollars
from ..recording.again import fixture_hint, run_hint, stale_judge_alone
from .table import plain_lines, render_table, table_width

if TYPE_CHECKING:
    from ..golden.review import Approval
    from ..judge.baseline import Comparison
    from ..judge.results import FixtureResult, RunResult, Summary, TrialResult
    from .inventory import Inventory

__all__ = ["baseline_line", "comparison_line", "compared", "describe_change", "drift_text", "fmt_cost", "fmt_metric",
           "fmt_rate", "fmt_ratio", "fmt_usd", "has_cost", "request_drift_text", "skipped_line", "units", "whose",
           "write_fixture_list", "write_problems", "write_run"]


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def fmt_rate(s: Summary, metric: str, value: float | None) -> str:
    """A rate with its 95 % interval when the summary has one: ``0.62 [0.41, 0.79]``."""
    ci = (s.ci95 or {}).get(metric)
    if value is None or ci is None:
        return fmt_ratio(value)
    return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def comparison_line(c: dict[str, Any]) -> str:
    """One paired comparison as the table prints it: `B vs A: pass rate +0.07 [-0.09, +0.23], p = 0.41,
    no detectable difference (detects ±0.18; about 190 fixtures for ±0.07)`: what this suite
    detects, and about how many fixtures would detect the difference seen."""
    name = c["metric"].replace("_", " ")
    detects = "no spread to tell what it detects" if c["mde"] is None else f"detects ±{c['mde']:.2f}"
    if c["verdict"] == "no detectable difference" and c.get("needed") and round(abs(c["diff"]), 2):
        detects += f"; about {c['needed']} fixtures for ±{abs(c['diff']):.2f}"
    return (f"{c['b']} vs {c['a']}: {name} {c['diff']:+.2f} [{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}], "
            f"p = {c['p_value']:.2g}, {c['verdict']} ({detects})")


def fmt_usd(value: float | None) -> str:
    """USD as `$` and its `dollars` (a cheap fixture costs fractions of a cent); `-` for none."""
    return "-" if value is None else f"${dollars(value)}"


def fmt_cost(of: Summary | FixtureResult) -> str:
    """A fixture's or a summary's cost: `fmt_usd`, or `unknown` when an answer gave no token counts."""
    return "unknown" if of.cost_unknown else fmt_usd(of.cost)


def has_cost(summary: Summary) -> bool:
    """Whether a run's reports show a cost: it has one, or one that is unknown (its model has a price)."""
    return summary.cost is not None or bool(summary.cost_unknown)


def write_fixture_list(fixtures: Sequence[dict[str, Any]], out: TextIO, *, rich: bool) -> None:
    """One row per fixture: id, source, tags (when any fixture has some), description (the
    `list --output json` entries)."""
    tagged = any(f["tags"] for f in fixtures)
    columns = [("id", "left"), ("source", "left"), *([("tags", "left")] if tagged else []), ("description", "left")]
    rows = [(f["id"], f["source"], *([",".join(f["tags"]) or "-"] if tagged else []), f["description"])
            for f in fixtures]
    render_table(None, columns, rows, out, rich=rich)


def write_problems(problems: Sequence[tuple[str, str]], out: TextIO) -> None:
    """Broken fixture files, one line each, so the user can fix them."""
    for file, message in problems:
        out.write(f"skipped {file}: {message}\n")


def skipped_line(problems: Sequence[tuple[str, str]]) -> str:
    """The line under a table that names the files skipped (why is on stderr); '' when none was."""
    files = list(dict.fromkeys(file for file, _ in problems))
    if not files:
        return ""
    return f"skipped {len(files)} (see stderr for why): {', '.join(files)}"


def compared(unit: TrialResult | FixtureResult) -> bool:
    """Whether `unit` was compared with its golden: not when it ended in error or was cancelled."""
    return unit.status.value not in ("error", "cancelled")


def drift_cell(r: FixtureResult) -> str:
    """`-` no drift, `new` no golden yet (for some trial), else the number of changes (all trials);
    blank when no trial was compared with its golden."""
    return drift_text([u.drift for u in units(r) if compared(u)])


def drift_text(drifts: Sequence[list[dict[str, object]] | None]) -> str:
    """`drift_cell` of these trials' drifts (those compared with their golden)."""
    if not drifts:
        return ""
    if any(d is None for d in drifts):
        return "new"
    count = sum(len(d or []) for d in drifts)
    return str(count) if count else "-"


def request_drift_cell(r: FixtureResult) -> str:
    """Blank when nothing was replayed, `-` when the requests matched, else the number of changes."""
    return request_drift_text([u.request_drift for u in units(r)])


def request_drift_text(drifts: Sequence[list[dict[str, object]] | None]) -> str:
    """`request_drift_cell` of these trials' request drifts."""
    if all(d is None for d in drifts):
        return ""
    count = sum(len(d or []) for d in drifts)
    return str(count) if count else "-"


def _numbers(r: FixtureResult) -> tuple[str, str, str, str, str, str]:
    """status, accuracy, calls, redundant, errors, tokens: over every trial when there are several
    (the cost, when known, is `fmt_usd(r.cost)`: already over every trial)."""
    each = units(r)
    statuses = "/".join(dict.fromkeys(u.status.value for u in each))
    accuracies = [u.accuracy for u in each if u.accuracy is not None]
    accuracy = sum(accuracies) / len(accuracies) if accuracies else None
    return (statuses, fmt_ratio(accuracy), str(sum(u.calls for u in each)), str(sum(u.redundant for u in each)),
            str(sum(u.errors for u in each)), str(sum(u.tokens for u in each)))


RUN_COLUMNS = [
    ("fixture", "left"), ("status", "left"), ("pass", "left"), ("accuracy", "right"),
    ("calls", "right"), ("redundant", "right"), ("errors", "right"), ("tokens", "right"),
    ("drift", "right"), ("req drift", "right"), ("names", "left"),
]
#: The headers of a narrow table (one that would not fit the width otherwise), and their key.
NARROW_HEADERS = {"accuracy": "acc", "redundant": "red", "errors": "err", "req drift": "req", "baseline": "was"}
NARROW_KEY = "key: acc accuracy, red redundant, err errors, req request drift"
NARROW_BASELINE_KEY = ", was the verdict in the baseline"


def write_run(run: RunResult, out: TextIO, *, rich: bool, width: int | None = None,
              comparison: Comparison | None = None, paired: Sequence[dict[str, Any]] = ()) -> None:
    """The run's table, summary and findings. When the table is wider than `width`, the names
    move under their row, wrapped whole, and long headers shorten: ids and statuses are never cut.
    With a `comparison`, a column gives each fixture's verdict in the baseline, the fixtures that
    passed there and fail now come first (marked `!`), and a line under the summary gives the deltas."""
    priced = has_cost(run.summary)
    columns = _run_columns(priced, comparison is not None)
    regressed = {c.id for c in comparison.regressed} if comparison else set()
    rows = []
    for r in sorted(run.fixtures, key=lambda r: r.id not in regressed):
        status, accuracy, calls, redundant, errors, tokens = _numbers(r)
        was = [comparison.verdicts.get(r.id, "new")] if comparison else []
        rows.append((f"! {r.id}" if r.id in regressed else r.id, status, r.verdict, *was, accuracy, calls, redundant,
                     errors, tokens, *([fmt_cost(r)] if priced else []), drift_cell(r),
                     request_drift_cell(r), " > ".join(map(r.shown, r.names)) or "-"))
    chrome = 3 * len(columns) + 1 if rich else 0  # a rich table's borders and padding
    if width is not None and table_width(columns, rows) + chrome > width:
        _write_narrow(run.label, columns, rows, out, width)
    else:
        render_table(run.label, columns, rows, out, rich=rich)
    summary = summary_line(run.summary)
    out.write((textwrap.fill(summary, width, break_long_words=False) if width else summary) + "\n")
    if run.summary.trials:
        out.write(trials_line(run.summary) + "\n")
    if comparison is not None:
        line = baseline_line(comparison, run.summary)
        out.write((textwrap.fill(line, width, break_long_words=False) if width else line) + "\n")
    for c in paired:
        line = comparison_line(c)
        out.write((textwrap.fill(line, width, break_long_words=False) if width else line) + "\n")
    write_findings(run, out, rich=rich)


def baseline_line(comparison: Comparison, now: Summary) -> str:
    """Each metric against the baseline's, and how many fixtures passed there and fail now."""
    deltas = "  ".join(f"{name} {fmt_metric(name, before)} -> {fmt_metric(name, after)}"
                       for name, (before, after) in comparison.metrics(now).items())
    said = f"baseline {comparison.origin} ({comparison.baseline.key.label}): {deltas}"
    regressed = [c.id for c in comparison.regressed]
    if regressed:
        said += f"; {plural(len(regressed), 'fixture')} passed there and fail now (marked !): {', '.join(regressed)}"
    if comparison.fixed:
        said += f"; fixed since: {', '.join(c.id for c in comparison.fixed)}"
    return said


def fmt_metric(name: str, value: float | None) -> str:
    """A summary metric as the reports write it: USD, a count, or a fraction."""
    if name == "cost":
        return fmt_usd(value)
    if name in ("errors", "tokens"):
        return "-" if value is None else f"{value:.0f}"
    return fmt_ratio(value)


def _run_columns(priced: bool, baseline: bool) -> list[tuple[str, str]]:
    """`RUN_COLUMNS`, with the verdict in the baseline after this run's, and a cost column after
    the tokens when the run's price is known."""
    columns = list(RUN_COLUMNS)
    if priced:
        columns.insert(columns.index(("tokens", "right")) + 1, ("cost", "right"))
    if baseline:
        columns.insert(columns.index(("pass", "left")) + 1, ("baseline", "left"))
    return columns


def _write_narrow(title: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], out: TextIO,
                  width: int) -> None:
    columns = [(NARROW_HEADERS.get(h, h), align) for h, align in columns[:-1]]
    lines = plain_lines(title, columns, [row[:-1] for row in rows], gap=" ")
    out.write("".join(line + "\n" for line in lines[:3]))
    for line, row in zip(lines[3:], rows):
        out.write(line + "\n")
        if row[-1] != "-":
            out.write(textwrap.fill(row[-1], width, initial_indent="    ", subsequent_indent="    ",
                                    break_long_words=False, break_on_hyphens=False) + "\n")
    out.write(NARROW_KEY + (NARROW_BASELINE_KEY if ("was", "left") in columns else "") + "\n")


def write_findings(run: RunResult, out: TextIO, *, rich: bool) -> None:
    """Why fixtures failed or errored, then their drift: the lines under a run's table."""
    for r in run.fixtures:
        if r.error:  # why it errored, or why it stopped short (the context window was full)
            out.write(f"  {r.id}: {r.status.value}: {r.error}\n")
        if r.reasons and not (r.error and r.status in (Status.ERROR, Status.CANCELLED)):
            out.write(f"  {r.id}: {'; '.join(r.shown_reasons)}\n")
    write_drift_report(run, out, rich=rich)


def has_findings(run: RunResult) -> bool:
    """Whether `write_findings` has anything to say about `run`."""
    return any(r.error or r.reasons or any(u.drift or u.drift_info or u.request_drift for u in units(r)) for r in run.fixtures)


def trials_line(s: Summary) -> str:
    """pass^k and pass@k for k = 1..n, and the flaky fixtures."""
    hats = "  ".join(f"pass^{k} {fmt_rate(s, f'pass^{k}', v)}" for k, v in (s.pass_hat_k or {}).items())
    ats = "  ".join(f"pass@{k} {fmt_ratio(v)}" for k, v in (s.pass_at_k or {}).items())
    flaky = f"  flaky: {', '.join(s.flaky)}" if s.flaky else ""
    return f"{s.trials} trials  {hats}  {ats}{flaky}"


def summary_line(s: Summary) -> str:
    return (
        f"{plural(s.fixtures, 'fixture')}  accuracy {fmt_rate(s, 'accuracy', s.accuracy)}  "
        f"pass rate {fmt_rate(s, 'pass_rate', s.pass_rate)}  "
        f"calls {s.calls}  redundant {s.redundant}  errors {s.errors}  tokens {s.tokens}  "
        + (f"cost unknown (no token counts for {plural(s.cost_unknown, 'fixture')})  " if s.cost_unknown
           else f"cost {fmt_usd(s.cost)}  " if s.cost is not None else "")
        + f"drifted {s.drifted}  new {s.new}"
        + (f"  unjudged {s.unjudged} (no verifier yet; not in the pass rate)" if s.unjudged else "")
    )


_SIGN = {"added": "+", "removed": "-"}
_COLOUR = {"+": "green", "-": "red", "~": "yellow"}


def describe_change(change: dict[str, object]) -> tuple[str, str]:
    """A drift item (golden or request) as its sign (`+`, `-`, `~`) and one line saying what changed."""
    c = Change(str(change["path"]), str(change["kind"]), change.get("old"), change.get("new"))
    return next((v for k, v in _SIGN.items() if c.kind.endswith(k)), "~"), c.describe()


def _change_line(change: dict[str, object], prefix: str = "") -> tuple[str, str]:
    sign, text = describe_change(change)
    return sign, f"    {sign} {prefix}{text}"


def whose(change: dict[str, object]) -> str:
    """Whose request a request-drift change is, as a line names it: "" for the agent's, else
    `` (user)``."""
    role = change.get("role", "agent")
    return "" if role == "agent" else f" ({role})"


def write_drift_report(run: RunResult, out: TextIO, *, rich: bool = False, full: bool = False) -> None:
    """Under the table: per fixture, one line saying how it compares with its golden and with the
    recorded requests, then each change (those of the requests marked `request`, token counts that
    do not count as drift marked `info`).

    With `full` (for `diff`), every fixture has its line: no drift, no golden yet, or the error that
    kept it from being compared.
    """
    lines: list[tuple[str, str]] = []
    for r in run.fixtures:
        for unit in units(r):
            head = _comparison(unit, r.id, run.tools, full=full)
            if not head:
                continue
            name = r.id if not r.trials else f"{r.id} (trial {getattr(unit, 'trial', 1)})"
            lines.append(("", f"  {name}: {head}"))
            lines.extend((sign, r.shown_text(text)) for sign, text in map(_change_line, unit.drift or []))
            lines.extend(_change_line(c, "info: ") for c in unit.drift_info or [])
            lines.extend(_change_line(c, f"request{whose(c)}: ") for c in unit.request_drift or [])
    if not lines:
        return
    if full:
        out.write(f"{run.key.label}\n")
    if not rich:
        out.write("".join(text + "\n" for _, text in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False)
    for sign, text in lines:
        console.print(Text(text, style=_COLOUR.get(sign, "")))


def _comparison(unit: TrialResult | FixtureResult, fixture_id: str, tools: str, *, full: bool) -> str:
    """How one result compares with its golden and its recorded requests, as one phrase each."""
    parts = []
    if not compared(unit):
        if full:
            parts.append(f"{unit.status.value}, not compared with its golden: {unit.error}")
    elif unit.drift:
        parts.append(f"drift from golden ({plural(len(unit.drift), 'change')})")
    elif full:
        parts.append("no golden yet" if unit.drift is None else "no drift from golden")
    if unit.drift_info:
        parts.append("token count changed (within tokens_tolerance: not drift)")
    if unit.request_drift:
        hint = fixture_hint(unit.request_drift, fixture_id, tools)
        parts.append(f"request drift ({plural(len(unit.request_drift), 'change')}; {hint})")
    elif full and unit.request_drift == []:
        parts.append("requests as recorded")
    return "; ".join(parts)


def write_approvals(approvals: Sequence[Approval], out: TextIO) -> None:
    """What --update-golden created, changed or refused, one line each, then the counts per run
    (unchanged goldens are only counted)."""
    for a in approvals:
        if a.action != "unchanged":
            why = f" ({a.reason})" if a.reason else ""
            which = a.fixture_id if a.trial == 1 else f"{a.fixture_id} (trial {a.trial})"
            out.write(f"golden {a.action}: {a.key.label} {which}{why}\n")
    by_run: dict[str, dict[str, int]] = {}
    for a in approvals:
        counts = by_run.setdefault(a.key.label, dict.fromkeys(("created", "updated", "unchanged", "refused"), 0))
        counts[a.action] = counts.get(a.action, 0) + 1
    for label, counts in by_run.items():
        shown = ", ".join(f"{n} {action}" for action, n in counts.items() if n or action != "refused")
        out.write(f"goldens approved for {label}: {shown}\n")


def write_compare(runs: Sequence[RunResult], out: TextIO, *, rich: bool,
                  comparisons: Sequence[Comparison | None] = (), paired: Sequence[dict[str, Any]] = ()) -> None:
    """One column group per provider, then the fixtures: those that passed in a run's baseline
    and fail now first (marked `!`), then those whose verdicts differ (`*`), then the rest; under
    the tables, each run's line against its baseline."""
    columns = [("metric", "left"), *((r.key.label, "right") for r in runs)]
    metrics = [
        ("accuracy", lambda s: fmt_rate(s, "accuracy", s.accuracy)),
        ("pass rate", lambda s: fmt_rate(s, "pass_rate", s.pass_rate)),
        ("calls", lambda s: str(s.calls)),
        ("redundant", lambda s: str(s.redundant)),
        ("errors", lambda s: str(s.errors)),
        ("tokens", lambda s: str(s.tokens)),
    ]
    if any(has_cost(r.summary) for r in runs):
        metrics.append(("cost", fmt_cost))
    rows = [(label, *(fn(r.summary) for r in runs)) for label, fn in metrics]
    most = max((r.summary.trials or 1 for r in runs), default=1)
    for k in range(1, most + 1) if most > 1 else ():
        rows.append((f"pass^{k}", *(fmt_rate(r.summary, f"pass^{k}", (r.summary.pass_hat_k or {}).get(str(k)))
                                     for r in runs)))
    render_table("summary", columns, rows, out, rich=rich)
    by_id = [{f.id: f for f in r.fixtures} for r in runs]
    ids = [f.id for f in runs[0].fixtures] if runs else []
    regressed = list(dict.fromkeys(c.id for cmp in comparisons if cmp for c in cmp.regressed))
    differ = [i for i in ids if len({(m[i].verdict if i in m else None) for m in by_id}) > 1 and i not in regressed]
    same = [i for i in ids if i not in differ and i not in regressed]

    def cell(m: dict[str, FixtureResult], i: str) -> str:
        r = m.get(i)
        if r is None:
            return "-"
        status, accuracy, calls, *_ = _numbers(r)
        drift = drift_cell(r)
        golden = " no golden" if drift == "new" else "" if drift in ("-", "") else f" drift {drift}"
        return f"{r.verdict} {status} {accuracy} {calls}c{golden}"

    fx_columns = [("fixture", "left"), *((r.key.label, "left") for r in runs)]
    marks = {**dict.fromkeys(differ, "* "), **dict.fromkeys(regressed, "! ")}
    fx_rows = [(marks.get(i, "  ") + i, *(cell(m, i) for m in by_id)) for i in regressed + differ + same]
    out.write("\n")
    title = "fixtures (! passed in the baseline, fail now; * verdicts differ)" if regressed \
        else "fixtures (* verdicts differ)"
    render_table(title, fx_columns, fx_rows, out, rich=rich)
    out.write(COMPARE_LEGEND + "\n")
    for run, comparison in zip(runs, comparisons):
        if comparison is not None:
            out.write(f"{run.key.label}: {baseline_line(comparison, run.summary)}\n")
    for c in paired:
        out.write(comparison_line(c) + "\n")
    for run in runs:
        if has_findings(run):
            out.write(f"\n{run.key.label}\n")
            write_findings(run, out, rich=rich)


#: What a cell of the compare table holds.
COMPARE_LEGEND = ("each cell: verdict (pass/FAIL, or trials passed/run), status, accuracy, calls (c), and "
                  "'no golden' or 'drift N' (changes from the golden); - the fixture was not in that run")


def write_inventory(inv: Inventory, out: TextIO, *, rich: bool) -> None:
    """Per fixture × provider/model/tool set: cassette, golden, age, staleness; then the orphans."""
    columns = [("run", "left"), ("fixture", "left"), ("cassette", "left"), ("golden", "left"),
               ("recorded", "left"), ("age", "right"), ("stale", "left")]
    rows = []
    for e in inv.entries:
        age = e.age_days(inv.today)
        stale = ("; ".join(e.stale) or "-") if e.cassette else ""
        rows.append((e.key.label, e.fixture_id if e.trial == 1 else f"{e.fixture_id} (trial {e.trial})",
                     ("synthesized from a trace" if e.synthesized else "yes") if e.cassette
                     else "scripted" if e.scripted else "missing",
                     "yes" if e.golden else "missing", e.recorded or "-", "-" if age is None else f"{age}d",
                     stale))
    if rows:
        render_table(None, columns, rows, out, rich=rich)
    else:
        out.write("no cassettes or goldens yet\n")
    for judge, which in ((False, ""), (True, " whose judge alone changed")):
        count = sum(1 for e in inv.entries if e.stale and stale_judge_alone(e.stale) is judge)
        if count:
            out.write(f"{plural(count, 'stale cassette')}{which}: {run_hint(judge)} (and --tools NAME for a tool set)\n")
    if inv.orphans:
        out.write(f"orphans ({len(inv.orphans)}): files for fixtures that no longer exist\n")
        out.write("".join(f"  {p}\n" for p in inv.orphans))
