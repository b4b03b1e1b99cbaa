"""The helpers the converters share: argument parsing, body previews."""

from __future__ import annotations

import json

import pytest

from replio_replay.providers.wire import parse_arguments, preview, unparsed_arguments


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("  ", {}),
        (None, {}),
        ('{"a": 1', '{"a": 1'),
        ("[1, 2]", "[1, 2]"),
        ("null", "null"),
        ([1, 2], "[1, 2]"),
    ],
)
def test_parse_arguments_keeps_anything_but_an_object_raw(raw, parsed):
    assert parse_arguments(raw) == parsed


def test_unparsed_arguments_sends_raw_json_unchanged_text_as_a_json_string_and_dicts_as_json():
    assert unparsed_arguments("[1, 2]") == "[1, 2]"
    # cut off by the token limit: sent as a JSON string, which a server parsing it accepts
    assert unparsed_arguments('{"a": ') == '"{\\"a\\": "'
    assert json.loads(unparsed_arguments('{"a": ')) == '{"a": '
    assert unparsed_arguments("NaN") == '"NaN"'
    assert unparsed_arguments({"path": "é"}) == '{"path": "é"}'


def test_preview_folds_whitespace_and_cuts():
    assert preview(b"<html>\n  <body>oops</body>\n</html>") == "<html> <body>oops</body> </html>"
    assert preview("x" * 300, 10) == "x" * 10 + "..."
    assert preview(b"") == "(empty body)"
    assert preview({"a": [1, 2]}) == '{"a":[1,2]}'
