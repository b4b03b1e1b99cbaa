"""How a command takes Ctrl-C and SIGTERM: the first stops the run, the next only hurries it.

The first signal raises KeyboardInterrupt in the main thread, as Python does: a run starts no
new fixture and gives those in flight a grace (`runner`), and the partial report is written.
The second raises nothing: it sets `hurry`, which cuts the grace short. So wherever it lands
(in the grace, while worktrees are removed, while the report is written) the partial report
is still written. A third raises KeyboardInterrupt again, for the case where the first was
swallowed by something that then hangs: it ends the command without a report.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Interrupts:
    """The signal handler of one command, and the `hurry` event it sets on a second signal."""

    def __init__(self) -> None:
        self.hurry = threading.Event()
        self._count = 0

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._count += 1
        if self._count == 2:
            self.hurry.set()
            return
        raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[Interrupts]:
        """Take SIGINT and SIGTERM (a CI timeout, `kill`) while the block runs; in another thread
        than the main one (where Python delivers signals) this changes nothing. A SIGINT this
        process was started ignoring (a background job of a shell, `nohup`) stays ignored, as
        Python leaves it."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        taken = [sig for sig in (signal.SIGINT, signal.SIGTERM)
                 if sig == signal.SIGTERM or signal.getsignal(sig) is not signal.SIG_IGN]
        previous = {sig: signal.signal(sig, self._handle) for sig in taken}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
