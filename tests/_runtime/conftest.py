"""Fixtures of the runtime tests that interrupt their own process."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture
def ctrl_c_taken() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this test, as in a process started from a terminal, also
    when the suite was started ignoring it (a background job of a script, `nohup`): Python then
    leaves it ignored, and a test sending itself Ctrl-C would wait for it for ever."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
