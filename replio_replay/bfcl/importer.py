"""`replio eval import bfcl`: BFCL's cases written as fixture files, one per case, idempotently.

A file is written (atomically) only when its content changes, so importing again changes
nothing; a case that cannot be converted is a problem naming it and why, and the others are
still written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._runtime.atomic import atomic_write
from ..errors import BenchmarkError, UsageError
from .convert import BFCL_CATEGORIES, to_fixture
from .source import open_bfcl

__all__ = ["DEFAULT_OUT", "ImportReport", "import_bfcl", "render"]

#: Where the fixtures go, relative to the project.
DEFAULT_OUT = Path(".replio") / "eval" / "bfcl"


@dataclass
class ImportReport:
    """What an import did, per category, and the cases it skipped."""

    written: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    problems: list[BenchmarkError] = field(default_factory=list)


def render(fixture: dict[str, Any]) -> str:
    """A fixture's file text: the one way BFCL fixtures are written (so a re-import compares equal)."""
    return json.dumps(fixture, indent=2, ensure_ascii=False) + "\n"


def import_bfcl(source: Path, out: Path, categories: Sequence[str] = (), limit: int | None = None) -> ImportReport:
    """Write the first `limit` cases (all by default) of each category (all known by default) of
    `source` into `out`; UsageError for a source or category that cannot be used."""
    unknown = [c for c in categories if c not in BFCL_CATEGORIES]
    if unknown:
        raise UsageError(f"unknown BFCL category {unknown[0]!r}; the importer takes: {', '.join(BFCL_CATEGORIES)}")
    data = open_bfcl(source)
    wanted = list(dict.fromkeys(categories)) or [c for c in BFCL_CATEGORIES if c in data.categories]
    missing = [c for c in wanted if c not in data.categories]
    if missing:
        raise UsageError(f"{source} holds no BFCL category {missing[0]!r}; it holds: {', '.join(data.categories)}")
    report = ImportReport()
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for category in wanted:
        read = data.read(category)
        written = unchanged = 0
        for case in read.cases[:limit]:
            try:
                fixture = to_fixture(case, read.answers.get(str(case.get("id"))), category)
                path = _target(out, str(case["id"]), fixture["id"], seen)
            except BenchmarkError as exc:
                report.problems.append(exc)
                continue
            if _write(path, render(fixture)):
                written += 1
            else:
                unchanged += 1
        report.written[category], report.unchanged[category] = written, unchanged
    return report


def _target(out: Path, case_id: str, fixture_id: str, seen: set[str]) -> Path:
    """The file of case `case_id`'s fixture in `out`, once per import; BenchmarkError for an id
    seen before or a path that would leave `out` (a symbolic link there, say)."""
    if fixture_id in seen:
        raise BenchmarkError(case_id, "the id is used by an earlier case of this import, whose file is kept; "
                             "give each case an id of its own")
    seen.add(fixture_id)
    path = out / f"{fixture_id}.json"
    if not path.resolve().is_relative_to(out.resolve()):
        raise BenchmarkError(case_id, f"{path} leads outside {out} (to {path.resolve()}); nothing was written "
                             "there, remove that link")
    return path


def _write(path: Path, text: str) -> bool:
    """Write `text` unless the file already holds it; whether it was written."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    atomic_write(path, text)
    return True
