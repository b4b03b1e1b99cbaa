"""The result model's readable side: tool names shown by their titles."""

from __future__ import annotations

from replio_replay.judge.results import FixtureResult


def test_reasons_show_titles_for_whole_tool_names_only() -> None:
    result = FixtureResult(id="fx", names=["math-factorial"], titles={"math-factorial": "math.factorial"},
                           reasons=["1 calls ['math-factorial'], expected 1 ['math-factorial-x'] (strict)",
                                    "call 1: math-factorial's argument 'n' is 6; x.math-factorial stays"])
    assert result.shown("math-factorial") == "math.factorial" and result.shown("grep") == "grep"
    assert result.shown_reasons == ["1 calls ['math.factorial'], expected 1 ['math-factorial-x'] (strict)",
                                    "call 1: math.factorial's argument 'n' is 6; x.math-factorial stays"]
    assert FixtureResult(id="fx", reasons=["r"]).shown_reasons == ["r"]
