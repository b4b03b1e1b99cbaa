"""How the `replio` process ends: its at-exit work done and its output flushed, then at once.

Tearing the interpreter down after a run (freeing every module, class and object one by one)
takes longer than some runs: 60 ms and more after a replay, against 5 ms for a bare Python. A
process that is about to end has no use for that, so `leave` does what an exit must (the at-exit
handlers: the process groups still tracked are killed, coverage and plugins save their data; then
stdout and stderr are flushed) and ends the process with `os._exit`, as mypy does. Where another
thread could still hold the exit (a non-daemon thread a plugin started), it exits as Python does.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

__all__ = ["leave", "status_of"]

#: Python's own exit status when flushing stdout or stderr fails at exit (a closed pipe).
FLUSH_FAILED = 120


def status_of(code: object) -> int:
    """The exit status `sys.exit(code)` gives: None is 0, an int itself, anything else is said on
    stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _others_hold_exit() -> bool:
    """Whether a thread other than this one would keep a normal exit waiting."""
    return any(t is not threading.current_thread() and not t.daemon and t.is_alive()
               for t in threading.enumerate())


def leave(code: object) -> NoReturn:
    """End the process with `sys.exit(code)`'s status, skipping the interpreter's teardown."""
    status = status_of(code)
    if _others_hold_exit():
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = status or FLUSH_FAILED
    os._exit(status)
