"""Human-readable reports of a fixture list and of runs, as lines and tables (formatting only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..diffing import Change
from ..recording.modes import RecordMode, record_flags
from .table import render_table

if TYPE_CHECKING:
    from ..golden.review import Approval
    from ..inventory import Inventory
    from ..results import FixtureResult, RunResult, Summary, TrialResult

__all__ = ["fmt_ratio", "write_fixture_list", "write_problems", "write_run"]


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


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


def _pass(r: FixtureResult) -> str:
    """`pass` or `FAIL`; with repeated trials, the trials that passed of those run (`2/3`)."""
    if r.trials:
        return f"{r.passes}/{r.n}"
    return "pass" if r.passed else "FAIL"


def _units(r: FixtureResult) -> list[TrialResult | FixtureResult]:
    return list(r.trials) if r.trials else [r]


def drift_cell(r: FixtureResult) -> str:
    """`-` no drift, `new` no golden yet (for some trial), else the number of changes (all trials)."""
    drifts = [u.drift for u in _units(r)]
    if any(d is None for d in drifts):
        return "new"
    count = sum(len(d or []) for d in drifts)
    return str(count) if count else "-"


def request_drift_cell(r: FixtureResult) -> str:
    """Blank when nothing was replayed, `-` when the requests matched, else the number of changes."""
    drifts = [u.request_drift for u in _units(r)]
    if all(d is None for d in drifts):
        return ""
    count = sum(len(d or []) for d in drifts)
    return str(count) if count else "-"


def _numbers(r: FixtureResult) -> tuple[str, str, str, str, str, str]:
    """status, accuracy, calls, redundant, errors, tokens: over every trial when there are several."""
    units = _units(r)
    statuses = "/".join(dict.fromkeys(u.status.value for u in units))
    accuracies = [u.accuracy for u in units if u.accuracy is not None]
    accuracy = sum(accuracies) / len(accuracies) if accuracies else None
    return (statuses, fmt_ratio(accuracy), str(sum(u.calls for u in units)), str(sum(u.redundant for u in units)),
            str(sum(u.errors for u in units)), str(sum(u.tokens for u in units)))


def write_run(run: RunResult, out: TextIO, *, rich: bool) -> None:
    columns = [
        ("fixture", "left"), ("status", "left"), ("pass", "left"), ("accuracy", "right"),
        ("calls", "right"), ("redundant", "right"), ("errors", "right"), ("tokens", "right"),
        ("drift", "right"), ("req drift", "right"), ("names", "left"),
    ]
    rows = []
    for r in run.fixtures:
        status, accuracy, calls, redundant, errors, tokens = _numbers(r)
        rows.append((r.id, status, _pass(r), accuracy, calls, redundant, errors, tokens, drift_cell(r),
                     request_drift_cell(r), " > ".join(r.names) or "-"))
    render_table(run.key.label, columns, rows, out, rich=rich)
    out.write(summary_line(run.summary) + "\n")
    if run.summary.trials:
        out.write(trials_line(run.summary) + "\n")
    for r in run.fixtures:
        if r.error:
            out.write(f"  {r.id}: {r.status.value}: {r.error}\n")
        elif r.reasons:
            out.write(f"  {r.id}: {'; '.join(r.reasons)}\n")
    write_drift_report(run, out, rich=rich)


def trials_line(s: Summary) -> str:
    """pass^k and pass@k for k = 1..n, and the flaky fixtures."""
    hats = "  ".join(f"pass^{k} {fmt_ratio(v)}" for k, v in (s.pass_hat_k or {}).items())
    ats = "  ".join(f"pass@{k} {fmt_ratio(v)}" for k, v in (s.pass_at_k or {}).items())
    flaky = f"  flaky: {', '.join(s.flaky)}" if s.flaky else ""
    return f"{s.trials} trials  {hats}  {ats}{flaky}"


def summary_line(s: Summary) -> str:
    return (
        f"{s.fixtures} fixtures  accuracy {fmt_ratio(s.accuracy)}  pass rate {fmt_ratio(s.pass_rate)}  "
        f"calls {s.calls}  redundant {s.redundant}  errors {s.errors}  tokens {s.tokens}  "
        f"drifted {s.drifted}  new {s.new}"
    )


_SIGN = {"added": "+", "removed": "-"}
_COLOUR = {"+": "green", "-": "red", "~": "yellow"}


def _change_line(change: dict[str, object]) -> tuple[str, str]:
    c = Change(str(change["path"]), str(change["kind"]), change.get("old"), change.get("new"))
    sign = next((v for k, v in _SIGN.items() if c.kind.endswith(k)), "~")
    return sign, f"    {sign} {c.describe()}"


def write_drift_report(run: RunResult, out: TextIO, *, rich: bool = False, full: bool = False) -> None:
    """Under the table: what drifted from the golden and which requests changed, per fixture.

    With `full`, fixtures without drift and without a golden are named too (for `diff`).
    """
    lines: list[tuple[str, str]] = []
    for r in run.fixtures:
        for unit in _units(r):
            name = r.id if not r.trials else f"{r.id} (trial {getattr(unit, 'trial', 1)})"
            if unit.drift:
                lines.append(("", f"  {name}: drift from golden ({len(unit.drift)} changes)"))
                lines.extend(_change_line(c) for c in unit.drift)
            elif full:
                lines.append(("", f"  {name}: {'no golden yet' if unit.drift is None else 'no drift'}"))
            if unit.request_drift:
                how = record_flags(RecordMode.ALL, r.id, run.tools)
                lines.append(("", f"  {name}: request drift ({len(unit.request_drift)} changes; re-record with "
                                  f"{how})"))
                lines.extend(_change_line(c) for c in unit.request_drift)
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


def write_approvals(approvals: Sequence[Approval], out: TextIO) -> None:
    """What --update-golden created, changed, left as it was, or refused."""
    for a in approvals:
        why = f" ({a.reason})" if a.reason else ""
        out.write(f"golden {a.action}: {a.key.label} {a.fixture_id}{why}\n")


def write_compare(runs: Sequence[RunResult], out: TextIO, *, rich: bool) -> None:
    """One column group per provider, then the fixtures whose verdicts differ, first."""
    columns = [("metric", "left"), *((r.key.label, "right") for r in runs)]
    metrics = [
        ("accuracy", lambda s: fmt_ratio(s.accuracy)),
        ("pass rate", lambda s: fmt_ratio(s.pass_rate)),
        ("calls", lambda s: str(s.calls)),
        ("redundant", lambda s: str(s.redundant)),
        ("errors", lambda s: str(s.errors)),
        ("tokens", lambda s: str(s.tokens)),
    ]
    rows = [(label, *(fn(r.summary) for r in runs)) for label, fn in metrics]
    most = max((r.summary.trials or 1 for r in runs), default=1)
    for k in range(1, most + 1) if most > 1 else ():
        rows.append((f"pass^{k}", *(fmt_ratio((r.summary.pass_hat_k or {}).get(str(k))) for r in runs)))
    render_table("summary", columns, rows, out, rich=rich)
    by_id = [{f.id: f for f in r.fixtures} for r in runs]
    ids = [f.id for f in runs[0].fixtures] if runs else []
    differ = [i for i in ids if len({(_pass(m[i]) if i in m else None) for m in by_id}) > 1]
    same = [i for i in ids if i not in differ]

    def cell(m: dict[str, FixtureResult], i: str) -> str:
        r = m.get(i)
        if r is None:
            return "-"
        status, accuracy, calls, *_ = _numbers(r)
        return f"{_pass(r)} {status} {accuracy} {calls}c"

    fx_columns = [("fixture", "left"), *((r.key.label, "left") for r in runs)]
    fx_rows = [(("* " if i in differ else "  ") + i, *(cell(m, i) for m in by_id)) for i in differ + same]
    out.write("\n")
    render_table("fixtures (* verdicts differ)", fx_columns, fx_rows, out, rich=rich)


def write_inventory(inv: Inventory, out: TextIO, *, rich: bool) -> None:
    """Per fixture × provider/model/tool set: cassette, golden, age, staleness; then the orphans."""
    columns = [("run", "left"), ("fixture", "left"), ("cassette", "left"), ("golden", "left"),
               ("recorded", "left"), ("age", "right"), ("stale", "left")]
    rows = []
    for e in inv.entries:
        age = e.age_days(inv.today)
        stale = ("; ".join(e.stale) or "-") if e.cassette else ""
        rows.append((e.key.label, e.fixture_id if e.trial == 1 else f"{e.fixture_id} (trial {e.trial})",
                     "yes" if e.cassette else "missing",
                     "yes" if e.golden else "missing", e.recorded or "-", "-" if age is None else f"{age}d",
                     stale))
    if rows:
        render_table(None, columns, rows, out, rich=rich)
    else:
        out.write("no cassettes or goldens yet\n")
    stale_count = sum(1 for e in inv.entries if e.stale)
    if stale_count:
        out.write(f"{stale_count} stale cassette{'s' if stale_count != 1 else ''}: re-record with "
                  "--record-mode all --fixture ID (and --tools NAME for a tool set)\n")
    if inv.orphans:
        out.write(f"orphans ({len(inv.orphans)}): files for fixtures that no longer exist\n")
        out.write("".join(f"  {p}\n" for p in inv.orphans))
