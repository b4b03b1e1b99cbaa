"""Reading BFCL's data where it lies: a `bfcl-eval` wheel, an installed `bfcl_eval` package, or a folder.

BFCL ships each category as `BFCL_v<N>_<category>.json` (one JSON object a line) and its
possible answers under `possible_answer/` with the same name. `bfcl-eval` is read as data,
never imported: it is no dependency of replio-replay.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import UsageError

__all__ = ["BfclData", "Category", "open_bfcl"]

_FILE = re.compile(r"BFCL_v(\d+)_([a-z_]+)\.json")
_HINT = ("give a bfcl-eval wheel (.whl), an installed bfcl_eval package folder, or a folder holding "
         "BFCL_v4_<category>.json files and possible_answer/")


@dataclass(frozen=True)
class Category:
    """One category's cases and possible answers (by case id), as read."""

    cases: list[dict[str, Any]]
    answers: dict[str, dict[str, Any]]


class BfclData:
    """The data files of one source: names relative to its data folder -> text, read on demand."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self._files = _listing(source)
        found: dict[str, tuple[int, str]] = {}
        for name in self._files:
            m = _FILE.fullmatch(name)
            if m and (m[2] not in found or int(m[1]) > found[m[2]][0]):
                found[m[2]] = (int(m[1]), name)
        if not found:
            raise UsageError(f"{source}: no BFCL data files found (BFCL_v4_<category>.json); {_HINT}")
        self._latest = {category: name for category, (_, name) in found.items()}

    @property
    def categories(self) -> list[str]:
        """The categories the source holds."""
        return sorted(self._latest)

    def read(self, category: str) -> Category:
        """The cases of `category` and their possible answers (none for the irrelevance categories)."""
        name = self._latest[category]
        cases = _lines(self._files[name](), f"{self.source}: {name}")
        answer_file = f"possible_answer/{name}"
        answers: dict[str, dict[str, Any]] = {}
        if answer_file in self._files:
            for line in _lines(self._files[answer_file](), f"{self.source}: {answer_file}"):
                answers[str(line.get("id"))] = line
        return Category(cases, answers)


def open_bfcl(source: Path) -> BfclData:
    """The BFCL data of `source`; UsageError when it holds none."""
    if not source.exists():
        raise UsageError(f"{source}: no such file or folder; {_HINT}")
    return BfclData(source)


def _listing(source: Path) -> dict[str, Any]:
    """Data file name (relative to the data folder) -> a function returning its text."""
    if source.is_file():
        return _wheel(source)
    base = source / "data" if (source / "data").is_dir() else source
    if (base / "bfcl_eval" / "data").is_dir():  # a site-packages-like folder holding the package
        base = base / "bfcl_eval" / "data"
    files: dict[str, Any] = {}
    for path in [*base.glob("BFCL_v*.json"), *base.glob("possible_answer/BFCL_v*.json")]:
        files[path.relative_to(base).as_posix()] = (lambda p=path: p.read_text(encoding="utf-8"))
    return files


def _wheel(source: Path) -> dict[str, Any]:
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UsageError(f"{source}: not a wheel or zip file ({exc}); {_HINT}") from None
    files: dict[str, Any] = {}
    for member in archive.namelist():
        path = PurePosixPath(member)
        parts = path.parts
        if "data" not in parts:
            continue
        rel = PurePosixPath(*parts[parts.index("data") + 1:]).as_posix()
        if _FILE.fullmatch(path.name) and rel in (path.name, f"possible_answer/{path.name}"):
            files[rel] = (lambda m=member: archive.read(m).decode("utf-8"))
    return files


def _lines(text: str, where: str) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: line {number} is not JSON ({exc.msg}); is this BFCL's data?") from None
        if not isinstance(item, dict):
            raise UsageError(f"{where}: line {number} is not a JSON object; is this BFCL's data?")
        out.append(item)
    return out
