"""Waiting that can be cut short: a blocking call runs in a daemon thread while the caller waits for
it, a deadline or the run's cancel event, whichever comes first.

Python cannot stop a thread, so a call that overruns is abandoned: its thread runs on in the
background (as a daemon, it never holds the process's exit) and its result is dropped. What it
holds (a socket, a child process) is for the caller to close through `on_abandon`. Calls run
on a pool of daemon workers that grows when all are busy, so a wait costs no thread start.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Interrupted", "TimedOut", "run_until"]

T = TypeVar("T")

#: How often a wait looks at the cancel event.
_POLL = 0.05


class TimedOut(Exception):
    """The call did not finish within its deadline."""


class Interrupted(Exception):
    """The run was interrupted while the call was in flight."""


class _Outcome(Generic[T]):
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


def run_until(
    call: Callable[[], T],
    *,
    timeout: float,
    cancel: threading.Event | None = None,
    on_abandon: Callable[[], None] | None = None,
) -> T:
    """`call()`'s result, or TimedOut after `timeout` seconds, or Interrupted once `cancel` is set.

    Exceptions the call raises are raised here, in the caller's thread.
    """
    outcome: _Outcome[T] = _Outcome()

    def target() -> None:
        try:
            outcome.value = call()
        except BaseException as exc:  # handed to the waiting thread, which decides
            outcome.error = exc
        finally:
            outcome.done.set()

    _start(target)
    end = time.monotonic() + timeout
    while not outcome.done.wait(min(_POLL, max(0.0, end - time.monotonic()))):
        if cancel is not None and cancel.is_set():
            _abandon(on_abandon)
            raise Interrupted()
        if time.monotonic() >= end:
            _abandon(on_abandon)
            raise TimedOut()
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]


class _Worker(threading.Thread):
    """A daemon thread that runs calls one after another, and waits for more when idle.

    Starting a thread per call costs more than a typical tool call; idle workers are reused.
    A worker whose call was abandoned returns to the pool only once that call ends.
    """

    def __init__(self) -> None:
        super().__init__(name="replio-call", daemon=True)
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            self.inbox.get()()
            _idle.put(self)


_idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()


def _forget_workers() -> None:
    """In a forked child the parent's workers do not exist: start from an empty pool."""
    global _idle
    _idle = queue.SimpleQueue()


os.register_at_fork(after_in_child=_forget_workers)


def _start(call: Callable[[], None]) -> None:
    try:
        worker = _idle.get_nowait()
    except queue.Empty:
        worker = _Worker()
        worker.start()
    worker.inbox.put(call)


def _abandon(on_abandon: Callable[[], None] | None) -> None:
    if on_abandon is not None:
        try:
            on_abandon()
        except Exception:  # closing what the abandoned call holds is best effort
            pass
