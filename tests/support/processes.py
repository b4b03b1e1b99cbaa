"""Whether a process still runs, read from /proc, for tests that check nothing of a run is left."""

from __future__ import annotations

import os
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


def host_pid(said: str) -> int | None:
    """The pid, as the tests see it, of the process that said `said`: ``pid:[INODE] N``, its PID
    namespace (``os.readlink('/proc/self/ns/pid')``) and its pid there (``os.getpid()``). Confined,
    a process's own pid is its namespace's, and only the namespace's inode tells which it is.
    None when no such process runs (any more)."""
    namespace, pid = said.split()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                continue
            with open(f"/proc/{entry}/status") as status:
                nspid = next(line.split()[1:] for line in status if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if nspid[-1] == pid:
            return int(entry)
    return None


def said_ended(said: str, within: float = 10) -> bool:
    """Whether the process that said `said` (see `host_pid`) has ended, or ends within `within` seconds."""
    pid = host_pid(said)
    return pid is None or ended(pid, within)
