"""Whether a process still runs, read from /proc, for tests that check nothing of a run is left."""

from __future__ import annotations

import time


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for a parent that never reaps does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def ended(pid: int, within: float = 10) -> bool:
    """Whether `pid` ends within `within` seconds (a SIGKILL takes effect when the process next runs)."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
