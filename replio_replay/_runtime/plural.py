"""Counted nouns for messages: `1 fixture`, `2 fixtures`, `1,234 tokens`."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun, singular for exactly one; `many` when the plural is not noun + s."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"
