"""The token usage a cassette recorded: what its provider's answers said they used, read back for
`--max-cost`'s estimate of what recording it again costs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ReplioError
from .cassette import json_body
from .roles import dict_role
from .serializer import load_cassette

__all__ = ["recorded_usage"]

T = TypeVar("T")


def recorded_usage(path: Path, read: Callable[[str, Any], T | None]) -> list[T] | None:
    """What `read` makes of each successful JSON answer of the cassette at `path` (its usage, its
    cost), given the role that asked (`agent`, `user`, `judge`: each may be another provider's
    answer; None leaves it out); None when there is no cassette or it cannot be read (a broken one
    is reported when it is replayed)."""
    try:
        cassette = load_cassette(path.read_text(encoding="utf-8"), str(path))["cassette"]
    except (OSError, UnicodeDecodeError, ReplioError):
        return None
    values: list[T] = []
    for interaction in cassette["interactions"]:
        response = interaction["response"]
        data = json_body(response["body"].get("string"))
        if not 200 <= response["status"]["code"] < 300 or not isinstance(data, dict):
            continue
        try:
            value = read(dict_role(interaction["request"]), data)
        except ReplioError:  # an answer of the wrong shape used nothing worth counting
            continue
        if value is not None:
            values.append(value)
    return values
