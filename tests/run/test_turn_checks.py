"""Conversations over environments: tools a turn offers, and per-turn state and result checks (BFCL's multi-turn rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from replio_replay.fixtures.cases import Case
from replio_replay.judge.results import FixtureResult, Status
from replio_replay.plan.offer import for_fixture, name_problems
from replio_replay.run.runner import RunOptions, run_fixture
from replio_replay.tools.environment import EnvironmentDecl
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.setfile import load_chain
from tests.helpers import call, make_fixture, mock_provider, turn, write_json
from tests.support.environments import shop_decl, write_module

LOOK_42 = turn(call("get_order", order_id="A-1042"))
LOOK_43 = turn(call("get_order", order_id="A-1043"))
CANCEL = turn(call("cancel_order", order_id="A-1042"))
DONE = turn(text="Done.")


def _run(tmp_path: Path, turns: list[Any], script: list[dict[str, Any]]) -> tuple[FixtureResult, Any]:
    write_module(tmp_path / "envs" / "shop.py")
    toolset = resolve_toolset("default", load_chain(write_json(tmp_path / "tools.json",
                                                              {"environments": {"shop": shop_decl()}})), [])
    fx = make_fixture(task=None, turns=turns, tools_offered=["get_order", "cancel_order"])
    provider = mock_provider({"fx": script})
    return run_fixture(Case(fx, for_fixture(toolset, fx, "test"), toolset, 1), provider, RunOptions()), provider


def _ref(*calls: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": {"order_id": order}} for name, order in calls]


def test_a_tool_a_later_turn_offers_is_neither_offered_nor_run_before_it(tmp_path: Path) -> None:
    turns = ["Look at A-1042.", {"user": "Now cancel it.", "offer": ["cancel_order"]}]
    result, provider = _run(tmp_path, turns, [CANCEL, DONE, CANCEL, DONE])
    offered = [[spec["name"] for spec in request.tools] for _, request in provider.requests]
    assert offered == [["get_order"], ["get_order"], ["get_order", "cancel_order"], ["get_order", "cancel_order"]]
    assert result.trace[0].result == "Error: unknown tool 'cancel_order'; available tools: get_order"
    assert result.trace[1].result == "Order A-1042 cancelled."
    assert result.state is not None and result.state["shop"]["orders"]["A-1042"]["status"] == "cancelled"


def test_each_turn_is_judged_on_its_own_state_after_the_earlier_turns_references(tmp_path: Path) -> None:
    turns = [{"user": "Look at A-1042.", "verifier": {"state_from_calls": _ref(("get_order", "A-1042")),
                                                       "results_from_calls": True}},
             {"user": "Cancel it.", "verifier": {"state_from_calls": _ref(("cancel_order", "A-1042")),
                                                  "results_from_calls": True}}]
    passed, _ = _run(tmp_path, turns, [LOOK_42, DONE, CANCEL, DONE])
    assert (passed.passed, passed.reasons) == (True, [])
    # cancelling in turn 1 leaves turn 1's state unlike its reference, and turn 2 makes no call
    early, _ = _run(tmp_path, turns, [CANCEL, DONE, DONE])
    assert early.reasons == [
        'turn 1: state_from_calls: shop.log[0] is "cancelled A-1042 (customer)", which the reference calls do not leave',
        'turn 1: state_from_calls: shop.orders.A-1042.status is "cancelled", the reference calls leave "open"',
        "turn 1: results_from_calls: get_order's result \"{\\\"status\\\":\\\"open\\\",\\\"total\\\":30}\" is not "
        "among the results of the model's calls",
        "turn 2: results_from_calls: the reference makes 1 call(s) here; the model made none",
    ]


def test_a_reference_result_found_in_an_earlier_turn_counts(tmp_path: Path) -> None:
    turns = [{"user": "Look at A-1043.", "verifier": {"state_from_calls": _ref(("get_order", "A-1043")),
                                                       "results_from_calls": True}},
             {"user": "And again, then A-1042.", "verifier": {
                 "state_from_calls": _ref(("get_order", "A-1043"), ("get_order", "A-1042")),
                 "results_from_calls": True}}]
    # turn 2 looks at A-1042 only: one A-1043 result from turn 1 is all the model has, and the
    # reference of turn 2 needs one (a result counts once per turn's check, earlier turns included)
    result, _ = _run(tmp_path, turns, [LOOK_43, DONE, LOOK_42, DONE])
    assert (result.passed, result.reasons) == (True, [])
    # the same state with other results fails the response check only
    wrong, _ = _run(tmp_path, turns, [LOOK_42, DONE, LOOK_42, DONE])
    assert wrong.reasons == [
        "turn 1: results_from_calls: get_order's result \"{\\\"status\\\":\\\"shipped\\\",\\\"total\\\":12}\" is not "
        "among the results of the model's calls",
        "turn 2: results_from_calls: get_order's result \"{\\\"status\\\":\\\"shipped\\\",\\\"total\\\":12}\" is not "
        "among the results of the model's calls",
    ]


def test_a_reference_call_that_raises_fails_its_turn_and_the_later_ones(tmp_path: Path) -> None:
    turns = [{"user": "Cancel A-1043.", "verifier": {"state_from_calls": _ref(("cancel_order", "A-1043"))}},
             {"user": "Look at A-1042.", "verifier": {"state_from_calls": _ref(("get_order", "A-1042"))}}]
    result, _ = _run(tmp_path, turns, [turn(call("cancel_order", order_id="A-1043")), DONE, LOOK_42, DONE])
    assert result.status is Status.OK
    assert result.trace[0].result == ("Error: cancel_order failed: ValueError: order A-1043 is shipped, not open")
    assert result.reasons == [
        "turn 1: state_from_calls[0] (cancel_order) raised ValueError: order A-1043 is shipped, not open",
        "turn 2: state_from_calls: turn 1's reference calls could not be made",
    ]


def test_a_turn_whose_reference_makes_no_call_needs_none(tmp_path: Path) -> None:
    turns = [{"user": "Hello.", "verifier": {"state_from_calls": [], "results_from_calls": True}}]
    result, _ = _run(tmp_path, turns, [DONE])
    assert (result.passed, result.reasons) == (True, [])


def test_a_turns_offer_must_name_an_offered_tool_and_shapes_the_recording(tmp_path: Path) -> None:
    write_module(tmp_path / "envs" / "shop.py")
    toolset = resolve_toolset("default", load_chain(write_json(tmp_path / "tools.json",
                                                              {"environments": {"shop": shop_decl()}})), [])
    fx = make_fixture(turns=[{"user": "Cancel it.", "offer": ["cancel_ordr"]}])
    assert name_problems(fx, toolset) == [
        "turns[0].offer: no tool named 'cancel_ordr' in tool set 'default', so it can never be offered; "
        "did you mean 'cancel_order'?"]
    plain = make_fixture(turns=["Cancel it."])
    offered = make_fixture(turns=[{"user": "Cancel it.", "offer": ["cancel_order"]}])
    judged = make_fixture(turns=[{"user": "Cancel it.", "verifier": {"min_calls": 1}}])
    assert plain.inputs_hash() == judged.inputs_hash() != offered.inputs_hash()


def test_check_arguments_false_applies_to_methods_described_as_given() -> None:
    with pytest.raises(ValidationError, match="check_arguments: false applies to the schemas `methods` gives"):
        EnvironmentDecl.model_validate({"python": "envs/shop.py:Shop", "check_arguments": False})
