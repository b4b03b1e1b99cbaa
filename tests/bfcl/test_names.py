"""BFCL function names as tool names: valid for providers, and read back unchanged."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replio_replay.fixtures.bfcl.names import decode_name, encode_name, name_problem
from replio_replay.tools.schema import name_problem as tool_name_problem

BFCL_NAMES = st.text(alphabet="abcXYZ019_.", min_size=1, max_size=64)


@given(BFCL_NAMES)
def test_every_bfcl_name_round_trips_through_a_valid_tool_name(name: str) -> None:
    assert name_problem(name) is None
    assert tool_name_problem(encode_name(name)) is None
    assert decode_name(encode_name(name)) == name


def test_dots_become_dashes() -> None:
    assert encode_name("math.factorial") == "math-factorial"
    assert decode_name("spotify-play") == "spotify.play"
    assert encode_name("get_weather") == "get_weather"


def test_a_name_the_rule_cannot_undo_is_refused() -> None:
    assert "cannot be a tool name" in (name_problem("get-weather") or "")
    assert name_problem("a" * 65) is not None
