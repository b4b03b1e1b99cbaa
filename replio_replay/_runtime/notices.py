"""Notes told only once: to a project (`first_time`, remembered by a marker file under the cache
folder), or in a run (`once_per_run`, remembered by the process)."""

from __future__ import annotations

import json
from pathlib import Path

from .atomic import atomic_write
from .env import project_file

__all__ = ["first_time", "once_per_run"]


def first_time(cache: Path, project: Path, notice: str) -> bool:
    """True the first time `notice` is due for `project` (which marks it told), False ever after."""
    marker = project_file(cache, project, f"told-{notice}")
    if marker.exists():
        return False
    try:
        atomic_write(marker, json.dumps({"project": str(project.resolve()), "notice": notice}) + "\n")
    except OSError:
        pass  # told now; without a cache it may be told again
    return True


_TOLD: set[str] = set()


def once_per_run(notice: str) -> bool:
    """True the first time `notice` is due in this process (a run), False ever after."""
    if notice in _TOLD:
        return False
    _TOLD.add(notice)
    return True
