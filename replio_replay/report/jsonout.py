"""The one JSON writer: stable key order, two-space indent, a trailing newline."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


def dumps(data: Any) -> str:
    """Serialise `data` for output; identical input gives identical bytes."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
