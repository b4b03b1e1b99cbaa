"""The verifier, pure: a fixture's declarative checks against a trace give pass and reasons.

Each check is a small function ``check(verifier, fixture, trace) -> list of reasons``; an
empty list means it holds. A fixture without a verifier passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from .fixtures.model import Fixture, Verifier
from .matchers import matches_all, shown
from .results import TraceCall

__all__ = ["CHECKS", "verify"]

Check = Callable[[Verifier, Fixture, Sequence[TraceCall]], list[str]]


def _names(trace: Sequence[TraceCall]) -> list[str]:
    return [c.name for c in trace]


def check_exact(v: Verifier, fx: Fixture, trace: Sequence[TraceCall]) -> list[str]:
    if v.exact is None or v.exact is False:
        return []
    want = fx.expected if v.exact is True else v.exact
    if want is None:
        return ["exact: true needs an `expected` list in the fixture"]
    got = _names(trace)
    return [] if got == list(want) else [f"exact: called {got}, expected {list(want)}"]


def check_must_include(v: Verifier, fx: Fixture, trace: Sequence[TraceCall]) -> list[str]:
    missing = Counter(v.must_include) - Counter(_names(trace))
    return [f"must_include: {name} was not called" for name in sorted(missing)]


def check_avoid(v: Verifier, fx: Fixture, trace: Sequence[TraceCall]) -> list[str]:
    called = set(_names(trace))
    return [f"avoid: {name} was called" for name in v.avoid if name in called]


def check_call_count(v: Verifier, fx: Fixture, trace: Sequence[TraceCall]) -> list[str]:
    n = len(trace)
    reasons = []
    if v.max_calls is not None and n > v.max_calls:
        reasons.append(f"max_calls: {n} calls, at most {v.max_calls} allowed")
    if v.min_calls is not None and n < v.min_calls:
        reasons.append(f"min_calls: {n} calls, at least {v.min_calls} required")
    return reasons


def check_args(v: Verifier, fx: Fixture, trace: Sequence[TraceCall]) -> list[str]:
    reasons = []
    for tool, want in v.args.items():
        if not any(matches_all(want, c.arguments) for c in trace if c.name == tool):
            reasons.append(f"args: no {tool} call with {shown(want)}")
    return reasons


CHECKS: tuple[Check, ...] = (check_exact, check_must_include, check_avoid, check_call_count, check_args)


def verify(fixture: Fixture, trace: Sequence[TraceCall]) -> tuple[bool, list[str]]:
    """Whether the trace passes the fixture's verifier, and the reasons it does not."""
    if fixture.verifier is None:
        return True, []
    reasons = [r for check in CHECKS for r in check(fixture.verifier, fixture, trace)]
    return not reasons, reasons
