"""Tables: a rich table on a terminal, plain aligned text when piped (rich is imported only then)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

__all__ = ["Column", "render_table"]

Column = tuple[str, str]  # (header, "left" | "right")


def render_table(
    title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO, *, rich: bool
) -> None:
    """Write one table to `out`."""
    if rich:
        _rich_table(title, columns, rows, out)
    else:
        _plain_table(title, columns, rows, out)


def _plain_table(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, (h, _) in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if align == "right" else c.ljust(w)
            for c, w, (_, align) in zip(cells, widths, columns)
        ]
        return "  ".join(parts).rstrip()

    if title:
        out.write(title + "\n")
    out.write(line([h for h, _ in columns]) + "\n")
    out.write(line(["-" * w for w in widths]) + "\n")
    for row in rows:
        out.write(line(row) + "\n")


def _rich_table(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", header_style="bold")
    for header, align in columns:
        table.add_column(header, justify="right" if align == "right" else "left")
    for row in rows:
        table.add_row(*row)
    Console(file=out, highlight=False, markup=False).print(table)
