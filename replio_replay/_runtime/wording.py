"""Words for messages: counted nouns (`1 fixture`, `2 fixtures`, `1,234 tokens`) and did-you-mean
hints (the known name nearest to one the user mistyped)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun, singular for exactly one; `many` when the plural is not noun + s."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """`did you mean 'x'? ` (to stand before the rest of a message) for the known name nearest
    to `name` (difflib's ratio at least `cutoff`); empty when none is near."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"did you mean {close[0]!r}? " if close else ""
