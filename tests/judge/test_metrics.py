"""Metrics: accuracy (null vs []), redundant calls, errors, tokens, and the suite summary."""

from __future__ import annotations

from typing import Any

import pytest

from replio_replay.judge.metrics import accuracy, redundant, summarize
from replio_replay.judge.results import FixtureResult, Status, TraceCall
from replio_replay.providers.base import ToolCall, Usage
from replio_replay.run.engine import CallRecord, Transcript
from replio_replay.run.runner import RunOptions, run_fixture
from replio_replay.run.scoring import judge_transcript
from tests.helpers import call, make_case, make_fixture, mock_provider, turn

# accuracy ------------------------------------------------------------------------------------------


def _calls(*names: str) -> list[TraceCall]:
    return [TraceCall(name=n, arguments={}) for n in names]


def test_accuracy_is_one_only_for_the_exact_sequence() -> None:
    assert accuracy(_calls("glob", "file_read"), ["glob", "file_read"]) == 1.0
    assert accuracy(_calls("file_read", "glob"), ["glob", "file_read"]) == 0.0
    assert accuracy(_calls("glob"), ["glob", "file_read"]) == 0.0
    assert accuracy(_calls("glob", "file_read", "file_read"), ["glob", "file_read"]) == 0.0


def test_accuracy_is_null_without_expected_and_zero_calls_match_an_explicit_empty_list() -> None:
    assert accuracy([], None) is None
    assert accuracy(_calls("grep"), None) is None
    assert accuracy([], []) == 1.0
    assert accuracy(_calls("grep"), []) == 0.0


def test_accuracy_through_a_run_null_vs_explicit_empty() -> None:
    answer_only = mock_provider({"*": [turn(text="I know it already.")]})
    assert run_fixture(make_case(make_fixture()), answer_only, RunOptions()).accuracy is None
    assert run_fixture(make_case(make_fixture(expected=[])), answer_only, RunOptions()).accuracy == 1.0
    one_call = mock_provider({"*": [turn(call("list_dir"))]})
    assert run_fixture(make_case(make_fixture(expected=[])), one_call, RunOptions()).accuracy == 0.0


# redundant -----------------------------------------------------------------------------------------


def test_redundant_counts_repeats_of_name_and_arguments() -> None:
    assert redundant([]) == 0
    assert redundant([("file_read", {"path": "a"})]) == 0
    assert redundant([("file_read", {"path": "a"})] * 3) == 2


def test_redundant_ignores_key_order() -> None:
    calls = [
        ("file_read", {"path": "a", "offset": 1, "limit": 5}),
        ("file_read", {"limit": 5, "path": "a", "offset": 1}),
        ("grep", {"pattern": "x", "path": {"nested": 1, "also": 2}}),
        ("grep", {"path": {"also": 2, "nested": 1}, "pattern": "x"}),
    ]
    assert redundant(calls) == 2


def test_redundant_distinguishes_names_and_values() -> None:
    calls: list[tuple[str, Any]] = [
        ("file_read", {"path": "a"}),
        ("file_read", {"path": "b"}),
        ("file_write", {"path": "a"}),
        ("file_read", {"path": "a", "offset": 1}),
        ("file_read", {"path": "A"}),
    ]
    assert redundant(calls) == 0


def test_redundant_counts_repeated_raw_string_arguments() -> None:
    assert redundant([("grep", "{bad"), ("grep", "{bad"), ("grep", "{worse")]) == 1
    # a raw string is not the same as the object it failed to be
    assert redundant([("grep", '{"pattern":"x"}'), ("grep", {"pattern": "x"})]) == 0


def test_redundant_through_a_run() -> None:
    provider = mock_provider({"*": [
        turn(call("list_dir", path=".", depth=1), call("list_dir", depth=1, path=".")),
        turn(call("list_dir", path=".", depth=2)),
        turn(call("list_dir", path=".", depth=1)),
    ]})
    result = run_fixture(make_case(make_fixture(files={"a.txt": "x"})), provider, RunOptions())
    assert result.calls == 4
    assert result.redundant == 2


# errors --------------------------------------------------------------------------------------------


def _record(result: str, name: str = "file_read") -> CallRecord:
    return CallRecord(0, ToolCall("c", name, {"path": "x"}), result)


def test_errors_count_tool_results_starting_with_error() -> None:
    t = Transcript(records=[
        _record("Error: file not found: x"),
        _record("     1\tline"),
        _record("Error: permission denied: file_write (edit) is not allowed in this run", "file_write"),
        _record("No matches for Error."),
    ])
    result = judge_transcript(make_fixture(), t)
    assert result.errors == 2
    assert result.calls == 4
    assert result.status is Status.OK


def test_errors_add_one_for_an_engine_error() -> None:
    t = Transcript(status=Status.ERROR, error="provider down", records=[_record("Error: nope")])
    result = judge_transcript(make_fixture(), t)
    assert result.errors == 2
    assert result.error == "provider down"
    assert not result.passed


def test_errors_through_a_run_count_denied_and_failed_calls() -> None:
    provider = mock_provider({"*": [turn(
        call("file_read", path="missing.txt"),
        call("file_write", path="a.txt", content="x"),  # edit is denied by default
        call("file_read", path="a.txt"),
    )]})
    result = run_fixture(make_case(make_fixture(files={"a.txt": "hello\n"})), provider, RunOptions())
    assert result.errors == 2
    assert result.status is Status.OK


# tokens --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        (Usage(prompt=10, completion=5, total=100), 100),
        (Usage(prompt=10, completion=5), 15),
        (Usage(prompt=10), 10),
        (Usage(completion=7), 7),
        (Usage(total=0, prompt=10, completion=5), 0),
        (Usage(), 0),
    ],
)
def test_tokens_are_total_else_prompt_plus_completion(usage: Usage, tokens: int) -> None:
    assert usage.tokens == tokens


def test_tokens_through_a_run_add_up_over_turns() -> None:
    provider = mock_provider({"*": [
        turn(call("list_dir"), usage={"prompt": 100, "completion": 20, "total": 125}),
        turn(call("list_dir", depth=2), usage={"prompt": 200, "completion": 30}),
        turn(text="done", usage={"prompt": 300, "completion": 40}),
    ]})
    result = run_fixture(make_case(make_fixture()), provider, RunOptions())
    assert result.tokens == 125 + 230 + 340


# summary -------------------------------------------------------------------------------------------


def _result(fid: str, **kw: Any) -> FixtureResult:
    return FixtureResult(id=fid, **kw)


def test_summary_means_and_totals() -> None:
    results = [
        _result("a", accuracy=1.0, passed=True, calls=2, redundant=1, errors=0, tokens=100),
        _result("b", accuracy=0.0, passed=False, calls=3, redundant=0, errors=2, tokens=50),
        _result("c", accuracy=None, passed=True, calls=1, redundant=0, errors=1, tokens=7),
    ]
    s = summarize(results)
    assert s.fixtures == 3
    assert s.accuracy == 0.5  # over the two fixtures with `expected` only
    assert s.pass_rate == round(2 / 3, 4)
    assert (s.calls, s.redundant, s.errors, s.tokens) == (6, 1, 3, 157)


def test_summary_accuracy_is_null_when_no_fixture_has_expected() -> None:
    s = summarize([_result("a", passed=True), _result("b", passed=False)])
    assert s.accuracy is None
    assert s.pass_rate == 0.5


def test_summary_of_nothing() -> None:
    s = summarize([])
    assert (s.fixtures, s.accuracy, s.pass_rate, s.calls, s.tokens) == (0, None, None, 0, 0)


# unjudged ------------------------------------------------------------------------------------------

_SOURCE = {"file": "traces.jsonl", "trace_id": "4bf92f35", "dialect": "genai-semconv"}


def test_an_imported_fixture_without_a_verifier_is_unjudged_and_left_out_of_the_pass_rate() -> None:
    provider = mock_provider({"*": [turn(text="Done.")]})
    imported = run_fixture(make_case(make_fixture(id="imported", source=_SOURCE)), provider, RunOptions())
    judged = run_fixture(make_case(make_fixture(id="judged", source=_SOURCE, verifier={"answer": "Done."})),
                         provider, RunOptions())
    failing = run_fixture(make_case(make_fixture(id="failing", verifier={"answer": "Other."})), provider, RunOptions())
    assert (imported.unjudged, imported.passed, imported.verdict) == (True, False, "unjudged")
    assert (judged.unjudged, judged.passed, judged.verdict) == (None, True, "pass")
    assert "unjudged" not in judged.model_dump(mode="json", by_alias=True, exclude_none=True)
    summary = summarize([imported, judged, failing])
    assert (summary.fixtures, summary.pass_rate, summary.unjudged) == (3, 0.5, 1)
    assert summarize([imported]).pass_rate is None  # no fixture to measure: not a made-up 0


def test_a_run_that_ended_in_error_is_an_error_not_unjudged() -> None:
    broken = mock_provider({"*": [RuntimeError("boom")]})
    result = run_fixture(make_case(make_fixture(source=_SOURCE)), broken, RunOptions())
    assert (result.status, result.unjudged, result.verdict) == (Status.ERROR, None, "FAIL")


def test_with_trials_unjudged_fixtures_are_left_out_of_pass_hat_k_and_flaky() -> None:
    from replio_replay.judge.metrics import combine_trials

    provider = mock_provider({"*": [turn(text="Done.")]})
    runs = [run_fixture(make_case(make_fixture(id="imported", source=_SOURCE)), provider, RunOptions()),
            run_fixture(make_case(make_fixture(id="judged", verifier={"answer": "Done."})), provider, RunOptions())]
    trials = [r.model_copy(update={"trial": t}) for r in runs for t in (1, 2)]
    summary = summarize(combine_trials(trials))
    assert (summary.trials, summary.pass_hat_k, summary.flaky, summary.unjudged) == (2, {"1": 1.0, "2": 1.0}, [], 1)
    alone = summarize(combine_trials([r.model_copy(update={"trial": t}) for r in runs[:1] for t in (1, 2)]))
    assert (alone.trials, alone.pass_hat_k, alone.pass_rate) == (2, None, None)
