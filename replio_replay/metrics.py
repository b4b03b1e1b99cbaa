"""Pure metrics: a trace's numbers (accuracy, redundant calls, errors) and the suite summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .results import FixtureResult, Status, Summary

__all__ = ["accuracy", "canonical", "redundant", "summarize"]


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace; a raw-string argument stays itself."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def accuracy(names: Sequence[str], expected: Sequence[str] | None) -> float | None:
    """1.0 when the names equal `expected` exactly, 0.0 otherwise, None when nothing is expected."""
    if expected is None:
        return None
    return 1.0 if list(names) == list(expected) else 0.0


def redundant(calls: Sequence[tuple[str, Any]]) -> int:
    """Calls minus distinct (name, canonical arguments) pairs."""
    return len(calls) - len({(name, canonical(args)) for name, args in calls})


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summarize(results: Sequence[FixtureResult]) -> Summary:
    """The suite summary over fixture results."""
    return Summary(
        fixtures=len(results),
        accuracy=_mean([r.accuracy for r in results if r.accuracy is not None]),
        pass_rate=_mean([1.0 if r.passed else 0.0 for r in results]),
        calls=sum(r.calls for r in results),
        redundant=sum(r.redundant for r in results),
        errors=sum(r.errors for r in results),
        tokens=sum(r.tokens for r in results),
        drifted=sum(1 for r in results if r.drift),
        new=sum(1 for r in results if r.drift is None and r.status is not Status.ERROR),
    )
