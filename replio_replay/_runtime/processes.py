"""Calls of one CPU-bound function spread over forked worker processes, a few in flight, results in call order.

`Ordered` hands the function to its workers as they fork, so it is never pickled (a synthesizer
holding a project's settings and tools need not be); only each call's arguments and result cross.
At most `2 x jobs` calls are in flight, so memory holds those, not the input. Results come back in
the order of the calls, so what follows from them (files written, messages) is the same with any
number of workers; a result known without a call (`put`) takes its turn among them. Workers
ignore Ctrl-C and SIGTERM (a terminal sends Ctrl-C to them too): the main process takes them,
stops submitting and kills the workers rather than wait for their calls, so the function must
write nothing (its result is what it makes). A worker that dies (killed, out of memory) raises
`BrokenProcessPool` in the main process. With one job, or where `fork` is missing, the calls
run in this process, one by one.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["Ordered", "default_jobs"]

Tag = TypeVar("Tag")
Result = TypeVar("Result")

#: The function the workers of this process call, set in each as it starts (inherited through fork).
_function: Callable[..., Any] | None = None


def default_jobs() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _start(function: Callable[..., Any]) -> None:
    global _function
    _function = function
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _call(*args: Any) -> Any:
    assert _function is not None, "a worker calls only after _start"
    return _function(*args)


class Ordered(Generic[Tag, Result]):
    """`function` called in `jobs` worker processes (a context manager: leaving it waits for the calls in
    flight), each call tagged, its (tag, result) handed back in the order the calls were made."""

    def __init__(self, function: Callable[..., Result], jobs: int) -> None:
        self._function = function
        self._ahead = 2 * jobs
        self._flight: deque[tuple[Tag, Future[Result]]] = deque()
        self._pool: ProcessPoolExecutor | None = None
        if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
            self._pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start, initargs=(function,))

    def __enter__(self) -> Ordered[Tag, Result]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pool is None:
            return
        if exc is None:
            self._pool.shutdown(wait=True)
            return
        # Interrupted or failed: what has not started never will, and what runs is ended, not waited
        # for (a worker ignores SIGTERM, so it is killed); a call keeps its result in memory, so
        # ending one leaves no file behind.
        workers = list((self._pool._processes or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.join(5)

    def submit(self, tag: Tag, *args: Any) -> list[tuple[Tag, Result]]:
        """Make the call; hand back the calls ended before it, in order: those already done, and as
        many as must end (waiting for them) to keep at most `2 x jobs` in flight."""
        if self._pool is None:
            return [(tag, self._function(*args))]
        self._flight.append((tag, self._pool.submit(_call, *args)))
        ended = []
        while self._flight and (len(self._flight) > self._ahead or self._flight[0][1].done()):
            ended.append(self._next())
        return ended

    def put(self, tag: Tag, result: Result) -> list[tuple[Tag, Result]]:
        """Hand back `result`, known already (made here, not by a call), in its turn among the calls:
        after those made before it. Hands back what `submit` would."""
        if self._pool is None:
            return [(tag, result)]
        known: Future[Result] = Future()
        known.set_result(result)
        self._flight.append((tag, known))
        ended = []
        while self._flight and self._flight[0][1].done():
            ended.append(self._next())
        return ended

    def rest(self) -> Iterator[tuple[Tag, Result]]:
        """Every call still in flight, waited for, in order."""
        while self._flight:
            yield self._next()

    def _next(self) -> tuple[Tag, Result]:
        tag, future = self._flight.popleft()
        return tag, future.result()
