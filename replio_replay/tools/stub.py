"""Stub tools, pure: a declared tool that answers from its declaration, so any tool can be measured.

`result` answers every call; `results` is tried in order, the first clause whose `when`
matchers all hold answering. A text answer is returned as is, any other JSON value written
canonically, and ``{"error": "..."}`` becomes an ``Error:`` result. When no clause matches
the model is told so: ``Error: no stubbed result for NAME with {...}``, followed by the stub's
`unmatched` text when it has one (an imported trace's stubs say that production never made that call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._runtime.jsoncanon import canonical
from .._runtime.matchers import ArgExpectation, matches_all
from .base import Invoke, ToolContext, ToolFailure

__all__ = ["StubCase", "render_result", "stub_answer", "stub_invoke"]


class StubCase(BaseModel):
    """One clause of a stub's `results`: the arguments it applies to, and what it answers."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    when: dict[str, ArgExpectation] = Field(
        default_factory=dict, description="argument -> matcher; every named argument must match."
    )
    result: Any = Field(description='Text, JSON (written canonically), or {"error": "..."}.')


def render_result(result: Any) -> str:
    """The text the model receives for a stubbed result; ToolFailure for ``{"error": ...}``."""
    if isinstance(result, dict) and set(result) == {"error"}:
        raise ToolFailure(str(result["error"]))
    if isinstance(result, str):
        return result
    return canonical(result)


def stub_answer(name: str, result: Any, results: Sequence[StubCase] | None, arguments: dict[str, Any],
                unmatched: str | None = None) -> str:
    """The stub's answer to one call (arguments already checked against its schema); a call no
    clause of `results` matches is a ToolFailure, saying `unmatched` after what was called."""
    if results is None:
        return render_result(result)
    for case in results:
        if matches_all(case.when, arguments):
            return render_result(case.result)
    said = f"no stubbed result for {name} with {canonical(arguments)}"
    raise ToolFailure(f"{said}; {unmatched}" if unmatched else said)


def stub_invoke(name: str, result: Any, results: Sequence[StubCase] | None, unmatched: str | None = None) -> Invoke:
    """The `invoke` of a stub tool answering `result`, or from `results` by the arguments."""

    def invoke(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return stub_answer(name, result, results, arguments, unmatched)

    return invoke
