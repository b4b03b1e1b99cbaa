"""How the `replio` process ends: its at-exit work done and its output flushed, then at once.

Tearing the interpreter down after a run (freeing every module, class and object one by one)
takes longer than some runs: 60 ms and more after a replay, against 5 ms for a bare Python. A
process that is about to end has no use for that, so `leave` does what an exit must (the at-exit
handlers: the process groups still tracked are killed, logging and plugins that registered a
handler save what they hold; then stdout and stderr are flushed) and ends the process with
`os._exit`, as mypy does.

It exits as Python does when that could lose something: a non-daemon thread still running (a
plugin's), a tracer or profiler attached (coverage, cProfile, pyinstrument save their data after
the program returns), or ``REPLIO_FAST_EXIT=0`` in the environment (for a tool that does the
same and attaches no tracer, such as memray). What only the interpreter's teardown would do is
skipped: a file a plugin left open unflushed loses what it buffered, so a plugin closes its files.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

__all__ = ["FAST_EXIT_ENV", "leave", "status_of"]

#: Python's own exit status when flushing stdout or stderr fails at exit (a closed pipe).
FLUSH_FAILED = 120
#: Set to 0 to have every exit tear the interpreter down as Python does.
FAST_EXIT_ENV = "REPLIO_FAST_EXIT"


def status_of(code: object) -> int:
    """The exit status `sys.exit(code)` gives: None is 0, an int itself, anything else is said on
    stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _teardown_wanted() -> bool:
    """Whether anything could need the interpreter's own exit: a thread that would keep it
    waiting, a tracer or profiler that saves after the program returns, or the user's word."""
    if os.environ.get(FAST_EXIT_ENV, "").strip() == "0":
        return True
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: coverage's sysmon core
    if monitoring is not None and any(monitoring.get_tool(i) for i in range(6)):
        return True
    return any(t is not threading.current_thread() and not t.daemon and t.is_alive()
               for t in threading.enumerate())


def leave(code: object) -> NoReturn:
    """End the process with `sys.exit(code)`'s status, skipping the interpreter's teardown."""
    status = status_of(code)
    if _teardown_wanted():
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):  # as Python: a closed stream is not flushed
            continue
        try:
            stream.flush()
        except OSError:
            status = status or FLUSH_FAILED
        except ValueError:
            pass
    os._exit(status)
