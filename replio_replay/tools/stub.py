"""Stub tools, pure: a declared tool that answers from its declaration, so any tool can be measured.

`result` answers every call; `results` is tried in order, the first clause whose `when`
matchers all hold answering. A text answer is returned as is, any other JSON value written
canonically, and ``{"error": "..."}`` becomes an ``Error:`` result. When no clause matches
the model is told so: ``Error: no stubbed result for NAME with {...}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..matchers import matches_all
from .base import Invoke, ToolContext, ToolFailure

if TYPE_CHECKING:
    from .declared import ToolDecl

__all__ = ["render_result", "stub_answer", "stub_invoke"]


def render_result(result: Any) -> str:
    """The text the model receives for a stubbed result; ToolFailure for ``{"error": ...}``."""
    if isinstance(result, dict) and set(result) == {"error"}:
        raise ToolFailure(str(result["error"]))
    if isinstance(result, str):
        return result
    return _canonical(result)


def stub_answer(name: str, decl: ToolDecl, arguments: dict[str, Any]) -> str:
    """The stub's answer to one call (arguments already checked against its schema)."""
    if decl.results is None:
        return render_result(decl.result)
    for case in decl.results:
        if matches_all(case.when, arguments):
            return render_result(case.result)
    raise ToolFailure(f"no stubbed result for {name} with {_canonical(arguments)}")


def stub_invoke(name: str, decl: ToolDecl) -> Invoke:
    """The `invoke` of a stub tool."""

    def invoke(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return stub_answer(name, decl, arguments)

    return invoke


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
