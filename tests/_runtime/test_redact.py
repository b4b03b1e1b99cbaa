"""The redactor: every spelling of a secret (URL-encoded, JSON-escaped, base64 from any offset, hex,
UTF-16/32) redacted; the cut redacts first, never splits, and masks a secret's start at the cut."""

from __future__ import annotations

import base64
import binascii
import json
import random
import re
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replio_replay._runtime.redact import REDACTED, Redactor, shown_url, url_secrets
from tests.support.leaks import leaks

KEY = "sk-cut-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def test_a_key_across_the_cut_is_redacted_whole() -> None:
    assert Redactor((KEY,)).cut("x" * 40 + KEY + " tail", 80) == "x" * 40 + REDACTED + " tail"


def test_the_cut_never_splits_the_mark() -> None:
    assert Redactor((KEY,)).cut("x" * 75 + KEY + "y" * 20, 80) == "x" * 75 + REDACTED + "..."


def test_a_start_of_a_key_where_the_text_is_cut_is_a_secret() -> None:
    # the text itself was cut before (the key's end is not in it): its end is a cut point too
    cut = Redactor((KEY,)).cut("x" * 76 + KEY[:12], 80, more=" ({left} more)")
    assert cut == "x" * 76 + REDACTED + " (8 more)"
    assert Redactor((KEY,)).cut("x" * 77 + "sk-" + "y" * 10, 80) == "x" * 77 + "sk-..."  # 3 characters say nothing


def test_the_cut_counts_what_it_left_out_of_the_redacted_text() -> None:
    assert Redactor((KEY,)).cut(KEY + "z" * 20, 15, more="[{left} more]") == REDACTED + "zzzzz[15 more]"


def test_a_key_in_a_url_query_is_a_secret_and_never_shown() -> None:
    url = "http://user:pw-1234567890@127.0.0.1:1/v1?api_key=query-key-123&model=m"
    assert url_secrets(url) == ["pw-1234567890", "query-key-123"]
    assert shown_url(url) == "http://127.0.0.1:1/v1?api_key=%5BREDACTED%5D&model=m"


def test_the_credential_of_an_auth_header_value_is_a_secret_of_its_own() -> None:
    env = {"DOCS_AUTH": "Bearer token-0123456789", "BASIC_TOKEN": "Basic dXNlcjpwYXNzLTAxMjM0NTY3", "NAMED": "x"}
    redactor = Redactor.from_environment(env, names=["DOCS_AUTH"])
    assert redactor.text("echo token-0123456789, pass-01234567") == f"echo {REDACTED}, {REDACTED}"


def test_a_long_start_or_end_of_a_key_is_redacted_anywhere() -> None:
    redactor = Redactor((KEY,))
    shortened = f"input_value='{KEY[:24]}...{KEY[-24:]}'"  # as pydantic shows a long value
    assert redactor.text(shortened) == f"input_value='{REDACTED}...{REDACTED}'"
    assert redactor.text(f"{KEY[:40]}\n(output cut at 40 characters)") == f"{REDACTED}\n(output cut at 40 characters)"
    assert redactor.text(KEY[:15] + " " + KEY[-15:]) == KEY[:15] + " " + KEY[-15:]  # too short to say
    assert redactor.found(KEY[10:30]) is False and redactor.found("x" + KEY[:16]) is True


def test_overlapping_secrets_are_redacted_together() -> None:
    # matched one after the other, the first would have left the second's end in the text
    assert Redactor(("abcdefgh12", "12345678xy")).text("<abcdefgh12345678xy>") == f"<{REDACTED}>"


def test_a_key_echoed_url_encoded_or_json_escaped_is_redacted_and_found() -> None:
    key = "sk-Ab+cd/EFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ/k+"  # the special characters near both ends
    redactor = Redactor((key,))
    for echoed in ["sk-Ab%2Bcd%2FEFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ%2Fk%2B",  # a query, a form body
                   "sk-Ab%2bcd%2fEFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ%2fk%2b",  # lower-case hex digits
                   "sk-Ab+cd\\/EFghijklmnopQRSTuvwxyz0123456789ABCDEFGHIJ\\/k+"]:  # JSON with '/' escaped
        assert redactor.text(f"bad key={echoed}; retry") == f"bad key={REDACTED}; retry"
        assert redactor.found(echoed)


def _every_byte_percent(text: str, case: str) -> str:
    escapes = [f"%{b:02X}" for b in text.encode()]
    if case == "lower":
        escapes = [e.lower() for e in escapes]
    elif case == "mixed":
        escapes = [e.lower() if i % 3 == 1 else e for i, e in enumerate(escapes)]
    return "".join(escapes)


def _every_char_u_escaped(text: str, case: str) -> str:
    """Each UTF-16 code unit of `text` as a JSON escape, its hex digits in `case`."""
    units = [int.from_bytes(text.encode("utf-16-be")[i:i + 2], "big") for i in range(0, len(text.encode("utf-16-be")), 2)]
    escapes = [f"\\u{u:04x}" for u in units]
    if case == "upper":
        escapes = [e.upper().replace("\\U", "\\u") for e in escapes]
    elif case == "mixed":
        escapes = [e.upper().replace("\\U", "\\u") if i % 2 else e for i, e in enumerate(escapes)]
    return "".join(escapes)


@pytest.mark.parametrize("case", ["upper", "lower", "mixed"])
@pytest.mark.parametrize("key", [KEY, "pässwörd-ünïcode-€-𝄞-geheim"])
def test_a_key_with_every_character_escaped_is_redacted_and_found(key: str, case: str) -> None:
    redactor = Redactor((key,))
    for form in [_every_byte_percent(key, case), _every_char_u_escaped(key, case),
                 json.dumps(_every_char_u_escaped(key, case))[1:-1]]:  # that, quoted in JSON once more
        echoed = f"echo: {form} ."
        assert leaks(echoed, key), form  # the form holds the key: the detector sees it
        redacted = redactor.text(echoed)
        assert not leaks(redacted, key) and REDACTED in redacted, (form, redacted)
        assert redactor.found(form) and redactor.found(form.encode("utf-16-le")), form
    assert not leaks(redactor.text(_every_byte_percent(key[:20], case)), key)  # its start alone is redacted too


# Every encoding × every offset: the forms are made here with the standard library, and what is
# left after redaction is searched by decoding (tests/support/leaks.py), not by the redactor's spellings.

B64_KEY = "sk-b64-AbCdEfGhIjKlMnOpQrStUvWxYz0123+/?~>"  # bytes that encode to '+' and '/' at some offsets


def _base64_forms(data: bytes) -> dict[str, str]:
    std, url = base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()
    return {"base64": std, "URL-safe base64": url, "base64, URL-encoded": quote(std, safe=""),
            "base64, in JSON with \\/": json.dumps(std).replace("/", "\\/")[1:-1],
            "base64 without padding": std.rstrip("=")}


@pytest.mark.parametrize("offset", range(6))  # each of the three alignments, twice
def test_a_key_in_base64_from_any_offset_is_redacted_with_its_whole_token(offset: int) -> None:
    redactor = Redactor((B64_KEY,))
    data = bytes(range(200, 200 + offset)) + f"key={B64_KEY};".encode() + b"\xfe" * (offset % 4)
    for name, form in _base64_forms(data).items():
        redacted = redactor.text(f'{{"blob": "{form}", "n": 1}}')
        assert redacted == f'{{"blob": "{REDACTED}", "n": 1}}', name
        assert redactor.found(form), name


@pytest.mark.parametrize("offset", range(3))
def test_a_key_in_hex_or_escaped_is_redacted(offset: int) -> None:
    redactor = Redactor((B64_KEY,))
    data = b"\x01" * offset + B64_KEY.encode()
    forms = [binascii.hexlify(data).decode(), binascii.hexlify(data).decode().upper(),
             quote(B64_KEY, safe=""), quote_plus(B64_KEY), re.sub("%..", lambda m: m.group().lower(), quote(B64_KEY, safe="")),
             json.dumps(B64_KEY)[1:-1].replace("/", "\\/"), json.dumps(B64_KEY, ensure_ascii=True)]
    for form in forms:
        redacted = redactor.text(f"echo: {form} .")
        assert REDACTED in redacted and not leaks(redacted, B64_KEY), (form, redacted)


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                                   "utf-32-be"])
def test_a_key_in_a_json_body_in_any_rfc_8259_encoding_is_found_in_its_bytes(codec: str) -> None:
    redactor = Redactor((KEY,))
    body = json.dumps({"error": {"message": f"bad key {KEY}"}}).encode(codec)
    assert json.loads(body)["error"]["message"].endswith(KEY)  # what a replay would read and show
    for junk in (b"", b"\x00", b"\x00\x01\x02"):  # the body inside other bytes, at every alignment
        assert redactor.found(junk + body), (codec, junk)
    assert not Redactor(("sk-something-else-entirely",)).found(body)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_a_wide_body_read_as_text_has_its_key_redacted(codec: str) -> None:
    # a body quoted as if it were UTF-8 (an error's preview): the key's characters between NUL bytes
    shown = f"bad key {KEY}!".encode(codec).decode("utf-8", "replace")
    redacted = Redactor((KEY,)).text(f"the server said: {shown}")
    assert REDACTED in redacted and not leaks(redacted, KEY), redacted


@pytest.mark.parametrize("offset", range(3))
def test_a_long_start_or_end_of_a_key_is_redacted_in_base64_and_hex_but_no_shorter_one(offset: int) -> None:
    redactor = Redactor((KEY,))
    pad = b"." * offset
    for part in (KEY[:16], KEY[-16:]):  # MIN_FRAGMENT characters: redacted in every spelling
        for form in (base64.b64encode(pad + part.encode()).decode(), (pad + part.encode()).hex()):
            redacted = redactor.text(f"[{form}]")
            assert REDACTED in redacted and not leaks(redacted, KEY), (part, form)
    for part in (KEY[:15], KEY[-15:], "sk-ant-api03-" + "Q" * 20):  # too short to say, or a public prefix only
        for form in (base64.b64encode(pad + part.encode()).decode(), (pad + part.encode()).hex().upper()):
            assert redactor.text(f"[{form}]") == f"[{form}]"
            assert not redactor.found(form)


def test_a_base64_token_cut_after_the_start_of_a_key_is_masked_from_the_token_start() -> None:
    # the text itself was cut before: 8 characters of the key are in it, too few to be found anywhere
    start = base64.b64encode(b"prefix:" + KEY.encode()).decode()[:20]
    assert base64.b64decode(start) == b"prefix:" + KEY[:8].encode()
    assert Redactor((KEY,)).text(f"see {start} then") == f"see {start} then"
    assert Redactor((KEY,)).cut(f"see {start} then more", 24) == f"see {REDACTED}..."
    three = base64.b64encode(b"prefix:sk-").decode()[:15]  # 3 characters of the key say nothing
    assert Redactor((KEY,)).cut(f"see {three} then more", 19) == f"see {three}..."


@settings(max_examples=40, deadline=None, database=None)
@given(secret=st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=8, max_size=40),
       before=st.binary(max_size=5), after=st.binary(max_size=5), alphabet=st.sampled_from(["std", "url", "hex"]))
def test_no_encoding_of_any_key_at_any_offset_survives_redaction(secret: str, before: bytes, after: bytes,
                                                                 alphabet: str) -> None:
    data = before + secret.encode() + after
    form = {"std": base64.b64encode, "url": base64.urlsafe_b64encode, "hex": binascii.hexlify}[alphabet](data)
    redacted = Redactor((secret,)).text(f"<{form.decode()}>")
    assert not leaks(redacted, secret), redacted


def test_text_with_no_secret_is_left_alone_whatever_its_encoding() -> None:
    redactor = Redactor((KEY, B64_KEY))
    rng = random.Random(40)
    for _ in range(200):
        data = rng.randbytes(rng.randrange(1, 300))
        for form in (base64.b64encode(data), base64.urlsafe_b64encode(data), binascii.hexlify(data)):
            assert redactor.text(form.decode()) == form.decode()
        assert not redactor.found(data)


def test_a_key_of_characters_from_u0100_up_is_found_in_utf16_bytes_without_a_zero_byte() -> None:
    password = "密碼與鑰匙不可外洩"  # its UTF-16 has no zero byte, so the bytes hold none
    body = json.dumps({"echo": password}, ensure_ascii=False).encode("utf-16-le")[2:]  # '{' and its zero byte cut
    assert b"\x00" in body and b"\x00" not in password.encode("utf-16-le")
    assert Redactor((password,)).found(password.encode("utf-16-le"))
    assert Redactor((password,)).found(body)
    assert not Redactor((KEY,)).found(password.encode("utf-16-be"))


@pytest.mark.parametrize("case", ["upper", "lower", "mixed"])
def test_a_cut_after_the_start_of_a_key_with_every_byte_percent_encoded_is_masked(case: str) -> None:
    start = _every_byte_percent(KEY[:6], case)  # too short to be redacted anywhere, but where the text is cut
    assert Redactor((KEY,)).text(f"see {start} then") == f"see {start} then"
    assert Redactor((KEY,)).cut(f"see {start} then more", 4 + len(start)) == f"see {REDACTED}..."
