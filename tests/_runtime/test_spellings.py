"""A secret's spellings: base64 cores that hold wherever the secret sits, and parts spelled as the whole."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from replio_replay._runtime.spellings import SPELLINGS, base64_core, base64_token, readings

FAST = settings(max_examples=80, deadline=None, database=None)


@FAST
@given(before=st.binary(max_size=7), data=st.binary(min_size=1, max_size=40), after=st.binary(max_size=7))
def test_a_core_is_in_the_base64_of_any_data_around_the_secret(before: bytes, data: bytes, after: bytes) -> None:
    whole = before + data + after
    core = base64_core(data, len(before))
    assert core in base64.b64encode(whole).decode()
    assert base64_core(data, len(before), url_safe=True) in base64.urlsafe_b64encode(whole).decode()
    # only the characters the data's bits alone decide: 8 bits a byte, 6 a character, at most 2 lost at each edge
    assert len(core) >= (8 * len(data)) // 6 - 2


def test_the_cores_of_the_three_offsets_drop_the_characters_that_mix_in_neighbours() -> None:
    data = b"sk-live-12345678"  # 128 bits
    assert base64.b64encode(data) == b"c2stbGl2ZS0xMjM0NTY3OA=="  # the last 'A': 2 bits of data, 4 of padding
    assert base64.b64encode(b"\0" + data) == b"AHNrLWxpdmUtMTIzNDU2Nzg="  # 'H': 2 bits of the byte before; 'g' 2 of padding
    assert base64.b64encode(b"\0\0" + data) == b"AABzay1saXZlLTEyMzQ1Njc4"  # 'B': 4 bits of the bytes before
    cores = [base64_core(data, at) for at in range(3)]
    assert cores == ["c2stbGl2ZS0xMjM0NTY3O", "NrLWxpdmUtMTIzNDU2Nz", "zay1saXZlLTEyMzQ1Njc4"]
    assert [base64_core(data, at) for at in (3, 4, 5)] == cores


@FAST
@given(secret=st.text(min_size=17, max_size=40), cut=st.integers(min_value=1, max_value=16))
def test_a_start_or_end_is_spelled_as_the_start_or_end_of_the_whole(secret: str, cut: int) -> None:
    for spelling in SPELLINGS:
        whole = spelling.write(secret, 0)
        tail_at = len(secret[:-cut].encode())
        assert whole.startswith(spelling.write(secret[:cut], 0)), spelling.name
        assert whole.endswith(spelling.write(secret[-cut:], tail_at)), spelling.name


def test_a_base64_token_is_widened_over_both_alphabets_escapes_and_padding() -> None:
    text = 'x "ab+c/d%2Fe\\/f-g_CORE-h%2bi==" y'
    start = text.index("CORE")
    assert text[slice(*base64_token(text, start, start + 4))] == 'ab+c/d%2Fe\\/f-g_CORE-h%2bi=='


def test_bytes_are_read_in_every_encoding_json_may_use_from_every_alignment() -> None:
    for codec in ("utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        for junk in (b"", b"\x00", b"\x01\x02", b"\x03\x04\x05"):
            data = junk + '{"k": "sk-é-01234567"}'.encode(codec)
            assert any("sk-é-01234567" in text for text in readings(data)), (codec, junk)
