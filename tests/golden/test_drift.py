"""Drift, pure: each kind of behavioural change gives the expected path and kind."""

from __future__ import annotations

import pytest

from replio_replay._runtime.diffing import Change
from replio_replay.golden.canonical import canonical_result
from replio_replay.golden.drift import drift, tolerated
from replio_replay.judge.results import FixtureResult, Status, TraceCall


def result(calls: list[tuple[str, dict, int]], answer: str = "done", status: Status = Status.OK) -> FixtureResult:
    return FixtureResult(
        id="fx", trace=[TraceCall(name=n, arguments=a) for n, a, _ in calls], names=[n for n, _, _ in calls],
        calls=len(calls), turns=[t for *_, t in calls], answer=answer, status=status, passed=True,
    )


BASE = [("glob", {"pattern": "*.py"}, 0), ("file_read", {"path": "a.py"}, 1)]


def kinds(old: FixtureResult, new: FixtureResult) -> list[tuple[str, str]]:
    return [(c.path, c.kind) for c in drift(canonical_result(old), canonical_result(new))]


def test_same_behaviour_has_no_drift() -> None:
    assert kinds(result(BASE), result(BASE)) == []


def test_calls_are_grouped_by_turn() -> None:
    parallel = canonical_result(result([("glob", {}, 0), ("grep", {}, 0)]))
    sequential = canonical_result(result([("glob", {}, 0), ("grep", {}, 1)]))
    assert [len(t) for t in parallel["turns"]] == [2]
    assert [len(t) for t in sequential["turns"]] == [1, 1]
    assert drift(parallel, sequential)


def test_changed_argument() -> None:
    new = [BASE[0], ("file_read", {"path": "b.py"}, 1)]
    changes = drift(canonical_result(result(BASE)), canonical_result(result(new)))
    assert [(c.path, c.kind, c.old, c.new) for c in changes] == [
        ("turns[1][0].arguments.path", "argument_changed", "a.py", "b.py"),
    ]


def test_added_call() -> None:
    new = [*BASE, ("file_read", {"path": "b.py"}, 2)]
    found = kinds(result(BASE), result(new))
    assert ("turns[2]", "turn_added") in found
    added_in_turn = [BASE[0], ("file_read", {"path": "a.py"}, 1), ("grep", {"pattern": "x"}, 1)]
    assert ("turns[1][1]", "call_added") in kinds(result(BASE), result(added_in_turn))


def test_removed_call() -> None:
    assert ("turns[1]", "turn_removed") in kinds(result(BASE), result(BASE[:1]))
    two = [("glob", {}, 0), ("grep", {}, 0)]
    assert ("turns[0][1]", "call_removed") in kinds(result(two), result(two[:1]))


def test_inserted_call_is_aligned_not_cascaded() -> None:
    new = [BASE[0], ("grep", {"pattern": "x"}, 1), ("file_read", {"path": "a.py"}, 2)]
    assert kinds(result(BASE), result(new)) == [("turns[1]", "turn_added")] or \
        ("turns[1]", "turn_added") in kinds(result(BASE), result(new))
    assert not any(kind == "tool_changed" for _, kind in kinds(result(BASE), result(new)))


def test_tool_name_changed() -> None:
    new = [("list_dir", {"pattern": "*.py"}, 0), BASE[1]]
    assert kinds(result(BASE), result(new)) == [("turns[0][0].name", "tool_changed")]


def test_answer_status_and_metrics() -> None:
    assert kinds(result(BASE), result(BASE, answer="other")) == [("answer", "answer_changed")]
    found = kinds(result(BASE), result(BASE, status=Status.TRUNCATED))
    assert ("status", "status_changed") in found
    more_tokens = result(BASE).model_copy(update={"tokens": 99})
    assert kinds(result(BASE), more_tokens) == [("metrics.tokens", "metric_changed")]


def test_golden_leaves_out_volatile_fields() -> None:
    timed = result(BASE).model_copy(update={"timing": {"seconds": 1.5}, "request_drift": []})
    golden = canonical_result(timed)
    assert set(golden) == {"id", "status", "pass", "turns", "answer", "metrics"}
    assert drift(canonical_result(result(BASE)), golden) == []


def test_a_repeated_identical_call_or_turn_is_named() -> None:
    call = {"name": "file_read", "arguments": {"path": "a"}}
    golden = {"id": "x", "status": "ok", "pass": True, "answer": "a", "metrics": {"calls": 1}, "turns": [[call]]}
    twice_in_turn = {**golden, "metrics": {"calls": 2}, "turns": [[call, call]]}
    assert [(c.path, c.kind) for c in drift(golden, twice_in_turn)] == [
        ("metrics.calls", "metric_changed"), ("turns[0][1]", "call_added")]
    twice = {**golden, "metrics": {"calls": 2}, "turns": [[call], [call]]}
    assert [(c.path, c.kind) for c in drift(golden, twice)] == [
        ("metrics.calls", "metric_changed"), ("turns[1]", "turn_added")]
    assert [(c.path, c.kind) for c in drift(twice, golden)] == [
        ("metrics.calls", "metric_changed"), ("turns[1]", "turn_removed")]


@pytest.mark.parametrize(("tolerance", "new", "fails"), [
    (None, 10_000, False),  # no tolerance: token counts never drift by themselves
    (0.2, 120, False), (0.2, 80, False), (0.2, 121, True), (0.0, 101, True),
])
def test_token_counts_drift_only_past_the_tolerance(tolerance: float | None, new: int, fails: bool) -> None:
    tokens = Change("metrics.tokens", "metric_changed", 100, new)
    answer = Change("answer", "answer_changed", "a", "b")
    failing, info = tolerated([tokens, answer], tolerance)
    assert failing == ([tokens, answer] if fails else [answer])
    assert info == ([] if fails else [tokens])
