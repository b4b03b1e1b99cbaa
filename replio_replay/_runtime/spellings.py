"""The spellings of a secret: every way text may hold it, and the texts bytes may hold.

A secret reaches an output as itself, or as a server, a tool or a model wrote it out:

- its UTF-8 bytes as base64, standard or URL-safe, or as hex, lower or upper case;
- its UTF-16 or UTF-32 bytes (either byte order) read one character per byte, as a UTF-16 body
  quoted as if it were UTF-8 shows it (``s\\x00k\\x00``);
- every byte of it percent-encoded, or every character JSON-escaped as ``\\uXXXX`` (as some
  encoders write any text), the hex digits of each escape in either case;
- each of those, and the secret itself, URL-encoded (a query, a form body; percent escapes in
  either case) or JSON-escaped (``\\/`` too).

The hex digits of escapes may be in any case, each escape its own (``%73%6b%2D``): `escapes_upper`
writes every escape of a text in upper case without moving a character, so text is searched as it
is and so, and a match in either is a match at the same place.

Base64 of a secret inside longer data depends on where the secret starts: at one of three offsets
within base64's groups of 3 bytes, and the characters at its edges mix in its neighbours' bits.
So each offset has its *core* (`base64_core`): the characters that the secret's bits alone decide,
the same wherever in the data the secret is. A match of a core stands for the whole base64 token
around it (`base64_token`).

A spelling writes any part of a secret given the part's byte offset in it (`Spelling.write`), so a
start or an end of a secret is spelled as the whole is, and is a start or an end of the whole's
spelling: the redactor's rule for starts and ends holds in every spelling.

Bytes (a cassette's body that is not UTF-8) are searched through their `readings`: decoded as
UTF-8 and as each other encoding JSON may use (RFC 8259 §8.1: UTF-16 and UTF-32, either byte order,
with or without a byte order mark) at every alignment, so a secret in any of those encodings is
text in one reading, where every spelling is looked for.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

__all__ = ["SPELLINGS", "Spelling", "base64_core", "base64_token", "escapes_upper", "readings"]

#: Write a part of a secret, given the offset of the part's UTF-8 bytes in the secret's.
Write = Callable[[str, int], str]

#: The encodings JSON may use besides UTF-8 (RFC 8259 §8.1), each with its code unit's size.
_WIDE = (("utf-16-le", 2), ("utf-16-be", 2), ("utf-32-le", 4), ("utf-32-be", 4))
#: A percent escape or a JSON ``\\u`` escape, its hex digits in any case.
_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}")
_URL_SAFE = str.maketrans("+/", "-_")
#: The rest of a base64 token (either alphabet; '+' and '/' URL-encoded or '/' JSON-escaped too)
#: from where a match ends: its characters, then its padding.
_BASE64_AFTER = re.compile(r"(?:%2[BbFf]|\\/|[A-Za-z0-9+/_-])*(?:=|%3[Dd]){0,2}")
#: The same characters read backwards from where a match starts (the text before it reversed).
_BASE64_BEFORE = re.compile(r"(?:[BbFf]2%|/\\|[A-Za-z0-9+/_-])*")


@dataclass(frozen=True)
class Spelling:
    """One way a secret is written out. `base64`: a match stands for the whole base64 token around it."""

    name: str
    write: Write
    base64: bool = False


def base64_core(data: bytes, offset: int, *, url_safe: bool = False) -> str:
    """The base64 characters that `data` alone decides wherever it sits, `offset` bytes into
    what is encoded: bits of its neighbours (the other bytes of its first and last groups)
    are in none of them."""
    shift = offset % 3
    encoded = base64.b64encode(bytes(shift) + data + bytes(2)).decode("ascii")
    first, last = -(-8 * shift // 6), 8 * (shift + len(data)) // 6  # the characters within data's bits
    core = encoded[first:last]
    return core.translate(_URL_SAFE) if url_safe else core


def base64_token(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole base64 token of `text` around the match from `start` to `end`, padding included."""
    before, after = _BASE64_BEFORE.match(text[:start][::-1]), _BASE64_AFTER.match(text, end)
    assert before is not None and after is not None  # both match the empty string
    return start - before.end(), after.end()


def _base64(shift: int, url_safe: bool) -> Write:
    return lambda part, at: base64_core(part.encode("utf-8"), shift + at, url_safe=url_safe)


def _wide(codec: str) -> Write:
    return lambda part, at: part.encode(codec).decode("latin-1")


def _json(part: str) -> str:
    return json.dumps(part)[1:-1]


def _every_byte_percent(part: str, at: int) -> str:
    return "".join(f"%{byte:02X}" for byte in part.encode("utf-8"))


def _every_unit_escaped(part: str, at: int) -> str:
    units = part.encode("utf-16-be")
    return "".join(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


def escapes_upper(text: str) -> str:
    """`text` with the hex digits of every percent and ``\\u`` escape in upper case (the same length)."""
    if "%" not in text and "\\u" not in text:
        return text
    return _ESCAPE.sub(lambda m: m.group()[0] + m.group()[1:].upper().replace("U", "u", 1), text)


#: How a secret's characters or bytes are written: each also under each of `_ESCAPES`.
_REPRESENTATIONS = [
    Spelling("itself", lambda part, at: part),
    Spelling("hex", lambda part, at: part.encode("utf-8").hex()),
    Spelling("HEX", lambda part, at: part.encode("utf-8").hex().upper()),
    Spelling("every byte percent-encoded", _every_byte_percent),
    Spelling("every character \\u-escaped", _every_unit_escaped),
    *(Spelling(f"{'URL-safe ' if url_safe else ''}base64 at offset {shift}", _base64(shift, url_safe), base64=True)
      for url_safe in (False, True) for shift in range(3)),
]

_ESCAPES: list[tuple[str, Callable[[str], str]]] = [
    # In upper case only: text is also searched with its escapes in upper case (`escapes_upper`).
    ("URL-encoded", lambda text: quote(text, safe="")),
    ("form-encoded", quote_plus),
    ("JSON-escaped", _json),
    ("JSON-escaped with \\/", lambda text: _json(text).replace("/", "\\/")),
]


def _escaped(spelling: Spelling, name: str, escape: Callable[[str], str]) -> Spelling:
    return Spelling(f"{spelling.name}, {name}", lambda part, at: escape(spelling.write(part, at)), spelling.base64)


#: Every spelling (equal texts are one form to the redactor): each representation as it is and
#: under each escape, and the secret in each wide encoding read bytewise.
SPELLINGS = (
    *_REPRESENTATIONS,
    *(_escaped(r, name, escape) for r in _REPRESENTATIONS for name, escape in _ESCAPES),
    *(Spelling(f"{codec} read bytewise", _wide(codec)) for codec, _ in _WIDE),
)


def readings(data: bytes, *, wide_only: bool = False) -> Iterator[str]:
    """`data` as UTF-8, then as UTF-16 and UTF-32 in both byte orders from each alignment: text
    in any encoding JSON may use, wherever it starts, is whole in one of them.

    Without a zero byte in `data` the other readings hold no character below U+0100 (each UTF-16
    code unit read has two bytes that are not zero, and every UTF-32 one has a zero byte), so
    they are left out unless `wide_only`: something looked for is made of such characters only.
    """
    yield data.decode("utf-8", "replace")
    if b"\x00" not in data and not wide_only:
        return
    for codec, width in _WIDE:
        for at in range(width):
            yield data[at:].decode(codec, "replace")
