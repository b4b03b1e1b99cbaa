"""Drift, pure: how a result's canonical form differs from its golden, change by change.

Each change has a path (``turns[1][0].arguments.path``) and a kind a reviewer reads at a
glance: ``call_added``, ``call_removed``, ``turn_added``, ``turn_removed``,
``tool_changed``, ``argument_changed`` / ``argument_added`` / ``argument_removed``,
``answer_changed``, ``status_changed``, ``pass_changed``, ``metric_changed``, ``state_changed``
(an environment's end state: ``state.shop.orders.A-1042.status``).

Turns and the calls in them are aligned by tool names (a longest-common-subsequence match,
as `difflib` does for lines), so a call inserted early shows as one `call_added` rather than
every later call changed, and a repeated identical call is named too. Within aligned calls,
and for everything else, deepdiff finds what changed. Paths of added and changed items
index the current result; paths of removed ones index the golden.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any

from .._runtime.diffing import Change, changes

__all__ = ["drift", "tolerated"]


def drift(golden: dict[str, Any], current: dict[str, Any]) -> list[Change]:
    """The changes from the approved golden to the current canonical result."""
    rest = changes(_without_turns(golden), _without_turns(current))
    found = [Change(c.path, _kind(c), c.old, c.new) for c in rest]
    found += _aligned(_list(golden.get("turns")), _list(current.get("turns")), "turns", _turn_changes)
    return sorted(found, key=lambda c: (c.path, c.kind))


def tolerated(changes: list[Change], tokens_tolerance: float | None) -> tuple[list[Change], list[Change]]:
    """The changes that fail a golden, and those reported only: a token count that changed by at
    most `tokens_tolerance` (relative to the golden's; None: by any amount), since token counts
    move with every description or prompt edit while the behaviour stays the same."""
    failing: list[Change] = []
    info: list[Change] = []
    for change in changes:
        (info if change.path == "metrics.tokens" and _within(change, tokens_tolerance) else failing).append(change)
    return failing, info


def _within(change: Change, tolerance: float | None) -> bool:
    if tolerance is None:
        return True
    old, new = change.old, change.new
    if not isinstance(old, (int, float)) or not isinstance(new, (int, float)):
        return False
    return abs(new - old) <= tolerance * abs(old)


def _without_turns(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "turns"}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _kind(change: Change) -> str:
    p, k = change.path, change.kind
    if p.startswith("metrics"):
        return "metric_changed"
    if p in ("answer", "status", "pass"):
        return f"{p}_changed"
    if p == "state" or p.startswith(("state.", "state[")):
        return "state_changed"
    return k


def _name(call: Any) -> Any:
    return call.get("name") if isinstance(call, dict) else None


def _signature(item: Any) -> Any:
    """What aligns two items: a call's tool name, a turn's sequence of tool names."""
    if isinstance(item, list):
        return tuple(_name(c) for c in item)
    return _name(item)


def _aligned(old: list[Any], new: list[Any], prefix: str, pair: Any) -> list[Change]:
    """Added, removed and paired items of two lists aligned by signature; `pair` diffs a pair."""
    unit = "turn" if prefix == "turns" else "call"
    found: list[Change] = []
    matcher = SequenceMatcher(a=[_signature(x) for x in old], b=[_signature(x) for x in new], autojunk=False)
    for _, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = min(i2 - i1, j2 - j1)
        for offset in range(pairs):
            found += pair(old[i1 + offset], new[j1 + offset], f"{prefix}[{j1 + offset}]")
        found += [Change(f"{prefix}[{j}]", f"{unit}_added", None, new[j]) for j in range(j1 + pairs, j2)]
        found += [Change(f"{prefix}[{i}]", f"{unit}_removed", old[i], None) for i in range(i1 + pairs, i2)]
    return found


def _turn_changes(old: Any, new: Any, path: str) -> list[Change]:
    return _aligned(_list(old), _list(new), path, _call_changes)


def _call_changes(old: Any, new: Any, path: str) -> list[Change]:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [] if old == new else [Change(path, "call_changed", old, new)]
    found = []
    if old.get("name") != new.get("name"):
        found.append(Change(f"{path}.name", "tool_changed", old.get("name"), new.get("name")))
    for c in changes(old.get("arguments"), new.get("arguments")):
        where = f"{path}.arguments" + ("" if c.path == "(root)" else f".{c.path}" if not c.path.startswith("[")
                                       else c.path)
        kind = {"added": "argument_added", "removed": "argument_removed"}.get(c.kind, "argument_changed")
        found.append(Change(where, kind, c.old, c.new))
    return found
