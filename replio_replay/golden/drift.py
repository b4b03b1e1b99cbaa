"""Drift, pure: how a result's canonical form differs from its golden, change by change.

Each change has a path (``turns[1][0].arguments.path``) and a kind a reviewer reads at a
glance: ``call_added``, ``call_removed``, ``turn_added``, ``turn_removed``,
``tool_changed``, ``argument_changed`` / ``argument_added`` / ``argument_removed``,
``answer_changed``, ``status_changed``, ``pass_changed``, ``metric_changed``.
"""

from __future__ import annotations

import re
from typing import Any

from ..diffing import Change, changes

__all__ = ["drift"]

_TURN = re.compile(r"^turns\[\d+\]$")
_CALL = re.compile(r"^turns\[\d+\]\[\d+\]$")
_NAME = re.compile(r"^turns\[\d+\]\[\d+\]\.name$")
_ARG = re.compile(r"^turns\[\d+\]\[\d+\]\.arguments")


def _same_call(x: Any, y: Any, level: Any = None) -> bool:
    """Align calls by tool name, and turns by their first call, when counts differ."""
    if isinstance(x, dict) and isinstance(y, dict):
        return bool(x.get("name") == y.get("name"))
    if isinstance(x, list) and isinstance(y, list):
        return [c.get("name") for c in x[:1]] == [c.get("name") for c in y[:1]]
    from deepdiff.helper import CannotCompare

    raise CannotCompare() from None


def _kind(change: Change) -> str:
    p, k = change.path, change.kind
    if _TURN.match(p):
        return {"added": "turn_added", "removed": "turn_removed"}.get(k, "turn_changed")
    if _CALL.match(p):
        return {"added": "call_added", "removed": "call_removed"}.get(k, "call_changed")
    if _NAME.match(p):
        return "tool_changed"
    if _ARG.match(p):
        return {"added": "argument_added", "removed": "argument_removed"}.get(k, "argument_changed")
    if p.startswith("metrics"):
        return "metric_changed"
    if p in ("answer", "status", "pass"):
        return f"{p}_changed"
    return k


def drift(golden: dict[str, Any], current: dict[str, Any]) -> list[Change]:
    """The changes from the approved golden to the current canonical result."""
    old_turns, new_turns = golden.get("turns", []), current.get("turns", [])
    shifted = len(old_turns) != len(new_turns) or any(
        len(a) != len(b) for a, b in zip(old_turns, new_turns)
    )
    found = changes(golden, current, same_item=_same_call if shifted else None)
    return [Change(c.path, _kind(c), c.old, c.new) for c in found]
