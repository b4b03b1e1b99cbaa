"""Judging, pure: a finished loop's transcript becomes a fixture result with its trace, metrics and verdict.

No concurrency, no I/O: the runner hands in what the loop produced and gets the result the
reports, goldens and CI gates read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._runtime.redact import NO_SECRETS, Redactor
from ..fixtures.model import Fixture
from ..judge.metrics import accuracy, redundant
from ..judge.results import FixtureResult, Status, TraceCall
from ..judge.verifier import Evidence, verify
from ..prices import Price, cost
from .engine import Transcript

__all__ = ["RESULT_CAP", "cancelled_result", "judge_transcript"]

_UNFINISHED = (Status.ERROR, Status.CANCELLED)

#: Characters of a tool's result kept in the trace (the model saw all of it).
RESULT_CAP = 4000


def judge_transcript(fixture: Fixture, t: Transcript, extras: Mapping[str, Any] | None = None,
                     redactor: Redactor = NO_SECRETS, price: Price | None = None) -> FixtureResult:
    """A transcript judged: trace, metrics, the verifier's verdict, and at `price` (when known) its
    cost, all the agent's; what is cut for the trace and the reasons is cut by `redactor`."""
    more = "\n[... cut: {left} more characters not shown]"
    trace = [TraceCall(name=r.call.name, arguments=r.call.arguments, result=redactor.cut(r.result, RESULT_CAP, more))
             for r in t.records]
    names = [c.name for c in trace]
    passed, reasons = verify(fixture, Evidence(trace, t.answer, t.files, redactor))
    if t.status in _UNFINISHED:
        passed, reasons = False, [f"the run ended in {t.status.value}"]
    extra = {k: v for k, v in (extras or {}).items() if k in FixtureResult.model_fields}
    # Tokens counted only as a total cannot be priced: no cost, rather than a made-up one.
    if price is not None and (t.prompt_tokens or t.completion_tokens or not t.tokens):
        usd = cost(price, t.prompt_tokens, t.completion_tokens, t.cached_tokens)
        extra = {"cost": usd, "cost_by_role": {"agent": usd}, **extra}
    return FixtureResult(
        id=fixture.id,
        task=fixture.task,
        trace=trace,
        names=names,
        # A run that failed or was cut short did not do what was expected, whatever it called.
        accuracy=accuracy(trace, fixture.expected, fixture.match)
        if t.status not in _UNFINISHED or fixture.expected is None else 0.0,
        passed=passed,
        calls=len(trace),
        redundant=redundant([(c.name, c.arguments) for c in trace]),
        errors=sum(r.is_error for r in t.records) + (t.status is Status.ERROR),
        tokens=t.tokens,
        status=t.status,
        error=t.error,
        reasons=reasons,
        answer=t.answer,
        turns=[r.turn for r in t.records],
        **extra,
    )


def cancelled_result(fixture: Fixture, trial: int = 1, why: str = "the run was interrupted") -> FixtureResult:
    """The result of a fixture (trial) the run never started, or abandoned, because of `why`."""
    return FixtureResult(
        id=fixture.id, task=fixture.task, status=Status.CANCELLED, error=f"not run: {why}",
        reasons=["the run ended in cancelled"], accuracy=None if fixture.expected is None else 0.0, trial=trial,
    )
