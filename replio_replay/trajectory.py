"""Trajectory matching, pure: whether the calls a model made are the calls a fixture expects.

An expected call is a tool name, or ``{"name", "arguments": {arg: matcher}}`` (an argument not
named is not checked). Four modes, as agentevals defines them, each matching calls one to one
(an actual call stands for one expected call at most):

- ``strict``: the same calls in the same order;
- ``unordered``: the same calls in any order;
- ``subset``: every call made is one of the expected ones (fewer allowed, nothing extra);
- ``superset``: every expected call is made (extra calls allowed).

`in_order` asks less: the wanted calls appear in this order, others may come between.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, Protocol

from .matchers import matches_all

__all__ = ["MatchMode", "Call", "call_matches", "in_order", "trajectory_matches"]


class MatchMode(str, Enum):
    """How `accuracy` compares the calls made with the expected ones."""

    STRICT = "strict"
    UNORDERED = "unordered"
    SUBSET = "subset"
    SUPERSET = "superset"


class Call(Protocol):
    """A call as the trace holds it."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Any: ...


def call_matches(expected: Any, call: Call) -> bool:
    """Whether `call` is the `expected` one: a name, or an object with a name and argument matchers."""
    if isinstance(expected, str):
        return call.name == expected
    return bool(call.name == expected.name and matches_all(expected.arguments, call.arguments))


def trajectory_matches(calls: Sequence[Call], expected: Sequence[Any], mode: MatchMode) -> bool:
    """Whether `calls` match `expected` under `mode`."""
    if mode is MatchMode.STRICT:
        return len(calls) == len(expected) and all(call_matches(e, c) for e, c in zip(expected, calls))
    matched = _matching(calls, expected)
    if mode is MatchMode.UNORDERED:
        return len(calls) == len(expected) == matched
    if mode is MatchMode.SUBSET:
        return matched == len(calls)
    return matched == len(expected)


def in_order(calls: Sequence[Call], wanted: Sequence[Any]) -> bool:
    """Whether the wanted calls appear among `calls` in this order (a subsequence)."""
    position = 0
    for call in calls:
        if position < len(wanted) and call_matches(wanted[position], call):
            position += 1
    return position == len(wanted)


def _matching(calls: Sequence[Call], expected: Sequence[Any]) -> int:
    """The most pairs (call, expected call) that match with each used once: Kuhn's augmenting paths.

    A greedy pairing is not enough: a call matching two expected calls may take the one that
    another call needed.
    """
    fits = [[j for j, e in enumerate(expected) if call_matches(e, c)] for c in calls]
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    return sum(assign(i, set()) for i in range(len(calls)))
