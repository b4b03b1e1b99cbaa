"""The verifier, pure: a fixture's declarative checks against what a run did give pass and reasons.

What a run did is its `Evidence`: the calls it made, the final answer (and every text message of
the agent, for `said`), the files the verifier asks about as the run left them, and its
environments' end state (checked by `state`). Each check is a small function
``check(verifier, fixture, evidence) -> list of reasons``; an empty list means it holds, and
`pass` is all of them. A fixture without a verifier passes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._runtime.matchers import Matcher, matches, matches_all, quoted, shown, written
from .._runtime.redact import NO_SECRETS, Redactor
from ..fixtures.model import FileCheck, Fixture, Verifier
from ..fixtures.trajectory import call_matches, in_order, mismatches, trajectory_matches
from .results import TraceCall
from .state import check_results_from_calls, check_state, check_state_from_calls

__all__ = ["CHECKS", "Evidence", "broken", "verify"]


@dataclass(frozen=True)
class Evidence:
    """What a run did: its calls, its answer, and each checked file's content (None: no such file);
    and the run's secrets, which reasons quote nothing of."""

    trace: Sequence[TraceCall] = ()
    answer: str = ""
    files: Mapping[str, str | None] = field(default_factory=dict)
    redactor: Redactor = NO_SECRETS
    state: Mapping[str, Any] | None = None  # environment -> end state (None: the fixture has none)
    reference_state: Mapping[str, Any] | str | None = None  # what `state_from_calls` reach, or why not
    reference_results: Sequence[str] | None = None  # the results of the `state_from_calls` calls, cut as the trace's
    turn_start: int = 0  # where the judged turn's calls begin in `trace` (0: the whole run is judged)
    said: Sequence[str] = ()  # every text message of the agent in the conversation, in order
    user_trace: Sequence[TraceCall] = ()  # the simulated user's calls of its own tools
    truncated: bool = False  # the run was cut short at a limit


Check = Callable[[Verifier, Fixture, Evidence], list[str]]


def _names(trace: Sequence[TraceCall]) -> list[str]:
    return [c.name for c in trace]


def check_exact(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if v.exact is None or v.exact is False:
        return []
    want = fx.expected_names if v.exact is True else v.exact
    if want is None:
        return ["exact: true needs an `expected` list in the fixture"]
    got = _names(ev.trace)
    return [] if got == list(want) else [f"exact: called {got}, expected {list(want)}"]


def check_must_include(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    missing = Counter(v.must_include) - Counter(_names(ev.trace))
    return [f"must_include: {name} was not called" for name in sorted(missing)]


def check_avoid(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    called = set(_names(ev.trace))
    return [f"avoid: {name} was called" for name in v.avoid if name in called]


def check_call_count(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    n = len(ev.trace)
    reasons = []
    if v.max_calls is not None and n > v.max_calls:
        reasons.append(f"max_calls: {n} calls, at most {v.max_calls} allowed")
    if v.min_calls is not None and n < v.min_calls:
        reasons.append(f"min_calls: {n} calls, at least {v.min_calls} required")
    return reasons


def check_args(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    reasons = []
    for tool, want in v.args.items():
        if not any(matches_all(want, c.arguments) for c in ev.trace if c.name == tool):
            reasons.append(f"args: no {tool} call with {shown(want)}")
    return reasons


def check_in_order(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if not v.in_order or in_order(ev.trace, v.in_order):
        return []
    wanted = [e if isinstance(e, str) else e.model_dump(mode="json", exclude_defaults=True) for e in v.in_order]
    return [f"in_order: {wanted} were not called in this order (called {_names(ev.trace)})"]


def check_any_order(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    calls = [*ev.trace, *ev.user_trace]
    return [f"any_order: no call matches {_show(e if isinstance(e, str) else e.model_dump(mode='json', exclude_defaults=True))}"
            for e in v.any_order if not any(call_matches(e, c) for c in calls)]


def check_finished(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    return ["finished: the run was cut short at a limit (truncated)"] if v.finished and ev.truncated else []


def check_match_expected(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if not v.match_expected:
        return []
    if fx.expected is None:
        return ["match_expected: true needs an `expected` list in the fixture"]
    if trajectory_matches(ev.trace, fx.expected, fx.match):
        return []
    return [f"match_expected: {why}" for why in mismatches(ev.trace, fx.expected, fx.match, ev.redactor)]


def check_answer(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    if v.answer is None:
        return []
    if isinstance(v.answer, Matcher):
        held = v.answer.test(ev.answer)
    else:  # a literal is the whole answer, surrounding whitespace aside
        held = isinstance(v.answer, str) and ev.answer.strip() == v.answer.strip()
    return [] if held else [f"answer: expected {_show(v.answer)}, the answer is {quoted(ev.answer, redactor=ev.redactor)}"]


def check_said(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    reasons = []
    for want in v.said:
        if isinstance(want, Matcher):
            held = any(want.test(text) for text in ev.said)
        else:  # a literal is a whole message, surrounding whitespace aside
            held = isinstance(want, str) and any(text.strip() == want.strip() for text in ev.said)
        if not held:
            reasons.append(f"said: no message of the agent matches {_show(want)} ({len(ev.said)} messages)")
    return reasons


def check_files(v: Verifier, fx: Fixture, ev: Evidence) -> list[str]:
    return [f"files.{path}: {why}" for path, check in v.files.items()
            if (why := _file_problem(check, ev.files.get(path), fx.files.get(path), ev.redactor)) is not None]


def _file_problem(check: FileCheck, content: str | None, provisioned: str | None,
                  redactor: Redactor) -> str | None:
    """Why the file does not satisfy `check`, or None."""
    if check.kind == "missing":
        return None if content is None else "the file exists; it should have been removed"
    if content is None:
        return "there is no such file"
    if check.kind == "exists":
        return None
    if check.kind == "unchanged":
        if provisioned is None:
            return "the fixture did not provision it, so it cannot be unchanged; it was created"
        if content == provisioned:
            return None
        start = _line_start(content, len(os.path.commonprefix([content, provisioned])))
        return f"it changed; {_from_line(content, start)}it now holds {quoted(content[start:], redactor=redactor)}"
    if matches(check.matcher, content):
        return None
    if isinstance(check.matcher, str):
        start = _line_start(content, len(os.path.commonprefix([content, check.matcher])))
        return (f"{_from_line(content, start)}it holds {quoted(content[start:], redactor=redactor)}, where "
                f"{quoted(check.matcher[start:], redactor=redactor)} was expected")
    start = _line_start(content, _nearest(check.matcher, content))
    return f"expected {_show(check.matcher)}; {_from_line(content, start)}it holds {quoted(content[start:], redactor=redactor)}"


def _nearest(matcher: object, content: str) -> int:
    """Where `content` comes nearest to holding what a `$contains` or `$icontains` wants: where
    the longest start of its text is; 0 for other matchers, or when no start of it is there."""
    if not isinstance(matcher, Matcher) or matcher.op not in ("$contains", "$icontains") \
            or not isinstance(matcher.operand, str):
        return 0
    wanted, text = matcher.operand, content
    if matcher.op == "$icontains":
        wanted, text = wanted.casefold(), text.casefold()
    low, high = 0, len(wanted)  # the longest start found: each shorter start is found too
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if wanted[:middle] in text else (low, middle - 1)
    return max(text.find(wanted[:low]), 0) if low and len(text) == len(content) else 0


def _line_start(text: str, at: int) -> int:
    """Where the line holding position `at` of `text` starts."""
    return text.rfind("\n", 0, min(at, len(text))) + 1


def _from_line(text: str, start: int) -> str:
    """``from line N `` for a quote starting at `start` past the first line; nothing at the start."""
    return f"from line {text.count(chr(10), 0, start) + 1} " if start else ""


def _show(expectation: object) -> str:
    return json.dumps(written(expectation), ensure_ascii=False)


CHECKS: tuple[Check, ...] = (
    check_exact, check_must_include, check_avoid, check_call_count, check_args, check_in_order, check_any_order,
    check_match_expected, check_answer, check_said, check_files, check_state, check_state_from_calls, check_results_from_calls,
    check_finished,
)


def broken(verifier: Verifier, fixture: Fixture, evidence: Evidence) -> list[str]:
    """The reasons `verifier` (the fixture's, or one of its turns') fails on `evidence`; empty: it holds."""
    return [r for check in CHECKS for r in check(verifier, fixture, evidence)]


def verify(fixture: Fixture, evidence: Evidence) -> tuple[bool, list[str]]:
    """Whether the run passes the fixture's verifier, and the reasons it does not."""
    if fixture.verifier is None:
        return True, []
    reasons = broken(fixture.verifier, fixture, evidence)
    return not reasons, reasons
