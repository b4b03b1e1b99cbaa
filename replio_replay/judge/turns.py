"""Per-turn verifiers, pure: each scripted turn's checks against the conversation as it stood at its end.

Turns are numbered from 1 in the order the user says them, the fixture's `task` (when it has
one) being turn 1. A turn's verifier sees the calls made up to the end of that turn (of every
earlier turn too), that turn's answer and the environments' state at its end; its
`state_from_calls` are that turn's reference calls, played after the earlier turns' on the same
reference environments (the runner plays them: `TurnReference`). A failed check's reason starts
``turn N:``. A turn the conversation never reached (it was cut short, or failed, before) fails
its verifier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..fixtures.model import Fixture
from .verifier import Evidence, broken

__all__ = ["TurnEvidence", "TurnReference", "turn_reasons"]


@dataclass(frozen=True)
class TurnEvidence:
    """Where one user turn ended: the calls made by then (the whole conversation's), its answer, and
    the environments' state then (None: not kept)."""

    calls: int
    answer: str
    state: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class TurnReference:
    """What a turn's reference calls reach: the environments' state after them, or why they could
    not be played; and their results (cut as the trace's results are)."""

    state: Mapping[str, Any] | str
    results: Sequence[str] = ()


def turn_reasons(fixture: Fixture, ends: Sequence[TurnEvidence], evidence: Evidence,
                 references: Mapping[int, TurnReference] | None = None) -> list[str]:
    """Why the fixture's per-turn verifiers fail: `ends` holds each user turn answered, in order;
    `evidence` is the whole conversation's; `references` the reference of each turn (by number)
    whose verifier has `state_from_calls`."""
    reasons = []
    for number, turn in enumerate(fixture.scripted_turns, 1):
        if turn.verifier is None:
            continue
        if number > len(ends):
            reasons.append(f"turn {number}: not reached; the conversation ended after turn {len(ends)}")
            continue
        end = ends[number - 1]
        reference = (references or {}).get(number)
        then = dataclasses.replace(
            evidence, trace=evidence.trace[:end.calls], answer=end.answer, state=end.state,
            turn_start=ends[number - 2].calls if number > 1 else 0,
            reference_state=reference.state if reference is not None else None,
            reference_results=reference.results if reference is not None else None)
        reasons.extend(f"turn {number}: {reason}" for reason in broken(turn.verifier, fixture, then))
    return reasons
