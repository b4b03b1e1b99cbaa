"""BFCL function names as tool names, pure: a reversible rule, since providers refuse dots.

BFCL names functions like Python (`math.factorial`, `spotify.play`); providers take tool names
matching ``^[a-zA-Z0-9_-]{1,64}$``. BFCL's own OpenAI handler turns ``.`` into ``_``, which
cannot be undone (`get_weather` and `get.weather` would meet). No BFCL name holds a ``-``, so
``.`` becomes ``-`` here and ``-`` reads back as ``.``.
"""

from __future__ import annotations

import re

__all__ = ["decode_name", "encode_name", "name_problem"]

_BFCL_NAME = re.compile(r"[A-Za-z0-9_.]{1,64}")


def name_problem(name: str) -> str | None:
    """Why the BFCL function name `name` has no tool name under this rule, or None."""
    if _BFCL_NAME.fullmatch(name):
        return None
    return (f"function name {name!r} cannot be a tool name: only letters, digits, '_' and '.' "
            "(up to 64) can be encoded reversibly")


def encode_name(name: str) -> str:
    """The tool name of BFCL function `name` (``.`` -> ``-``)."""
    return name.replace(".", "-")


def decode_name(tool_name: str) -> str:
    """The BFCL function name of a tool name made by `encode_name` (``-`` -> ``.``)."""
    return tool_name.replace("-", ".")
