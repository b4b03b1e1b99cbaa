"""Workers: the main thread waits in polls, Ctrl-C sets cancel, the grace ends on time, on hurry or a second Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from replio_replay._runtime.workers import Workers


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """Set to let the test's workers end (at the test's end at the latest)."""
    event = threading.Event()
    yield event
    event.set()


def _later(seconds: float, action: object) -> None:
    timer = threading.Timer(seconds, action)  # type: ignore[arg-type]
    timer.daemon = True
    timer.start()


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_wait_returns_when_the_workers_are_done() -> None:
    ran: list[int] = []
    workers = Workers((f"w{i}", lambda i=i: ran.append(i)) for i in range(3))  # type: ignore[misc]
    cancel = threading.Event()
    assert workers.wait(workers.join, cancel) is False
    assert sorted(ran) == [0, 1, 2] and not cancel.is_set() and not workers.alive()


@pytest.mark.usefixtures("ctrl_c_taken")
def test_ctrl_c_while_waiting_sets_cancel_and_leaves_the_worker_counted_as_running(stop: threading.Event) -> None:
    workers = Workers([("blocked", stop.wait)])
    cancel = threading.Event()
    _later(0.2, _ctrl_c)
    assert workers.wait(workers.join, cancel) is True
    assert cancel.is_set() and workers.alive()


def test_ctrl_c_while_the_workers_start_is_an_interrupt_of_the_wait(monkeypatch: pytest.MonkeyPatch,
                                                                   stop: threading.Event) -> None:
    """Ctrl-C landing in `Thread.start` (it waits for each new thread): the wait takes it, the workers
    after it never start and count as ended, so the grace waits for the started ones alone."""
    ran: list[str] = []
    real_start = threading.Thread.start
    calls = 0

    def start(thread: threading.Thread) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    workers = Workers((f"w{i}", lambda i=i: (ran.append(f"w{i}"), stop.wait())) for i in range(5))  # type: ignore[misc]
    cancel = threading.Event()
    assert workers.wait(workers.join, cancel) is True
    assert cancel.is_set() and workers.alive()
    stop.set()
    assert workers.join(2) and sorted(ran) == ["w0", "w1"]


def test_the_grace_ends_when_the_workers_do(stop: threading.Event) -> None:
    workers = Workers([("ending", stop.wait)])
    workers.start()
    _later(0.2, stop.set)
    start = time.monotonic()
    workers.grace(workers.join, 10, threading.Event())
    assert time.monotonic() - start < 2 and not workers.alive()


def test_the_grace_ends_after_its_seconds(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    workers.start()
    start = time.monotonic()
    workers.grace(workers.join, 0.3, threading.Event())
    assert 0.3 <= time.monotonic() - start < 2 and workers.alive()


def test_hurry_ends_the_grace_at_once(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    workers.start()
    hurry = threading.Event()
    _later(0.2, hurry.set)
    start = time.monotonic()
    workers.grace(workers.join, 10, hurry)
    assert time.monotonic() - start < 2 and workers.alive()


@pytest.mark.usefixtures("ctrl_c_taken")
def test_a_second_ctrl_c_ends_the_grace_without_raising_or_losing_the_worker(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    workers.start()
    _later(0.2, _ctrl_c)
    start = time.monotonic()
    workers.grace(workers.join, 10, threading.Event())
    assert time.monotonic() - start < 2 and workers.alive()
