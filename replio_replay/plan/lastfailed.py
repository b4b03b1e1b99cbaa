"""The fixtures that did not pass in a project's previous runs, for `--last-failed` (pytest's `--lf`).

Every `run` and `diff` updates one small JSON file per project under the cache folder, as
pytest updates its own: a fixture that ran is recorded as failed or forgotten by how it ended
this time (not `ok`, or its verifier failed, in any provider × tool set run or trial); a
fixture that did not run (not selected, or cancelled by an interrupt) keeps what was recorded.
`load` and `save` are the only I/O; the rest is pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._runtime.atomic import atomic_write
from .._runtime.env import project_file
from .._runtime.jsonin import read_json
from .._runtime.wording import plural
from ..judge.metrics import units
from ..judge.results import RunResult, Status

__all__ = ["load", "narrow", "save", "updated"]


def load(cache: Path, project: Path) -> set[str] | None:
    """The ids recorded as not passing for `project`; None when no run was recorded (or the record is unreadable)."""
    try:
        data = read_json(project_file(cache, project, "lastfailed").read_text(encoding="utf-8"))
        return {i for i in data["failed"] if isinstance(i, str)}
    except (OSError, ValueError, TypeError, KeyError):  # JsonProblem is a ValueError
        return None


def save(cache: Path, project: Path, failed: Iterable[str]) -> None:
    """Record `failed` as the ids that did not pass in `project`; a cache that cannot be written is let be."""
    text = json.dumps({"project": str(project.resolve()), "failed": sorted(failed)}, indent=1) + "\n"
    try:
        atomic_write(project_file(cache, project, "lastfailed"), text)
    except OSError:
        pass


def updated(previous: set[str] | None, runs: Sequence[RunResult]) -> set[str]:
    """`previous` with every fixture that ran in `runs` recorded by how it ended this time."""
    ran: set[str] = set()
    failed: set[str] = set()
    for run in runs:
        for result in run.fixtures:
            kept = [u for u in units(result) if u.status is not Status.CANCELLED]
            if kept:
                ran.add(result.id)
            if any(u.status is not Status.OK or not u.passed for u in kept):
                failed.add(result.id)
    return ((previous or set()) - ran) | failed


def narrow(ids: Sequence[str], failed: set[str] | None) -> tuple[list[str], str]:
    """The ids of `ids` (the selection) that did not pass last time, and a line saying what was done:
    all of `ids` when no run was recorded or none of them failed."""
    again = [i for i in ids if i in (failed or set())]
    if again:
        return again, (f"--last-failed: running the {_count(again)} that did not pass last time "
                       f"({', '.join(again)})")
    if failed is None:
        why = "no previous run of this project is recorded"
    elif not failed:
        why = "no fixture failed in the previous run"
    else:
        why = f"the {_count(sorted(failed))} that did not pass last time {'is' if len(failed) == 1 else 'are'} not selected"
    return list(ids), f"--last-failed: {why}; running the {_count(ids)} selected"


def _count(ids: Sequence[str]) -> str:
    return plural(len(ids), "fixture")
