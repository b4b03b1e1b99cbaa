"""Text every output can hold: lone surrogates replaced by U+FFFD; pure.

A lone surrogate is what Python makes of a JSON escape without its pair (``"\\ud800"``) and of
a file name that is not UTF-8 (`os.fsdecode`, which `json.dumps` then writes as such an escape).
No UTF-8 text can hold one, so a golden, a JSON result, an HTML report or the terminal would
fail on it. Replio replaces each with U+FFFD where text comes in from outside (a provider's
answer, an agent's answer line, a Python tool's result), rather than escaping it: every output
then holds the same valid UTF-8, and a replay compares equal to the golden written from it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["clean", "clean_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with lone surrogates (which no UTF-8 output can hold) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def clean(value: Any) -> Any:
    """JSON-like `value` with every string `clean_text`-ed."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value
