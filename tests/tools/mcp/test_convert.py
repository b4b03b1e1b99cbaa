"""A `tools/call` result as the text the model receives, for each kind of content."""

from __future__ import annotations

import base64

import pytest

from replio_replay.tools.mcp.convert import result_text


def test_text_blocks_are_joined() -> None:
    result = {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    assert result_text(result) == "one\ntwo"


def test_structured_content_alone_is_canonical_json() -> None:
    result = {"content": [], "structuredContent": {"b": 2, "a": [1, "é"]}}
    assert result_text(result) == '{"a":[1,"é"],"b":2}'


def test_text_wins_over_the_structured_copy_of_it() -> None:
    result = {"content": [{"type": "text", "text": "sum is 3"}], "structuredContent": {"sum": 3}}
    assert result_text(result) == "sum is 3"


@pytest.mark.parametrize("kind", ["image", "audio"])
def test_media_is_summarised_with_type_and_decoded_size(kind: str) -> None:
    data = base64.b64encode(b"\x00" * 2341).decode()
    result = {"content": [{"type": kind, "data": data, "mimeType": f"{kind}/x-test"}]}
    assert result_text(result) == f"[{kind} {kind}/x-test, 2,341 bytes]"


def test_embedded_resources_are_summarised_not_pasted() -> None:
    text = {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "héllo"}}
    blob = {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": base64.b64encode(b"1234").decode()}}
    link = {"type": "resource_link", "uri": "file:///c", "name": "c"}
    assert result_text({"content": [text, blob, link]}) == (
        "[resource file:///a.txt text/plain, 6 bytes]\n[resource file:///b.bin, 4 bytes]\n[resource link file:///c (c)]"
    )


def test_an_error_result_starts_with_error() -> None:
    assert result_text({"content": [{"type": "text", "text": "no such repo"}], "isError": True}) == "Error: no such repo"
    assert result_text({"content": [], "isError": True}) == "Error: the tool failed and said nothing"


@pytest.mark.parametrize("odd", [None, [], "text", {"content": "not a list"}, {"content": [1, {"type": "x"}]}])
def test_odd_shapes_never_raise(odd: object) -> None:
    assert isinstance(result_text(odd), str)
