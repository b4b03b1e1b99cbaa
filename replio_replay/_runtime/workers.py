"""Daemon worker threads the main thread waits on in short polls, and the grace they get after Ctrl-C.

Python delivers Ctrl-C to the main thread only, and only between the steps of a wait, so the
main thread never blocks for long: it polls (`wait`). The first interrupt sets the run's
`cancel` event; the workers then get a grace to end (`grace`), which a second interrupt (the
`hurry` event, see `interrupts`) cuts short. Workers are daemon threads: whatever is still
running after the grace is abandoned and never holds the process's exit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

__all__ = ["Finished", "Workers"]

#: A poll of the caller's: waits up to the given seconds, then says whether everything is done.
Finished = Callable[[float], bool]

#: How long one poll waits while the run goes on, and during the grace.
_POLL = 0.1
_GRACE_POLL = 0.05


class Workers:
    """Daemon threads, each running one (name, target), started by `wait` (or `start`), so that a
    Ctrl-C landing while they start is taken as one landing while they run.

    Each says it has ended through an event of its own, not `Thread.is_alive`: a Ctrl-C that
    lands in `Thread.join` leaves that thread reported as ended while it still runs (seen on
    CPython 3.11), which would end the grace before the run it waits for has reported.
    """

    def __init__(self, targets: Iterable[tuple[str, Callable[[], None]]]) -> None:
        self._workers = [_Worker(name, target) for name, target in targets]
        self._ended = [worker.ended for worker in self._workers]
        self._started = 0

    def start(self) -> None:
        """Start the workers not started yet. A Ctrl-C meanwhile (`Thread.start` waits for each new
        thread) drops the one it landed on, unless its thread already runs, and those after it:
        they never run, and count as ended."""
        try:
            for worker in self._workers[self._started:]:
                threading.Thread(target=worker.run, name=worker.name, daemon=True).start()
                self._started += 1
        finally:
            for worker in self._workers[self._started:]:
                worker.drop()
            self._started = len(self._workers)

    def alive(self) -> bool:
        return not all(e.is_set() for e in self._ended)

    def join(self, timeout: float) -> bool:
        """Wait for each worker for up to `timeout`; True when none is alive (a `Finished`)."""
        for ended in self._ended:
            ended.wait(timeout)
        return not self.alive()

    def wait(self, finished: Finished, cancel: threading.Event) -> bool:
        """Start the workers, then poll until `finished`; Ctrl-C sets `cancel` and returns True (False: no interrupt)."""
        try:
            self.start()
            while not finished(_POLL):
                pass
        except KeyboardInterrupt:
            cancel.set()
            return True
        return False

    def grace(self, finished: Finished, seconds: float, hurry: threading.Event) -> None:
        """Poll until `finished`, for `seconds` at most; `hurry` or another Ctrl-C ends it at once."""
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end and not hurry.is_set() and not finished(_GRACE_POLL):
                pass
        except KeyboardInterrupt:
            pass


class _Worker:
    """One worker's target and its `ended` event, and whether its thread got to run it: `drop`
    (after a Ctrl-C in its start) and `run` (its thread) agree under a lock, so it runs or is dropped, never both."""

    def __init__(self, name: str, target: Callable[[], None]) -> None:
        self.name, self._target = name, target
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._state = "new"

    def run(self) -> None:
        with self._lock:
            if self._state == "dropped":
                return
            self._state = "running"
        try:
            self._target()
        finally:
            self.ended.set()

    def drop(self) -> None:
        with self._lock:
            if self._state == "new":
                self._state = "dropped"
                self.ended.set()
