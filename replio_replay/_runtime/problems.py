"""A broken input that is reported rather than raised, so it never stops the rest: its file and why."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """A fixture file, tool set or plugin entry that could not be used, and why."""

    file: str
    message: str
