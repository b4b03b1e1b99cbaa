"""State checks, pure: a verifier's `state` matchers and `state_from_calls` against the environments' end state.

A `state` key is a path into the end state, starting with the environment's name:
``shop.orders.A-1042.status``. Dots go into objects (a mapping's keys as they are written) and
a part of digits indexes a list (``shop.cart.0.sku``); a key holding a dot writes it ``\\.``
(``shop.files.report\\.pdf``), and a backslash ``\\\\``. The name alone (``shop``) is that
environment's whole state, so ``{"shop": {...}}`` asks it to equal a JSON value. Values are the
verifier's matchers (`_runtime.matchers`). `state_from_calls` holds when the run's end state
equals, for every environment, the one its reference calls reach on fresh instances (computed
by the runner: this module runs no user code). `results_from_calls` holds when each result
those reference calls returned is among the results of the run's calls, in any order (each
result of the run counting once), and, when there are reference calls, the run (in a turn's
verifier: that turn) made a call: BFCL's multi-turn response and empty-turn checks. Reasons name
the path and both values, short and redacted; `state_checks` reads them back as each check's
verdict, for reports to show beside the end state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._runtime.diffing import changes
from .._runtime.matchers import matches, optional, quoted, written
from .results import StateCheck

if TYPE_CHECKING:
    from .._runtime.redact import Redactor
    from ..fixtures.model import Fixture, Verifier
    from .verifier import Evidence

__all__ = ["check_results_from_calls", "check_state", "check_state_from_calls", "lookup", "state_checks", "state_path"]

#: Differences `state_from_calls` names before it says how many more there are.
_SHOWN = 3


def state_path(key: str) -> list[str]:
    """The parts of a `state` key: split at each dot not written ``\\.``, escapes undone."""
    parts, part, chars = [], "", iter(key)
    for char in chars:
        if char == "\\":
            part += next(chars, "\\")
        elif char == ".":
            parts.append(part)
            part = ""
        else:
            part += char
    return [*parts, part]


def lookup(state: Mapping[str, Any], parts: list[str]) -> tuple[bool, Any, str]:
    """(found, the value at `parts`, the path of the last part that exists) in `state`."""
    value: Any = state
    for depth, part in enumerate(parts):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, value, ".".join(parts[:depth])
    return True, value, ".".join(parts)


def check_state(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if not v.state:
        return []
    if ev.state is None:
        return ["state: the fixture offers no environment, so there is no state to check; declare one in "
                "\"environments\""]
    reasons = []
    for key, want in v.state.items():
        found, value, reached = lookup(ev.state, state_path(key))
        if not found:
            if not optional(want):
                reasons.append(f"state.{key}: {_missing(reached, value, ev.state)}")
        elif not matches(want, value):
            reasons.append(f"state.{key}: expected {_show(written(want))}, it is {_value(value, ev.redactor)}")
    return reasons


def _missing(reached: str, value: Any, state: Mapping[str, Any]) -> str:
    if not reached:
        return f"no environment of that name (the fixture has: {', '.join(sorted(state)) or 'none'})"
    if isinstance(value, Mapping):
        keys = sorted(map(str, value))
        more = f", and {len(keys) - 5} more" if len(keys) > 5 else ""
        return f"{reached} has no such key (it has: {', '.join(keys[:5]) or 'none'}{more})"
    if isinstance(value, list):
        return f"{reached} is a list of {len(value)}; index it with a number below {len(value)}"
    return f"{reached} is {type(value).__name__}, not an object to look into"


def check_state_from_calls(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if v.state_from_calls is None:
        return []
    if ev.state is None:
        return ["state_from_calls: the fixture offers no environment, so there is no state to compare"]
    reference = ev.reference_state
    if isinstance(reference, str):
        return [reference if reference.startswith("state_from_calls") else f"state_from_calls: {reference}"]
    found = changes(dict(reference or {}), dict(ev.state))
    reasons = []
    for change in found[:_SHOWN]:
        if change.kind == "added":
            reasons.append(f"state_from_calls: {change.path} is {_value(change.new, ev.redactor)}, which the "
                           "reference calls do not leave")
        elif change.kind == "removed":
            reasons.append(f"state_from_calls: {change.path} is missing; the reference calls leave "
                           f"{_value(change.old, ev.redactor)}")
        else:
            reasons.append(f"state_from_calls: {change.path} is {_value(change.new, ev.redactor)}, the reference "
                           f"calls leave {_value(change.old, ev.redactor)}")
    if len(found) > _SHOWN:
        reasons.append(f"state_from_calls: and {len(found) - _SHOWN} more differences")
    return reasons


def check_results_from_calls(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if not v.results_from_calls or not v.state_from_calls or ev.reference_results is None:
        return []  # no reference calls, nothing to find; a reference that could not be played is said once above
    if len(ev.trace) == ev.turn_start:
        return [f"results_from_calls: the reference makes {len(v.state_from_calls)} call(s) here; the model made none"]
    left = [call.result for call in ev.trace]
    reasons: list[str] = []
    for i, result in enumerate(ev.reference_results):
        if result in left:
            left.remove(result)
        elif len(reasons) < _SHOWN:
            reasons.append(f"results_from_calls: {v.state_from_calls[i].name}'s result {quoted(result, redactor=ev.redactor)} "
                           "is not among the results of the model's calls")
    return reasons


def state_checks(fixture: Fixture, reasons: Sequence[str]) -> list[StateCheck] | None:
    """Each state check of the fixture's verifier and of its turns' (every `state` key,
    `state_from_calls`, `results_from_calls`), in order, and whether it held: it failed when one
    of `reasons` (the verifier's, as `verify` and `turn_reasons` give them, a turn's prefixed
    ``turn N: ``) is its own, or its turn was not reached. None when the fixture has none."""
    verifiers = [(None, fixture.verifier), *((n, t.verifier) for n, t in enumerate(fixture.scripted_turns, 1))]
    out: list[StateCheck] = []
    for turn, v in verifiers:
        if v is None:
            continue
        own = _own(reasons, turn)
        for key, want in (v.state or {}).items():
            out.append(StateCheck(check=f"state.{key}", turn=turn, expected=written(want),
                                  passed=_held(own, f"state.{key}: ", "state: ")))
        if v.state_from_calls is not None:
            out.append(StateCheck(check="state_from_calls", turn=turn, passed=_held(own, "state_from_calls")))
            if v.results_from_calls:
                out.append(StateCheck(check="results_from_calls", turn=turn, passed=_held(own, "results_from_calls")))
    return out or None


def _own(reasons: Sequence[str], turn: int | None) -> list[str]:
    """The reasons of the fixture's verifier (`turn` None), or of turn `turn`'s without its prefix."""
    if turn is None:
        return [r for r in reasons if not r.startswith("turn ")]
    prefix = f"turn {turn}: "
    return [r.removeprefix(prefix) for r in reasons if r.startswith(prefix)]


def _held(own: Sequence[str], *heads: str) -> bool:
    """Whether no reason of `own` starts with one of `heads` (nor says its turn was not reached)."""
    return not any(r.startswith((*heads, "not reached")) for r in own)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _value(value: Any, redactor: Redactor) -> str:
    """A state value for a reason: its JSON, cut and redacted (shown as a JSON string when cut)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 and redactor.cut(text, 80) == text else quoted(text, redactor=redactor)
