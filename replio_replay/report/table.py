"""Tables: a rich table on a terminal, plain aligned text when piped (rich is imported only then)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from typing import TextIO

from .._runtime.terminal import printable

__all__ = ["Column", "output_width", "plain_lines", "render_table", "table_width"]

Column = tuple[str, str]  # (header, "left" | "right")


def render_table(
    title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO, *, rich: bool
) -> None:
    """Write one table to `out`, its text `printable` (ids and descriptions come from files)."""
    title = printable(title) if title else title
    rows = [[printable(cell) for cell in row] for row in rows]
    if rich:
        _rich_table(title, columns, rows, out)
    else:
        _plain_table(title, columns, rows, out)


def output_width(terminal: bool, env: Mapping[str, str]) -> int | None:
    """The width tables must fit: the terminal's, or `COLUMNS` when set; None (any) on a pipe."""
    if terminal:
        return shutil.get_terminal_size().columns
    columns = env.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def table_width(columns: Sequence[Column], rows: Sequence[Sequence[str]], gap: str = "  ") -> int:
    """The width of the plain table of `rows`."""
    return sum(_widths(columns, rows)) + len(gap) * (len(columns) - 1)


def _widths(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([len(h), *(len(r[i]) for r in rows)]) for i, (h, _) in enumerate(columns)]


def plain_lines(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                gap: str = "  ") -> list[str]:
    """The plain table as lines: the title (if any), the headers, a rule, then one line per row."""
    widths = _widths(columns, rows)

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if align == "right" else c.ljust(w)
            for c, w, (_, align) in zip(cells, widths, columns)
        ]
        return gap.join(parts).rstrip()

    return [*([title] if title else []), line([h for h, _ in columns]), line(["-" * w for w in widths]),
            *(line(row) for row in rows)]


def _plain_table(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    out.write("".join(line + "\n" for line in plain_lines(title, columns, rows)))


def _rich_table(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", header_style="bold")
    for i, (header, align) in enumerate(columns):
        # the first columns (ids, statuses) never wrap; the rest may, at word boundaries
        table.add_column(header, justify="right" if align == "right" else "left", no_wrap=i < 2)
    for row in rows:
        table.add_row(*row)
    Console(file=out, highlight=False, markup=False).print(table)
