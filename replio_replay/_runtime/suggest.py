"""Did-you-mean hints: the known name nearest to one the user mistyped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """`did you mean 'x'? ` (to stand before the rest of a message) for the known name nearest
    to `name` (difflib's ratio at least `cutoff`); empty when none is near."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"did you mean {close[0]!r}? " if close else ""
