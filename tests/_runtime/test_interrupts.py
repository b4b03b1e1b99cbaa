"""The command's signal handler: the first signal interrupts, the second hurries, the third interrupts."""

from __future__ import annotations

import os
import signal

import pytest

from replio_replay._runtime.interrupts import Interrupts


@pytest.mark.usefixtures("ctrl_c_taken")
def test_first_signal_interrupts_second_hurries_third_interrupts() -> None:
    with Interrupts().installed() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        assert not interrupts.hurry.is_set()
        os.kill(os.getpid(), signal.SIGTERM)  # SIGTERM counts as Ctrl-C does; this one raises nothing
        assert interrupts.hurry.is_set()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.usefixtures("ctrl_c_taken")
def test_the_previous_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with Interrupts().installed():
        assert signal.getsignal(signal.SIGINT) is not before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_an_ignored_sigint_stays_ignored() -> None:
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Interrupts().installed():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, before)
