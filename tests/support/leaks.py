"""Where a secret shows in text or bytes, in any encoding: found by decoding, not by encoding.

Independent of the redactor on purpose: instead of spelling the secret the ways the redactor
does, this decodes everything in the output that could be an encoding (URL escapes, JSON escapes,
and escapes within those, a few layers deep;
every base64 or hex run from each offset, bytes in UTF-8/16/32 from each alignment) with the
standard library and looks for the secret's bytes in what comes out.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote, unquote_plus

#: A secret's start or end this long counts as the secret (the redactor's MIN_FRAGMENT).
FRAGMENT = 16

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{16,}")
_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/]))')
#: Escapes within escapes (a JSON string quoting a URL-encoded one, say) are decoded this many layers deep.
_LAYERS = 3
_WIDE = (("utf-16-le", 2), ("utf-16-be", 2), ("utf-32-le", 4), ("utf-32-be", 4))


def leaks(output: str | bytes, secret: str, fragments: bool = True) -> list[str]:
    """How `output` holds `secret` (or, with `fragments`, its first or last `FRAGMENT`
    characters), one line per way found; empty when it does not."""
    needles = {secret}
    if fragments and len(secret) > FRAGMENT:
        needles |= {secret[:FRAGMENT], secret[-FRAGMENT:]}
    data = output if isinstance(output, bytes) else output.encode("utf-8", "surrogatepass")
    found = []
    for reading, text in _readings(data):
        for how, decoded in _decodings(text):
            found += [f"{needle!r} {how} in {reading}" for needle in needles if needle.encode() in decoded]
    return sorted(set(found))


def _readings(data: bytes) -> list[tuple[str, str]]:
    texts = [("UTF-8", data.decode("utf-8", "replace"))]
    texts += [(f"{codec} from byte {at}", data[at:].decode(codec, "replace")) for codec, width in _WIDE
              for at in range(width)]
    return texts


def _unescaped(text: str) -> list[tuple[str, str]]:
    """`text`, and what its URL and JSON escapes decode to, each decoded again up to `_LAYERS` deep
    (percent escapes in any case; JSON's ``\\uXXXX`` in any case, ``\\\\`` and ``\\"`` too)."""
    seen = {text: "as it is"}
    layer = [("as it is", text)]
    for _ in range(_LAYERS):
        decoded = [(f"{how}, {name}" if how != "as it is" else name, decode(plain))
                   for how, plain in layer for name, decode in _DECODERS]
        layer = [(how, plain) for how, plain in decoded if plain not in seen]
        seen.update({plain: how for how, plain in layer})
    return [(how, plain) for plain, how in seen.items()]


def _json_unescape(text: str) -> str:
    return _JSON_ESCAPE.sub(lambda m: m.group(2) or chr(int(m.group(1), 16)), text)


_DECODERS = (("URL-decoded", unquote), ("form-decoded", unquote_plus), ("JSON-unescaped", _json_unescape))


def _decodings(text: str) -> list[tuple[str, bytes]]:
    """`text`, and what its escapes, base64 runs and hex runs decode to."""
    unescaped = _unescaped(text)
    out = []
    for how, plain in unescaped:
        out.append((how, plain.encode("utf-8", "replace")))
        out += [(f"{how}, base64", raw) for run in _BASE64_RUN.findall(plain) for raw in _base64(run)]
        out += [(f"{how}, hex", raw) for run in _HEX_RUN.findall(plain) for raw in _hex(run)]
    return out


def _base64(run: str) -> list[bytes]:
    run = run.replace("-", "+").replace("_", "/")
    decoded = []
    for at in range(4):  # the run may start inside a group (text just before it that looked like base64)
        chunk = run[at:]
        chunk = chunk[: len(chunk) - len(chunk) % 4]
        decoded.append(base64.b64decode(chunk))
    return decoded


def _hex(run: str) -> list[bytes]:
    return [binascii.unhexlify(run[at:][: (len(run) - at) // 2 * 2]) for at in range(2)]
