"""`--max-cost`: a live run's cost estimated before it starts, and the money it spends as it goes.

The estimate prices each fixture that will be sent to a provider by its last recording's token
usage (the cassette's answers), and a fixture with no recording at the mean of those with one;
with no recording at all there is nothing to estimate from, and only the spending is watched.
During the run, once what the live fixtures cost reaches the limit, no new live fixture starts:
those not started end `cancelled` with `not run: --max-cost ... reached`; the ones in flight
finish and are kept. A replayed fixture reports what its recording cost, and spends nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .._runtime.wording import plural

__all__ = ["Budget", "Estimate", "estimate"]


@dataclass(frozen=True)
class Estimate:
    """What the live part of a run should cost: `usd` over `recorded` fixtures priced from their
    recordings and `unrecorded` ones priced at their mean (None: nothing recorded to go by)."""

    usd: float | None
    recorded: int
    unrecorded: int

    def describe(self) -> str:
        """How the figure was reached, for the messages that give it."""
        if self.usd is None:
            return f"{plural(self.unrecorded, 'fixture')} to record, none recorded before: no estimate"
        how = f"{plural(self.recorded, 'fixture')} priced by the token usage of their last recording"
        if self.unrecorded:
            how += f", {self.unrecorded} without a recording priced at their mean"
        return f"${self.usd:.2f} ({how})"


def estimate(costs: Sequence[float | None]) -> Estimate:
    """The estimate from each live fixture's recorded cost (None: it has no recording)."""
    known = [c for c in costs if c is not None]
    unrecorded = len(costs) - len(known)
    if not known:
        return Estimate(None if costs else 0.0, 0, unrecorded)
    return Estimate(round(sum(known) + unrecorded * sum(known) / len(known), 6), len(known), unrecorded)


@dataclass
class Budget:
    """The money a run may spend (`limit`, USD) and has spent, on the cases in `live` — (run label,
    fixture id, trial) — shared by every run of a plan and each of its worker threads."""

    limit: float
    live: set[tuple[str, str, int]]
    spent: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_live(self, cases: Iterable[tuple[str, str, int]]) -> None:
        """Count these cases as sent to a provider too (`--record-mode stale` records some again)."""
        with self._lock:
            self.live.update(cases)

    def stops(self, label: str, fixture_id: str, trial: int) -> bool:
        """Whether this case may not start: it would be sent to a provider, and the limit is reached."""
        with self._lock:
            return self.spent >= self.limit and (label, fixture_id, trial) in self.live

    def charge(self, label: str, fixture_id: str, trial: int, usd: float | None) -> None:
        """Count what a finished case cost, when it was sent to a provider."""
        if usd is not None and (label, fixture_id, trial) in self.live:
            with self._lock:
                self.spent += usd

    def reason(self) -> str:
        """Why a case was not run."""
        return f"--max-cost {self.limit:.2f} reached (${self.spent:.4f} spent)"
