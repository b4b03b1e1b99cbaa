"""The one canonical JSON form: keys sorted, no whitespace, UTF-8 kept as is; pure.

Equal data gives equal text, so it is what replio compares, hashes, keys memos on and sends:
request bodies (which cassettes store in this form, so an unchanged replayed request is
recognised by its bytes), tool results written as JSON, stub and MCP call matching, drift.
Files written for people (goldens, reports, fixtures) are indented instead; `jsonin` reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["canonical"]


def canonical(value: Any, *, default: Callable[[Any], Any] | None = None, allow_nan: bool = True) -> str:
    """`value` as canonical JSON text.

    `default` and `allow_nan` are `json.dumps`'s: what to make of a value JSON has not (TypeError
    without `default`), and whether NaN and Infinity are written (as Python does) or refused
    with a ValueError (what goes over the wire).
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      default=default, allow_nan=allow_nan)
