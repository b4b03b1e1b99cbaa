"""Notes a project is told only once, each remembered by a marker file under the cache folder."""

from __future__ import annotations

import json
from pathlib import Path

from .atomic import atomic_write
from .env import project_file

__all__ = ["first_time"]


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
