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


def test_ctrl_c_while_waiting_sets_cancel_and_leaves_the_worker_counted_as_running(stop: threading.Event) -> None:
    workers = Workers([("blocked", stop.wait)])
    cancel = threading.Event()
    _later(0.2, _ctrl_c)
    assert workers.wait(workers.join, cancel) is True
    assert cancel.is_set() and workers.alive()


def test_the_grace_ends_when_the_workers_do(stop: threading.Event) -> None:
    workers = Workers([("ending", stop.wait)])
    _later(0.2, stop.set)
    start = time.monotonic()
    workers.grace(workers.join, 10, threading.Event())
    assert time.monotonic() - start < 2 and not workers.alive()


def test_the_grace_ends_after_its_seconds(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    start = time.monotonic()
    workers.grace(workers.join, 0.3, threading.Event())
    assert 0.3 <= time.monotonic() - start < 2 and workers.alive()


def test_hurry_ends_the_grace_at_once(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    hurry = threading.Event()
    _later(0.2, hurry.set)
    start = time.monotonic()
    workers.grace(workers.join, 10, hurry)
    assert time.monotonic() - start < 2 and workers.alive()


def test_a_second_ctrl_c_ends_the_grace_without_raising_or_losing_the_worker(stop: threading.Event) -> None:
    workers = Workers([("stuck", stop.wait)])
    _later(0.2, _ctrl_c)
    start = time.monotonic()
    workers.grace(workers.join, 10, threading.Event())
    assert time.monotonic() - start < 2 and workers.alive()
