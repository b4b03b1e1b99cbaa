"""Words for messages: counted nouns (`1 fixture`, `2 fixtures`, `1,234 tokens`), did-you-mean
hints (the known name nearest to one the user mistyped) and pydantic's errors as `field: problem`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["did_you_mean", "plural", "validation_message"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun, singular for exactly one; `many` when the plural is not noun + s."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """`did you mean 'x'? ` (to stand before the rest of a message) for the known name nearest
    to `name` (difflib's ratio at least `cutoff`); empty when none is near."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"did you mean {close[0]!r}? " if close else ""


def validation_message(exc: ValidationError, shape: str) -> str:
    """Render pydantic's errors as `field.path: problem` lines a user can act on."""
    lines = []
    for err in exc.errors():
        # a union's tags ("~stdio") say which shape was tried: not part of the field's path
        where = ".".join(str(p) for p in err["loc"] if not str(p).startswith("~")) or "(top level)"
        problem = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            problem = f"unknown key; check the spelling against {shape}"
        elif err["type"] == "missing":
            problem = "required key is missing"
        lines.append(f"{where}: {problem}")
    return "; ".join(lines)
