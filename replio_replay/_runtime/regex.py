"""Regular expressions that a user or a model writes, compiled by RE2: the one way to match them.

RE2 (https://github.com/google/re2/wiki/Syntax) matches in time linear in the text, whatever
the pattern, so no pattern can hang a run: Python's `re` takes exponential time on
``^(a+)+$`` and holds the interpreter (and with it the signal handlers) while it does. RE2
lacks on purpose what needs backtracking (backreferences, lookaround, atomic groups,
possessive quantifiers, conditionals); `compile_regex` refuses those with a message that says
so and what to write instead. Text is matched as UTF-8 bytes (a lone surrogate as one ``?``):
``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII, and ``$`` without ``(?m)`` is the end of the text.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

__all__ = ["compile_regex", "regex_search", "utf8"]

#: What the message for a backreference suggests, and for lookaround unless the caller knows better.
REWRITE = "rewrite the pattern without them"


def _options() -> Any:
    options = re2.Options()
    # RE2 would print every pattern it refuses to stderr; the caller tells the user instead.
    options.log_errors = False
    # Every caller asks only whether (or where in all) a pattern matches: without groups to
    # capture, RE2 finds a match by its DFA, 50 times faster on a 50 MB text than through its NFA.
    options.never_capture = True
    return options


OPTIONS = _options()


def compile_regex(pattern: str, who: str, rewrite: str = REWRITE) -> Any:
    """`pattern` compiled by RE2, or ValueError ``invalid regular expression '...': why; what to do``.

    `who` names what reads the pattern (``grep``, ``$regex``) in the message; `rewrite` is the
    advice for a lookahead or lookbehind.
    """
    try:
        return _compiled(pattern)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        problem = _problem(detail, f"({who} uses RE2 syntax, a linear-time engine)", rewrite)
    except UnicodeEncodeError:
        problem = "it holds a lone surrogate character, which no UTF-8 text contains; remove it"
    raise ValueError(f"invalid regular expression '{pattern}': {problem}")


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, OPTIONS)


def regex_search(pattern: str, text: str) -> bool:
    """Whether `pattern` (valid RE2) occurs anywhere in `text`, in time linear in `text`."""
    return _compiled(pattern).search(utf8(text)) is not None


def utf8(text: str) -> bytes:
    """`text` as RE2 reads it: UTF-8, with each character that has none (a lone surrogate, as a
    file name's undecodable byte becomes) as one `?`, so it still counts as one character.
    Bytes also spare RE2's wrapper its character-offset bookkeeping."""
    return text.encode("utf-8", "replace")


#: Python `re` syntax RE2 refuses, as (what RE2 reports, what the user is told, `{note}` standing
#: for who uses RE2 and `{rewrite}` for the caller's advice). RE2 lacks these on purpose: each
#: needs backtracking, which is what makes a regex take exponential time.
_UNSUPPORTED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(reported), told)
    for reported, told in [
        (r"invalid escape sequence: \\[1-9]|invalid perl operator: \(\?P$",
         "backreferences are not supported {note}; " + REWRITE),
        (r"invalid perl operator: \(\?[=!]$",
         "lookahead assertions are not supported {note}; {rewrite}"),
        (r"invalid perl operator: \(\?<[=!]$",
         "lookbehind assertions are not supported {note}; {rewrite}"),
        (r"invalid perl operator: \(\?>$",
         "atomic groups are not supported {note}; a plain group (?:...) does the same here"),
        (r"invalid perl operator: \(\?\($",
         "conditional groups are not supported {note}; use alternation (a|b) instead"),
        (r"invalid perl operator: \(\?#$",
         "comments (?#...) are not supported {note}; remove them"),
        (r"invalid perl operator: \(\?[a-zA-Z-]*$",
         "of the inline flags only i, m, s and U are supported {note}; remove the others"),
        (r"bad repetition operator: .+\+$",
         "possessive quantifiers are not supported {note}; use the plain quantifier"),
        (r"invalid escape sequence: \\Z$",
         "\\Z is not supported {note}; use \\z or $ (the end of the text unless (?m) is given)"),
        (r"invalid escape sequence: \\[uUN]$",
         "\\u, \\U and \\N escapes are not supported {note}; use \\x{{hex}} (e.g. \\x{{e9}}) "
         "or the character itself"),
        (r"invalid repetition size",
         "repetition counts go from 0 to 1000, smallest first {note}; use smaller counts"),
        (r"pattern too large",
         "the pattern is too large {note}; use a shorter or simpler pattern"),
    ]
)


def _problem(detail: str, note: str, rewrite: str) -> str:
    """What is wrong with a pattern RE2 refused saying `detail`, put so that it can be fixed."""
    for reported, told in _UNSUPPORTED:
        if reported.search(detail):
            return told.format(note=note, rewrite=rewrite)
    return f"{detail} {note}; fix the pattern"
