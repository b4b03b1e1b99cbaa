"""Human-readable reports of a fixture list and of runs, as lines and tables (formatting only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..fixtures.discovery import Catalog
from ..results import FixtureResult, RunResult, Summary
from .table import render_table

__all__ = ["fmt_ratio", "write_fixture_list", "write_problems", "write_run"]


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def write_fixture_list(catalog: Catalog, out: TextIO, *, rich: bool) -> None:
    rows = [(f.fixture.id, f.source, f.fixture.description) for f in catalog.sorted()]
    render_table(None, [("id", "left"), ("source", "left"), ("description", "left")], rows, out, rich=rich)


def write_problems(problems: Sequence[tuple[str, str]], out: TextIO) -> None:
    """Broken fixture files, one line each, so the user can fix them."""
    for file, message in problems:
        out.write(f"skipped {file}: {message}\n")


def _pass(r: FixtureResult) -> str:
    return "pass" if r.passed else "FAIL"


def write_run(run: RunResult, out: TextIO, *, rich: bool) -> None:
    columns = [
        ("fixture", "left"), ("status", "left"), ("pass", "left"), ("accuracy", "right"),
        ("calls", "right"), ("redundant", "right"), ("errors", "right"), ("tokens", "right"),
        ("names", "left"),
    ]
    rows = [
        (r.id, r.status.value, _pass(r), fmt_ratio(r.accuracy), str(r.calls), str(r.redundant),
         str(r.errors), str(r.tokens), " > ".join(r.names) or "-")
        for r in run.fixtures
    ]
    render_table(f"{run.provider}:{run.model}", columns, rows, out, rich=rich)
    out.write(summary_line(run.summary) + "\n")
    for r in run.fixtures:
        if r.error:
            out.write(f"  {r.id}: {r.status.value}: {r.error}\n")
        elif r.reasons:
            out.write(f"  {r.id}: {'; '.join(r.reasons)}\n")


def summary_line(s: Summary) -> str:
    return (
        f"{s.fixtures} fixtures  accuracy {fmt_ratio(s.accuracy)}  pass rate {fmt_ratio(s.pass_rate)}  "
        f"calls {s.calls}  redundant {s.redundant}  errors {s.errors}  tokens {s.tokens}"
    )


def write_compare(runs: Sequence[RunResult], out: TextIO, *, rich: bool) -> None:
    """One column group per provider, then the fixtures whose verdicts differ, first."""
    columns = [("metric", "left"), *((f"{r.provider}:{r.model}", "right") for r in runs)]
    metrics = [
        ("accuracy", lambda s: fmt_ratio(s.accuracy)),
        ("pass rate", lambda s: fmt_ratio(s.pass_rate)),
        ("calls", lambda s: str(s.calls)),
        ("redundant", lambda s: str(s.redundant)),
        ("errors", lambda s: str(s.errors)),
        ("tokens", lambda s: str(s.tokens)),
    ]
    rows = [(label, *(fn(r.summary) for r in runs)) for label, fn in metrics]
    render_table("summary", columns, rows, out, rich=rich)
    by_id = [{f.id: f for f in r.fixtures} for r in runs]
    ids = [f.id for f in runs[0].fixtures] if runs else []
    differ = [i for i in ids if len({(m[i].passed if i in m else None) for m in by_id}) > 1]
    same = [i for i in ids if i not in differ]

    def cell(m: dict[str, FixtureResult], i: str) -> str:
        r = m.get(i)
        if r is None:
            return "-"
        return f"{_pass(r)} {r.status.value} {fmt_ratio(r.accuracy)} {r.calls}c"

    fx_columns = [("fixture", "left"), *((f"{r.provider}:{r.model}", "left") for r in runs)]
    fx_rows = [(("* " if i in differ else "  ") + i, *(cell(m, i) for m in by_id)) for i in differ + same]
    out.write("\n")
    render_table("fixtures (* verdicts differ)", fx_columns, fx_rows, out, rich=rich)
