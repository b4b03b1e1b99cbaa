"""Trajectory matching, pure: whether the calls a model made are the calls a fixture expects.

An expected call is a tool name, or ``{"name", "arguments": {arg: matcher}}`` (an argument not
named is not checked, unless the object says ``"extra_arguments": false``). Four modes, as agentevals defines them, each matching calls one to one
(an actual call stands for one expected call at most):

- ``strict``: the same calls in the same order;
- ``unordered``: the same calls in any order;
- ``subset``: every call made is one of the expected ones (fewer allowed, nothing extra);
- ``superset``: every expected call is made (extra calls allowed).

`in_order` asks less: the wanted calls appear in this order, others may come between.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum
from typing import Any, Protocol

from ._runtime.redact import NO_SECRETS, Redactor
from .matchers import matches, matches_all, optional, written

__all__ = ["MatchMode", "Call", "call_matches", "call_problem", "in_order", "mismatches", "trajectory_matches"]


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
    return bool(call.name == expected.name
                and matches_all(expected.arguments, call.arguments, extra=expected.extra_arguments))


def call_problem(expected: Any, call: Call, redactor: Redactor = NO_SECRETS) -> str | None:
    """Why `call` is not the `expected` one (the first difference), or None when it is; the values
    it quotes are cut by `redactor`."""
    if isinstance(expected, str):
        return None if call.name == expected else f"called {call.name}, expected {expected}"
    if call.name != expected.name:
        return f"called {call.name}, expected {expected.name}"
    args = call.arguments
    if not isinstance(args, dict):
        return f"{call.name}'s arguments are not a JSON object: {_short(args, redactor)}"
    if not expected.extra_arguments:
        extra = [k for k in args if k not in expected.arguments]
        if extra:
            return f"{call.name} has an argument {extra[0]!r} that is not expected"
    for key, want in expected.arguments.items():
        if key not in args:
            if not optional(want):
                return f"{call.name} is missing the argument {key!r}"
        elif not matches(want, args[key]):
            return (f"{call.name}'s argument {key!r} is {_short(args[key], redactor)}, "
                    f"expected {_short(written(want), redactor)}")
    return None


def mismatches(calls: Sequence[Call], expected: Sequence[Any], mode: MatchMode,
               redactor: Redactor = NO_SECRETS) -> list[str]:
    """What keeps `calls` from matching `expected` under `mode`, for a reason line (empty: they match);
    the values it quotes are cut by `redactor`."""
    if trajectory_matches(calls, expected, mode):
        return []
    names, wanted = [c.name for c in calls], [_name(e) for e in expected]
    if mode in (MatchMode.STRICT, MatchMode.UNORDERED) and len(calls) != len(expected):
        return [f"{len(calls)} calls {names}, expected {len(expected)} {wanted} ({mode.value})"]
    if mode is MatchMode.STRICT:
        return [f"call {i}: {why}" for i, (e, c) in enumerate(zip(expected, calls), 1)
                if (why := call_problem(e, c, redactor)) is not None]
    unmatched = [e for e in expected if not any(call_matches(e, c) for c in calls)]
    if not unmatched:
        return [f"calls {names} cannot be paired one to one with {wanted} ({mode.value})"]
    return [f"no call matches {_short(_written_call(e), redactor)}"
            + (f": {call_problem(e, near[0], redactor)}" if (near := [c for c in calls if c.name == _name(e)]) else "")
            for e in unmatched]


def _name(expected: Any) -> str:
    return expected if isinstance(expected, str) else str(expected.name)


def _written_call(expected: Any) -> Any:
    return expected if isinstance(expected, str) else {expected.name: {k: written(m) for k, m in expected.arguments.items()}}


def _short(value: Any, redactor: Redactor, limit: int = 160) -> str:
    return redactor.cut(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), limit)


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
