"""The token usage a cassette recorded: what its provider's answers said they used, read back for
`--max-cost`'s estimate of what recording it again costs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ReplioError
from ..providers.base import Usage
from .cassette import json_body
from .serializer import load_cassette

__all__ = ["recorded_usage"]


def recorded_usage(path: Path, decode: Callable[[Any], Usage]) -> list[Usage] | None:
    """The usage `decode` finds in each successful JSON answer of the cassette at `path`; None when
    there is no cassette or it cannot be read (a broken one is reported when it is replayed)."""
    try:
        cassette = load_cassette(path.read_text(encoding="utf-8"), str(path))["cassette"]
    except (OSError, UnicodeDecodeError, ReplioError):
        return None
    usages = []
    for interaction in cassette["interactions"]:
        response = interaction["response"]
        data = json_body(response["body"].get("string"))
        if not 200 <= response["status"]["code"] < 300 or not isinstance(data, dict):
            continue
        try:
            usages.append(decode(data))
        except ReplioError:  # an answer of the wrong shape used nothing worth counting
            continue
    return usages
