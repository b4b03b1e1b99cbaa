"""The one JSON writer: stable key order, two-space indent, a trailing newline, strict JSON."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


def dumps(data: Any) -> str:
    """Serialise `data` for output; identical input gives identical bytes.

    ValueError for NaN or Infinity, which JSON has not: the result models refuse them, so
    nothing replio computes holds one.
    """
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
