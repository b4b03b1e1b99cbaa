"""Per-turn verifiers, pure: each scripted turn's checks against the conversation as it stood at its end.

Turns are numbered from 1 in the order the user says them, the fixture's `task` (when it has
one) being turn 1. A turn's verifier sees the calls made up to the end of that turn (of every
earlier turn too) and that turn's answer; a failed check's reason starts ``turn N:``. A turn
the conversation never reached (it was cut short, or failed, before) fails its verifier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..fixtures.model import Fixture
from .verifier import Evidence, broken

__all__ = ["turn_reasons"]


def turn_reasons(fixture: Fixture, ends: Sequence[tuple[int, str]], evidence: Evidence) -> list[str]:
    """Why the fixture's per-turn verifiers fail: `ends` holds, per user turn answered, the number
    of calls made by its end and its answer; `evidence` is the whole conversation's."""
    reasons = []
    for number, turn in enumerate(fixture.scripted_turns, 1):
        if turn.verifier is None:
            continue
        if number > len(ends):
            reasons.append(f"turn {number}: not reached; the conversation ended after turn {len(ends)}")
            continue
        calls, answer = ends[number - 1]
        then = dataclasses.replace(evidence, trace=evidence.trace[:calls], answer=answer)
        reasons.extend(f"turn {number}: {reason}" for reason in broken(turn.verifier, fixture, then))
    return reasons
