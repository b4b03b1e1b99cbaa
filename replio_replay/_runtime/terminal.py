"""Text made safe for a terminal: control characters a file or a model wrote shown, not obeyed.

A task id, a description or a problem message comes from files replio did not write; printed raw,
an ESC or OSC sequence in it could recolour, retitle or rewrite the user's terminal, a CR hide
what came before it on the line, a BEL ring. `printable` writes each such character as its
Python escape (``\\x1b``) so the user sees it; newlines and tabs, which the messages use, stay.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

#: C0 controls but tab and newline, DEL, C1 controls, and the line and paragraph separators.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline written as its escape."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
