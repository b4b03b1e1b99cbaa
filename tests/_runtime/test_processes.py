"""`Ordered`: calls spread over forked workers, a few in flight, results in call order; a dead worker is
an error, not a hang; one job runs in this process."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from replio_replay._runtime.processes import Ordered


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (gone, or dead awaiting its reaping, it does not). Not
    `Process.is_alive()`: when the executor's own thread reaps a worker first, `is_alive` never
    learns that it ended and says True for ever."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(") ")[2][:1] not in ("Z", "X")


class Unpicklable:
    """A function object no pickle can carry: workers get it through fork."""

    def __init__(self) -> None:
        self.handle = open(os.devnull)  # noqa: SIM115 - a file object is what pickle refuses

    def __call__(self, n: int) -> tuple[int, int]:
        time.sleep(0.02 * (n % 3))  # later calls often end before earlier ones
        return n * n, os.getpid()

    def __reduce__(self) -> str:
        raise TypeError("not picklable")


def test_calls_run_in_other_processes_and_come_back_in_order() -> None:
    function = Unpicklable()
    got = []
    with Ordered[int, tuple[int, int]](function, 2) as workers:
        for n in range(20):
            ended = workers.submit(n, n)
            assert len(workers._flight) <= 4  # at most 2 x jobs in flight
            got += ended
        got += list(workers.rest())
    assert [tag for tag, _ in got] == list(range(20))
    assert [square for _, (square, _) in got] == [n * n for n in range(20)]
    pids = {pid for _, (_, pid) in got}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_one_job_runs_each_call_here_at_once() -> None:
    with Ordered[str, tuple[int, int]](Unpicklable(), 1) as workers:
        assert workers.submit("a", 3) == [("a", (9, os.getpid()))]
        assert list(workers.rest()) == []


def _slow_square(n: int) -> int:
    time.sleep(0.05 if n == 0 else 0)
    return n * n


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_result_known_already_takes_its_turn_among_the_calls(jobs: int) -> None:
    """`put` hands a result back after the calls made before it, even when a worker is still at them."""
    got: list[tuple[str, int]] = []
    with Ordered[str, int](_slow_square, jobs) as workers:
        got += workers.submit("call 0", 0)
        got += workers.put("known", -1)
        got += workers.submit("call 3", 3)
        got += workers.put("known too", -2)
        got += list(workers.rest())
    assert got == [("call 0", 0), ("known", -1), ("call 3", 9), ("known too", -2)]


def _fails(n: int) -> int:
    if n == 2:
        raise ValueError("two")
    return n


def test_a_call_that_fails_raises_its_error_here_in_its_turn() -> None:
    got: list[tuple[int, int]] = []
    with pytest.raises(ValueError, match="two"), Ordered[int, int](_fails, 2) as workers:
        for n in range(4):
            got += workers.submit(n, n)
        for ended in workers.rest():
            got.append(ended)
    assert got == [(0, 0), (1, 1)]


def _dies(n: int) -> int:
    if n == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def test_a_worker_killed_is_an_error_not_a_hang() -> None:
    started = time.monotonic()
    with pytest.raises(BrokenProcessPool), Ordered[int, int](_dies, 2) as workers:
        for n in range(4):
            workers.submit(n, n)
        list(workers.rest())
    assert time.monotonic() - started < 30


def _sleeps(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_leaving_on_an_error_ends_the_calls_in_flight_and_their_workers_at_once() -> None:
    """Ctrl-C in the main process, say: the workers are killed rather than waited for."""
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), Ordered[int, float](_sleeps, 2) as workers:
        workers.submit(1, 60.0)
        workers.submit(2, 60.0)
        processes = list(workers._pool._processes.values())  # type: ignore[union-attr]
        raise KeyboardInterrupt
    assert time.monotonic() - started < 20
    assert processes and not any(_running(p.pid) for p in processes)
