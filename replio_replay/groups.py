"""Process groups replio started (tool commands, MCP servers): each ended with all it spawned.

Whoever starts a group `track_group`s it and ends it (`end_group`) when done; what is still
tracked when replio exits is killed then: a thread abandoned after an interrupt never runs its
`finally`, and a server in its own session does not get the terminal's Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading

__all__ = ["end_group", "forget_group", "kill_group", "track_group"]

_LIVE: set[int] = set()
_LOCK = threading.Lock()


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (nothing if it is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def track_group(pid: int) -> None:
    """Have the group `pid` leads killed when replio exits, unless it is forgotten first."""
    with _LOCK:
        _LIVE.add(pid)


def forget_group(pid: int) -> None:
    with _LOCK:
        _LIVE.discard(pid)


def end_group(pid: int) -> None:
    """Kill what is left of the group `pid` led (its leader may be gone, its children not), and forget it."""
    kill_group(pid)
    forget_group(pid)


@atexit.register
def _kill_live() -> None:
    with _LOCK:
        groups = list(_LIVE)
    for pid in groups:
        kill_group(pid)
