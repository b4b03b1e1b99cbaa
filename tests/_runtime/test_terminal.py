"""Text made safe for a terminal: controls shown as escapes, tabs, newlines and other text kept."""

from __future__ import annotations

from replio_replay._runtime.terminal import printable


def test_controls_are_written_as_escapes_and_the_rest_is_kept() -> None:
    assert printable("a\x1b]0;t\x07b\rc\x9b2J\x7f\u2028") == "a\\x1b]0;t\\x07b\\rc\\x9b2J\\x7f\\u2028"
    assert printable("τ² task\tone\ntwo") == "τ² task\tone\ntwo"
