"""Judging, pure: a finished loop's transcript becomes a fixture result with its trace, metrics and verdict.

No I/O: the runner hands in what the loop produced and gets the result the reports, goldens
and CI gates read (the result models built first, once for the process: `build_result_models`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._runtime.redact import NO_SECRETS, Redactor
from ..fixtures.model import Fixture
from ..judge.llm import verdict_reasons
from ..judge.metrics import accuracy, redundant
from ..judge.results import FixtureResult, JudgeVerdict, Status, TraceCall, build_result_models
from ..judge.state import state_checks
from ..judge.turns import turn_reasons
from ..judge.verifier import Evidence, verify
from ..prices import Price, cost
from ..providers.base import Message
from .engine import Transcript

__all__ = ["RESULT_CAP", "cancelled_result", "judge_transcript"]

_UNFINISHED = (Status.ERROR, Status.CANCELLED)

#: Characters of a tool's result kept in the trace (the model saw all of it).
RESULT_CAP = 4000


def judge_transcript(fixture: Fixture, t: Transcript, extras: Mapping[str, Any] | None = None,
                     redactor: Redactor = NO_SECRETS, prices: Mapping[str, Price] | None = None) -> FixtureResult:
    """A transcript judged: trace, metrics, the verifier's verdict, and its cost at `prices` (role ->
    the price of the model that spoke as it; see `_costs`); what is cut for the trace and the
    reasons is cut by `redactor`."""
    build_result_models()
    more = "\n[... cut: {left} more characters not shown]"
    trace = [TraceCall(name=r.call.name, arguments=r.call.arguments, result=redactor.cut(r.result, RESULT_CAP, more))
             for r in t.records]
    conversation = conversation_json(t.messages, redactor) \
        if fixture.turns is not None or fixture.user is not None else None
    places = _user_places(fixture, conversation or [])
    user_trace = [TraceCall(name=r.call.name, arguments=r.call.arguments, result=redactor.cut(r.result, RESULT_CAP, more),
                            at=places(r.turn)) for r in t.user_records]
    names = [c.name for c in trace]
    cut = [redactor.cut(r, RESULT_CAP, more) for r in t.reference_results] if t.reference_results is not None else None
    said = [m.content for m in t.messages if m.role == "assistant" and m.content]
    evidence = Evidence(trace, t.answer, t.files, redactor, t.state, t.reference_state, cut, said=said,
                        user_trace=user_trace, truncated=t.status is Status.TRUNCATED)
    passed, reasons = verify(fixture, evidence)
    if fixture.turns is not None:
        references = {n: dataclasses.replace(r, results=[redactor.cut(x, RESULT_CAP, more) for x in r.results])
                      for n, r in t.turn_references.items()}
        reasons = turn_reasons(fixture, t.turn_ends, evidence, references) + reasons
        passed = not reasons
    # a run that ended in error or was cancelled is not judged: its checks have no verdict
    checks = state_checks(fixture, reasons) if t.status not in _UNFINISHED else None
    if t.judged is not None:
        reasons += verdict_reasons(t.judged)
        passed = passed and all(v.passed for v in t.judged)
    if t.status in _UNFINISHED:
        passed, reasons = False, [f"the run ended in {t.status.value}"]
    # imported from a trace and given no verifier yet: neither a pass nor a failure
    unjudged = fixture.unjudged and t.status not in _UNFINISHED and not reasons
    if unjudged:
        passed = False
    extra = {k: v for k, v in (extras or {}).items() if k in FixtureResult.model_fields}
    by_role, unknown = _costs(t, prices or {})
    if unknown:
        extra = {"cost_unknown": unknown, **extra}
    elif by_role:
        extra = {"cost": round(sum(by_role.values()), 6), "cost_by_role": by_role, **extra}
    return FixtureResult(
        id=fixture.id,
        task=fixture.task,
        group=fixture.group,
        trace=trace,
        names=names,
        # A run that failed or was cut short did not do what was expected, whatever it called.
        accuracy=accuracy(trace, fixture.expected, fixture.match)
        if t.status not in _UNFINISHED or fixture.expected is None else 0.0,
        passed=passed,
        unjudged=True if unjudged else None,
        calls=len(trace),
        redundant=redundant([(c.name, c.arguments) for c in trace]),
        errors=sum(r.is_error for r in t.records) + (t.status is Status.ERROR),
        tokens=t.tokens,
        status=t.status,
        error=t.error,
        reasons=reasons,
        answer=t.answer,
        finish=t.finishes if any(f is not None for f in t.finishes) else None,
        turns=[r.turn for r in t.records],
        state=t.state,
        state_checks=checks,
        conversation=conversation,
        tokens_by_role=t.tokens_by_role if len(t.tokens_by_role) > 1 else None,
        judge=_judge_json(fixture, t),
        user_trace=user_trace or None,
        **extra,
    )


def _user_places(fixture: Fixture, conversation: Sequence[Mapping[str, Any]]) -> Callable[[int], int]:
    """Where a simulated user's call made before its message number `n` (from 1) lies in the result's
    `conversation`: the number of messages before that message (the fixture's `history` and its
    task come first), or all of them when it came after the last."""
    said = [i for i, m in enumerate(conversation) if m["role"] == "user"]
    before = sum(1 for m in fixture.history or () if m.role == "user")

    def place(n: int) -> int:
        k = before + n - 1
        return said[k] if k < len(said) else len(conversation)

    return place


def _judge_json(fixture: Fixture, t: Transcript) -> JudgeVerdict | list[JudgeVerdict] | None:
    """The judge's verdicts as the result holds them: one for a rubric of one statement, a list for a list."""
    judge = fixture.verifier.judge if fixture.verifier is not None else None
    if t.judged is None or judge is None or t.status in _UNFINISHED:
        return None
    return t.judged[0] if isinstance(judge.rubric, str) else t.judged


def conversation_json(messages: Sequence[Message], redactor: Redactor = NO_SECRETS) -> list[dict[str, Any]]:
    """The conversation as a result shows it: every message but the system prompt, in order; tool
    results cut as in the trace."""
    more = "\n[... cut: {left} more characters not shown]"
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "name": m.name, "content": redactor.cut(m.content, RESULT_CAP, more)})
        elif m.role == "assistant" and m.tool_calls:
            calls = [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls]
            out.append({"role": "assistant", "content": m.content, "calls": calls})
        elif m.role != "system":
            out.append({"role": m.role, "content": m.content})
    return out


def _costs(t: Transcript, prices: Mapping[str, Price]) -> tuple[dict[str, float], list[str]]:
    """USD per role that spoke, at its model's price, and the priced roles whose cost is unknown: an
    answer of theirs did not give its prompt and completion tokens (`Transcript.uncounted`), so what
    they spent cannot be counted, never a made-up 0. A role with no price is left out (so `cost` is
    what the priced roles spent)."""
    unknown = sorted(role for role in t.uncounted if role in prices)
    out = {role: cost(price, used["prompt"], used["completion"], used.get("cached", 0))
           for role, used in t.tokens_by_role.items()
           if (price := prices.get(role)) is not None and role not in t.uncounted}
    if "agent" in prices and "agent" not in t.tokens_by_role:  # no turn was answered: nothing spent
        out = {"agent": 0.0, **out}
    return out, unknown


def cancelled_result(fixture: Fixture, trial: int = 1, why: str = "the run was interrupted") -> FixtureResult:
    """The result of a fixture (trial) the run never started, or abandoned, because of `why`."""
    build_result_models()
    return FixtureResult(
        id=fixture.id, task=fixture.task, group=fixture.group, status=Status.CANCELLED, error=f"not run: {why}",
        reasons=["the run ended in cancelled"], accuracy=None if fixture.expected is None else 0.0, trial=trial,
    )
