"""The helpers the converters share: argument parsing, body previews."""

from __future__ import annotations

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


def test_unparsed_arguments_sends_a_raw_string_unchanged_and_dicts_as_json():
    assert unparsed_arguments('{"a": ') == '{"a": '
    assert unparsed_arguments({"path": "é"}) == '{"path": "é"}'


def test_preview_folds_whitespace_and_cuts():
    assert preview(b"<html>\n  <body>oops</body>\n</html>") == "<html> <body>oops</body> </html>"
    assert preview("x" * 300, 10) == "x" * 10 + "..."
    assert preview(b"") == "(empty body)"
    assert preview({"a": [1, 2]}) == '{"a":[1,2]}'
