"""Trajectory match modes on hand-made traces, with agentevals' edge cases: duplicates, extras, arguments."""

from __future__ import annotations

from typing import Any

import pytest

from replio_replay.fixtures.matchers import parse_matcher
from replio_replay.fixtures.model import ExpectedCall
from replio_replay.fixtures.trajectory import MatchMode, in_order, trajectory_matches
from replio_replay.judge.results import TraceCall

STRICT, UNORDERED, SUBSET, SUPERSET = MatchMode


def calls(*items: str | tuple[str, dict[str, Any]]) -> list[TraceCall]:
    return [TraceCall(name=i, arguments={}) if isinstance(i, str) else TraceCall(name=i[0], arguments=i[1])
            for i in items]


def want(name: str, **arguments: Any) -> ExpectedCall:
    return ExpectedCall(name=name, arguments={k: parse_matcher(v) for k, v in arguments.items()})


@pytest.mark.parametrize(("made", "expected", "results"), [
    # made, expected, (strict, unordered, subset, superset)
    (calls("a", "b"), ["a", "b"], (True, True, True, True)),
    (calls("b", "a"), ["a", "b"], (False, True, True, True)),
    (calls("a"), ["a", "b"], (False, False, True, False)),
    (calls("a", "b", "c"), ["a", "b"], (False, False, False, True)),
    (calls("a", "a"), ["a"], (False, False, False, True)),  # a duplicate is an extra call
    (calls("a"), ["a", "a"], (False, False, True, False)),  # one call cannot stand for two
    (calls(), [], (True, True, True, True)),
    (calls("a"), [], (False, False, False, True)),
    (calls(), ["a"], (False, False, True, False)),
])
def test_each_mode_on_names(made: list[TraceCall], expected: list[Any], results: tuple[bool, ...]) -> None:
    assert tuple(trajectory_matches(made, expected, mode) for mode in MatchMode) == results


def test_arguments_are_matched_and_unnamed_ones_are_free() -> None:
    made = calls(("file_read", {"path": "a/b.py", "limit": 10}))
    assert trajectory_matches(made, [want("file_read", path={"$regex": r"b\.py$"})], STRICT)
    assert not trajectory_matches(made, [want("file_read", path="c.py")], STRICT)
    assert not trajectory_matches(made, [want("file_read", offset=1)], STRICT)  # a named argument must be there


def test_matching_is_one_to_one_not_greedy() -> None:
    # the first call fits both expectations; a greedy pairing would give it the only one the second fits
    made = calls(("read", {"path": "a.py"}), ("read", {"path": "b.py"}))
    expected = [want("read", path={"$regex": r"\.py$"}), want("read", path="a.py")]
    assert trajectory_matches(made, expected, UNORDERED)
    assert not trajectory_matches(made, expected, STRICT)


def test_superset_ignores_extras_but_needs_each_expected_call_once() -> None:
    made = calls("ls", ("read", {"path": "x"}), "grep", ("read", {"path": "y"}))
    assert trajectory_matches(made, [want("read", path="x"), want("read", path="y")], SUPERSET)
    assert not trajectory_matches(made, [want("read", path="x"), want("read", path="x")], SUPERSET)


def test_in_order_is_a_subsequence() -> None:
    made = calls("glob", "file_read", "grep", "file_edit")
    assert in_order(made, ["glob", "file_edit"])
    assert in_order(made, [])
    assert not in_order(made, ["file_edit", "glob"])
    assert not in_order(made, ["glob", "glob"])
    assert in_order(calls(("file_read", {"path": "x"}), "grep"), [want("file_read", path="x"), "grep"])


def test_a_fixture_chooses_its_mode_and_a_typo_lists_the_modes() -> None:
    from pydantic import ValidationError

    from tests.helpers import make_fixture

    assert make_fixture(match="superset").match is SUPERSET
    with pytest.raises(ValidationError, match="'strict', 'unordered', 'subset' or 'superset'"):
        make_fixture(match="supreset")
