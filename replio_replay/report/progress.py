"""Progress of a run while it runs: a live display on a terminal, or one line per finished fixture.

Display only: the runner reports each fixture's start and result through `RunOptions`
callbacks, these classes count and show. `choose` decides which, if any, a command gets:
the live display (rich, on stderr) only on a terminal with the table output and `CI` unset;
with `-v` otherwise (CI, a pipe), one line per finished fixture on stderr; else nothing.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from .._runtime.wording import plural

if TYPE_CHECKING:
    from ..judge.results import FixtureResult

__all__ = ["LineProgress", "LiveProgress", "Progress", "choose"]


@dataclass
class Tally:
    """One run's counts so far."""

    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    tokens: int = 0


class Progress:
    """Counts per run (by label), safe to call from the runner's threads; shows nothing itself."""

    def __init__(self, runs: Sequence[tuple[str, int]]) -> None:
        self.tallies = {label: Tally(total) for label, total in runs}
        self.started_at = time.monotonic()
        self._lock = threading.Lock()

    def started(self, label: str) -> None:
        with self._lock:
            self.tallies[label].running += 1
        self.changed()

    def finished(self, label: str, result: FixtureResult) -> None:
        with self._lock:
            tally = self.tallies[label]
            tally.running = max(0, tally.running - 1)
            tally.done += 1
            tally.tokens += result.tokens
            tally.failed += not result.passed and not result.unjudged
            now = dataclasses.replace(tally)
        self.ended(label, result, now)

    def changed(self) -> None:
        """Counts moved (a subclass redraws)."""

    def ended(self, label: str, result: FixtureResult, tally: Tally) -> None:
        """A fixture finished (a subclass reports it)."""
        self.changed()

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None


def tally_line(label: str, tally: Tally, elapsed: float) -> str:
    """`label  3/24 done  2 running  4.1s  1,234 tokens  1 failed`."""
    failed = f"  {tally.failed} failed" if tally.failed else ""
    return (f"{label}  {tally.done}/{tally.total} done  {tally.running} running  {elapsed:.1f}s  "
            f"{plural(tally.tokens, 'token')}{failed}")


class LiveProgress(Progress):
    """A rich live display on stderr, one line per run, erased when the run ends."""

    def __init__(self, runs: Sequence[tuple[str, int]], out: TextIO) -> None:
        super().__init__(runs)
        from rich.console import Console
        from rich.live import Live

        self._live = Live(self, console=Console(file=out, highlight=False), refresh_per_second=8,
                          transient=True, redirect_stdout=False, redirect_stderr=False)

    def __rich__(self) -> Any:
        from rich.spinner import Spinner
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        elapsed = self.elapsed()
        with self._lock:
            lines = [tally_line(label, t, elapsed) for label, t in self.tallies.items()]
        for line in lines:
            grid.add_row(Spinner("dots", style="cyan"), line)
        return grid

    def __enter__(self) -> Progress:
        self._live.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._live.stop()


class LineProgress(Progress):
    """`-v` where there is no live display: a line per finished fixture, as it finishes."""

    def __init__(self, runs: Sequence[tuple[str, int]], out: TextIO) -> None:
        super().__init__(runs)
        self.out = out
        self._several = len(runs) > 1

    def ended(self, label: str, result: FixtureResult, tally: Tally) -> None:
        trial = f" (trial {result.trial})" if result.trial != 1 else ""
        verdict = "unjudged" if result.unjudged else "pass" if result.passed else "FAIL"
        run = f"{label} " if self._several else ""
        line = (f"[{tally.done}/{tally.total}] {run}{result.id}{trial}: {verdict} {result.status.value}, "
                f"{plural(result.calls, 'call')}, {plural(result.tokens, 'token')}, {result.seconds:.2f}s")
        if result.error:
            line += f": {result.error.splitlines()[0]}"
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()


def choose(runs: Sequence[tuple[str, int]], *, output: str, verbose: bool, env: Mapping[str, str],
           stdout: TextIO, stderr: TextIO) -> Progress | None:
    """The display a command gets (see the module docstring); None for none."""
    terminal = stdout.isatty() and stderr.isatty()
    if output == "table" and terminal and not env.get("CI"):
        return LiveProgress(runs, stderr)
    if verbose:
        return LineProgress(runs, stderr)
    return None
