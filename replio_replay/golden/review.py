"""Reviewing a run against its goldens: attach drift to each result, and approve new goldens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._runtime.atomic import atomic_write_all
from ..errors import GoldenError
from ..fixtures.cases import trial_stem
from ..fixtures.layout import RunKey
from ..judge.metrics import summarize
from ..judge.results import RunResult, Status
from .canonical import canonical_result
from .drift import drift, tolerated
from .store import GoldenStore

__all__ = ["Approval", "approve", "attach_drift"]


def attach_drift(run: RunResult, store: GoldenStore, *, tokens_tolerance: float | None = None) -> RunResult:
    """The run with `drift` set per fixture: None (no golden, or the fixture ended in error and
    is not compared), [] (none) or the changes; token counts within `tokens_tolerance` (see
    `drift.tolerated`) go to `drift_info`, reported but not failing."""
    fixtures = []
    for result in run.fixtures:
        if result.status in (Status.ERROR, Status.CANCELLED):  # its error says what went wrong, not a drift
            fixtures.append(result.model_copy(update={"drift": None, "drift_info": None}))
            continue
        try:
            golden = store.load(run.key, trial_stem(result.id, result.trial))
        except GoldenError as exc:
            fixtures.append(result.model_copy(update={"status": Status.ERROR, "error": str(exc)}))
            continue
        if golden is None:
            fixtures.append(result.model_copy(update={"drift": None, "drift_info": None}))
            continue
        failing, info = tolerated(drift(golden, canonical_result(result)), tokens_tolerance)
        fixtures.append(result.model_copy(update={"drift": [c.to_json() for c in failing],
                                                  "drift_info": [c.to_json() for c in info] or None}))
    return run.model_copy(update={"fixtures": fixtures, "summary": summarize(fixtures)})


@dataclass(frozen=True)
class Approval:
    """What --update-golden did for one fixture: created, changed, unchanged or refused."""

    key: RunKey
    fixture_id: str
    action: str
    reason: str = ""
    trial: int = 1


def approve(runs: Sequence[RunResult], store: GoldenStore) -> list[Approval]:
    """Write goldens from every fixture of `runs`, all of them or none.

    Results that ended in `error` or `cancelled`, or that cannot be a golden (NaN in a tool's
    arguments), are refused and listed; the rest are written in one step that an interrupt
    cannot cut in half (see `atomic.atomic_write_all`).
    """
    done: list[Approval] = []
    writes: list[tuple[Path, str]] = []
    for run in runs:
        for result in run.fixtures:
            if result.status in (Status.ERROR, Status.CANCELLED):
                done.append(Approval(run.key, result.id, "refused",
                                     f"it ended in {result.status.value}: {result.error}", result.trial))
                continue
            try:
                path, text, action = store.render(run.key, trial_stem(result.id, result.trial),
                                                  canonical_result(result))
            except GoldenError as exc:
                done.append(Approval(run.key, result.id, "refused", str(exc), result.trial))
                continue
            done.append(Approval(run.key, result.id, action, trial=result.trial))
            if action != "unchanged":
                writes.append((path, text))
    try:
        atomic_write_all(writes)
    except OSError as exc:
        raise GoldenError(f"no golden was written: {exc}") from None
    return done
