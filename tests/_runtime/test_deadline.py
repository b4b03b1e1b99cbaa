"""Waits that can be cut short: results, errors, deadlines, interrupts, and a pool safe across fork."""

from __future__ import annotations

import os
import threading
import time

import pytest

from replio_replay._runtime.deadline import Interrupted, TimedOut, run_until


def test_the_result_and_the_error_of_the_call_come_back() -> None:
    assert run_until(lambda: 42, timeout=5) == 42
    with pytest.raises(ZeroDivisionError):
        run_until(lambda: 1 / 0, timeout=5)


def test_a_call_over_its_deadline_is_abandoned_and_on_abandon_runs() -> None:
    closed = []
    started = time.monotonic()
    with pytest.raises(TimedOut):
        run_until(lambda: time.sleep(10), timeout=0.1, on_abandon=lambda: closed.append(True))
    assert time.monotonic() - started < 5 and closed == [True]


def test_the_cancel_event_interrupts_the_wait() -> None:
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    with pytest.raises(Interrupted):
        run_until(lambda: time.sleep(10), timeout=60, cancel=cancel)


def test_the_pool_works_in_a_forked_child() -> None:
    run_until(lambda: None, timeout=5)  # leaves an idle worker behind in this process
    pid = os.fork()
    if pid == 0:  # the child: a worker of the parent's pool does not exist here
        try:
            os._exit(0 if run_until(lambda: 7, timeout=5) == 7 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
