"""The canonical, provider-neutral form of a fixture result, as approved in a golden file (pure).

Calls are grouped by turn, so parallel calls (one turn) are told apart from sequential ones.
Nothing volatile is kept: no provider ids, no timings. A fixture with environments keeps their
end state too (`state`), so a change to it is drift.
"""

from __future__ import annotations

from typing import Any

from ..judge.results import FixtureResult

__all__ = ["METRICS", "canonical_result"]

#: The metrics a golden holds and drift compares.
METRICS = ("accuracy", "calls", "redundant", "errors", "tokens")


def canonical_result(result: FixtureResult) -> dict[str, Any]:
    """The golden dict for `result`."""
    turns: list[list[dict[str, Any]]] = []
    last = None
    for call, turn in zip(result.trace, result.turns or [0] * len(result.trace)):
        if turn != last:
            turns.append([])
            last = turn
        turns[-1].append({"name": call.name, "arguments": call.arguments})
    golden: dict[str, Any] = {
        "id": result.id,
        "status": result.status.value,
        "pass": result.passed,
        "turns": turns,
        "answer": result.answer,
        "metrics": {name: getattr(result, name) for name in METRICS},
    }
    if result.state is not None:  # only a fixture with environments: other goldens keep their bytes
        golden["state"] = result.state
    if result.user_trace:  # a simulated user with tools of its own: what it did is drift too
        golden["user_calls"] = [{"name": c.name, "arguments": c.arguments} for c in result.user_trace]
    return golden
