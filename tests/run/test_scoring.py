"""Judging a transcript: the trace carries what each tool answered (capped), goldens do not."""

from __future__ import annotations

from replio_replay.golden.canonical import canonical_result
from replio_replay.providers.base import ToolCall
from replio_replay.run.engine import CallRecord, Transcript
from replio_replay.run.scoring import RESULT_CAP, judge_transcript
from tests.helpers import make_fixture


def _transcript(*results: str) -> Transcript:
    records = [CallRecord(0, ToolCall(f"c{i}", "file_read", {"path": "a"}), r) for i, r in enumerate(results)]
    return Transcript(records=records, answer="done")


def test_each_trace_entry_holds_the_result_the_model_received() -> None:
    result = judge_transcript(make_fixture(), _transcript("     1  hello", "Error: file not found: b"))
    assert [c.result for c in result.trace] == ["     1  hello", "Error: file not found: b"]
    assert result.errors == 1


def test_a_long_result_is_capped_with_a_marker() -> None:
    long = "x" * (RESULT_CAP + 1234)
    (call,) = judge_transcript(make_fixture(), _transcript(long)).trace
    assert call.result is not None
    assert call.result.startswith("x" * RESULT_CAP)
    assert call.result.endswith("[... cut: 1234 more characters not shown]")


def test_goldens_do_not_hold_results() -> None:
    golden = canonical_result(judge_transcript(make_fixture(), _transcript("secret-ish output")))
    assert golden["turns"] == [[{"name": "file_read", "arguments": {"path": "a"}}]]
    assert "secret-ish output" not in str(golden)
