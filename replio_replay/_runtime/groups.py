"""Processes replio started (commands, MCP servers, the fork server of the project's Python), each ended with all it spawned.

Whoever starts a program gives it the environment `marked` returns, `track_group`s it and ends
it (`end_group`) when done; what is still tracked when replio exits is killed then: a thread
abandoned after an interrupt never runs its `finally`, and a server in its own session does
not get the terminal's Ctrl-C.

Ending a program kills its process group, and then every process whose environment carries
its mark (``REPLIO_SESSION=<token>``, inherited by all it starts): a child that left the group
(`setsid`, a double-forked daemon) has left the group, not its environment. The marks are
looked for in ``/proc`` (Linux); elsewhere only the group is killed. A program that starts a
child with an emptied environment (``env -i``) can still leave it behind, unless it runs in a
PID namespace (`confine`), which ends with it; without one, such a child is reparented to
replio, a subreaper then, and killed when replio exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Mapping

__all__ = ["MARK", "end_group", "kill_marked", "marked", "track_group"]

#: The environment variable every program replio starts inherits, naming its session.
MARK = "REPLIO_SESSION"
#: Scans of /proc at most: each kills what the last one found, which may have forked meanwhile.
_ROUNDS = 10

_LIVE: dict[int, str | None] = {}  # group leader's pid -> its mark's token
_LOCK = threading.Lock()


def marked(env: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """`env` with a fresh mark added, and the mark's token (for `track_group`)."""
    token = os.urandom(16).hex()
    return {**env, MARK: token}, token


def _kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (nothing if it is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def track_group(pid: int, token: str | None = None) -> None:
    """Have the group `pid` leads, and the processes marked `token`, killed when replio exits,
    unless ended first."""
    with _LOCK:
        _LIVE[pid] = token


def end_group(pid: int) -> None:
    """Kill what is left of the group `pid` led (its leader may be gone, its children not) and
    every process carrying its mark, and forget it."""
    with _LOCK:
        token = _LIVE.pop(pid, None)
    _kill_group(pid)
    if token is not None:
        kill_marked(token)


def kill_marked(token: str) -> None:
    """SIGKILL every process whose environment carries the mark `token` (Linux; elsewhere nothing)."""
    entry = f"\0{MARK}={token}\0".encode()
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        found = [pid for pid in _carrying(entry) if pid not in killed]
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(found)


def _carrying(entry: bytes) -> list[int]:
    """The pids whose environment holds `entry` (NUL-delimited); a zombie's reads empty."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    me = os.getpid()
    found = []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:  # gone, or not ours to read (and so not ours to kill)
            continue
        if entry in b"\0" + environ:
            found.append(int(name))
    return found


@atexit.register
def _kill_live() -> None:
    with _LOCK:
        live = list(_LIVE)
    for pid in live:
        end_group(pid)
