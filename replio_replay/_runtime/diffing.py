"""Pure structural diffs through deepdiff, as `{path, kind, old, new}` changes a reviewer can read.

Paths are written the way a user would type them (``tools[2].function.description``);
kinds are ``changed``, ``added``, ``removed`` and ``type_changed``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .jsoncanon import canonical

__all__ = ["Change", "changes", "dotted"]

_KINDS = {
    "values_changed": "changed",
    "type_changes": "type_changed",
    "dictionary_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_added": "added",
    "iterable_item_removed": "removed",
    "attribute_added": "added",
    "attribute_removed": "removed",
}


@dataclass(frozen=True)
class Change:
    """One difference between an old and a new structure."""

    path: str
    kind: str
    old: Any = None
    new: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "old": self.old, "new": self.new}

    def describe(self) -> str:
        """`path kind: old -> new`, values shortened; two long texts show where they differ."""
        if self.kind.endswith("added"):
            return f"{self.path} {self.kind}: {_short(self.new)}"
        if self.kind.endswith("removed"):
            return f"{self.path} {self.kind}: {_short(self.old)}"
        old, new = _around_difference(_text(self.old), _text(self.new))
        return f"{self.path} {self.kind}: {old} -> {new}"


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _short(value: Any, limit: int = 80) -> str:
    text = _text(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _around_difference(old: str, new: str, limit: int = 80, context: int = 24) -> tuple[str, str]:
    """Two texts cut to at most about `limit` characters each, both around the part that differs.

    Cutting both at the same prefix would often show two identical starts; this skips the
    common prefix and suffix, keeping `context` characters of each as a guide.
    """
    if len(old) <= limit and len(new) <= limit:
        return old, new
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - context)

    def cut(text: str) -> str:
        end = len(text) - max(0, suffix - context)
        middle = text[start:end]
        if len(middle) > limit:
            middle = middle[:limit - 3] + "..."
        return ("..." if start else "") + middle + ("..." if end < len(text) and not middle.endswith("...") else "")

    return cut(old), cut(new)


def dotted(parts: Iterable[Any]) -> str:
    """['tools', 2, 'function'] -> 'tools[2].function'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def changes(
    old: Any,
    new: Any,
    *,
    exclude_regex_paths: Iterable[str] = (),
    same_item: Callable[[Any, Any, Any], bool] | None = None,
) -> list[Change]:
    """The differences from `old` to `new`, in path order; [] when equal (a number written as an
    integer or as a float is the same number, as the matchers have it).

    Canonical JSON is compared first, so the common case (no change) never runs deepdiff.
    `same_item` is deepdiff's iterable_compare_func: it aligns list items (moves are not
    reported, only what was added, removed or changed).
    """
    if canonical(old, default=str) == canonical(new, default=str):
        return []
    from deepdiff import DeepDiff

    diff = DeepDiff(
        old, new, view="tree", exclude_regex_paths=list(exclude_regex_paths) or None,
        iterable_compare_func=same_item,
    )
    found = []
    for report, levels in diff.items():
        kind = _KINDS.get(report)
        if kind is None:
            continue
        for level in levels:
            t1 = None if kind == "added" else _plain(level.t1)
            t2 = None if kind == "removed" else _plain(level.t2)
            numbers = kind == "type_changed" and _numbers(t1, t2)  # 0 and 0.0: one JSON number (JavaScript's and Python's)
            if numbers and t1 == t2:
                continue
            found.append(Change(dotted(level.path(output_format="list")), "changed" if numbers else kind, t1, t2))
    return sorted(found, key=lambda c: (c.path, c.kind))


def _numbers(*values: Any) -> bool:
    """Whether every value is a JSON number (an int or a float; booleans are no numbers)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _plain(value: Any) -> Any:
    """deepdiff's placeholders and tuples as plain JSON-able values."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)
