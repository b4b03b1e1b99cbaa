"""Environments in a run: one instance per fixture and trial, its end state in the result, judged and in the golden."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replio_replay.fixtures.cases import Case
from replio_replay.golden.canonical import canonical_result
from replio_replay.golden.drift import drift
from replio_replay.judge.results import Status
from replio_replay.plan.offer import for_fixture
from replio_replay.run.runner import RunOptions, run_fixture, run_suite
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.setfile import load_chain
from replio_replay.tools.toolset import ToolSet
from tests.helpers import call, make_fixture, mock_provider, turn, write_json
from tests.support.environments import shop_decl, write_module

CANCEL = turn(call("cancel_order", order_id="A-1042"))
LOOK = turn(call("get_order", order_id="A-1042"))


def _toolset(tmp_path: Path) -> ToolSet:
    write_module(tmp_path / "envs" / "shop.py")
    path = write_json(tmp_path / "tools.json", {"environments": {"shop": shop_decl()}})
    return resolve_toolset("default", load_chain(path), [])


def _case(toolset: ToolSet, trial: int = 1, **fixture: Any) -> Case:
    fx = make_fixture(**fixture)
    return Case(fx, for_fixture(toolset, fx, "test"), toolset, trial)


def test_every_call_of_a_fixture_sees_the_earlier_ones(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    provider = mock_provider({"fx": [CANCEL, LOOK, turn(text="Done.")]})
    result = run_fixture(_case(toolset), provider, RunOptions())
    assert result.status is Status.OK
    assert result.trace[1].result == '{"status":"cancelled","total":30}'
    assert result.state is not None and result.state["shop"]["orders"]["A-1042"]["status"] == "cancelled"
    assert result.state["shop"]["log"] == ["cancelled A-1042 (customer)"]


def test_each_fixture_and_each_trial_starts_from_the_initial_state(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    provider = mock_provider({"*": [CANCEL, turn(text="Done.")]})
    cases = [_case(toolset, 1), _case(toolset, 2), _case(toolset, 1, id="other")]
    run = run_suite(cases, provider, toolset, RunOptions(jobs=2))
    # a state shared between them would make the second cancel fail ("not open")
    assert [f.trace[0].result for f in run.fixtures] == ["Order A-1042 cancelled."] * 3
    assert all(f.state == run.fixtures[0].state for f in run.fixtures)


def test_state_and_state_from_calls_judge_the_end_state(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    verifier = {"state": {"shop.orders.A-1042.status": "cancelled"},
                "state_from_calls": [{"name": "get_order", "arguments": {"order_id": "A-1043"}},
                                     {"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]}
    provider = mock_provider({"fx": [LOOK, CANCEL, turn(text="Done.")]})
    result = run_fixture(_case(toolset, verifier=verifier), provider, RunOptions())
    assert (result.passed, result.reasons) == (True, [])  # another path of calls to the same state


def test_state_from_calls_fails_when_the_run_leaves_another_state(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    verifier = {"state": {"shop.orders.A-1042.status": "cancelled"},
                "state_from_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1042", "reason": "fraud"}}]}
    provider = mock_provider({"fx": [LOOK, turn(text="Done.")]})
    result = run_fixture(_case(toolset, verifier=verifier), provider, RunOptions())
    assert not result.passed
    assert result.reasons == [
        'state.shop.orders.A-1042.status: expected "cancelled", it is "open"',
        'state_from_calls: shop.log[0] is missing; the reference calls leave "cancelled A-1042 (fraud)"',
        'state_from_calls: shop.orders.A-1042.status is "open", the reference calls leave "cancelled"',
    ]


def test_a_reference_call_that_fails_is_named(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    verifier = {"state_from_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1043"}},
                                     {"name": "refund"}]}
    result = run_fixture(_case(toolset, verifier=verifier), mock_provider({"fx": [turn(text="Done.")]}), RunOptions())
    assert result.reasons == ["state_from_calls[0] (cancel_order) raised ValueError: order A-1043 is shipped, "
                              "not open"]


def test_an_unknown_reference_tool_is_named(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    verifier = {"state_from_calls": [{"name": "refund"}]}
    result = run_fixture(_case(toolset, verifier=verifier), mock_provider({"fx": [turn(text="Done.")]}), RunOptions())
    assert result.reasons == ["state_from_calls[0]: no environment has a tool 'refund' (they have: cancel_order, "
                              "get_order)"]


def test_the_end_state_is_in_the_golden_and_its_change_is_drift(tmp_path: Path) -> None:
    toolset = _toolset(tmp_path)
    cancelled = run_fixture(_case(toolset), mock_provider({"fx": [CANCEL, turn(text="Done.")]}), RunOptions())
    golden = canonical_result(cancelled)
    assert golden["state"]["shop"]["orders"]["A-1042"]["status"] == "cancelled"
    assert "state" in cancelled.model_dump(by_alias=True)
    # the same calls, but the environment's code now refuses: only the state (and the result) differ
    write_module(tmp_path / "envs" / "shop.py", (tmp_path / "envs" / "shop.py").read_text().replace(
        'order["status"] = "cancelled"', 'order["status"] = "on hold"'))
    changed = run_fixture(_case(_toolset_again(tmp_path)), mock_provider({"fx": [CANCEL, turn(text="Done.")]}),
                          RunOptions())
    found = drift(golden, canonical_result(changed))
    assert [(c.path, c.kind, c.old, c.new) for c in found] == [
        ("state.shop.orders.A-1042.status", "state_changed", "cancelled", "on hold")]


def _toolset_again(tmp_path: Path) -> ToolSet:
    return resolve_toolset("default", load_chain(tmp_path / "tools.json"), [])


def test_a_fixture_without_environments_has_no_state_key() -> None:
    fx = make_fixture()
    toolset = ToolSet("default", ())
    result = run_fixture(Case(fx, toolset, toolset), mock_provider({"fx": [turn(text="Done.")]}), RunOptions())
    assert result.state is None and "state" not in canonical_result(result)


def test_a_fixture_whose_environment_cannot_be_built_ends_in_error(tmp_path: Path) -> None:
    write_module(tmp_path / "envs" / "shop.py")
    path = write_json(tmp_path / "tools.json", {"environments": {"shop": {"python": "envs/shop.py:Shop"}}})
    toolset = resolve_toolset("default", load_chain(path), [])
    result = run_fixture(_case(toolset), mock_provider({"fx": [turn(text="Done.")]}), RunOptions())
    assert result.status is Status.ERROR
    assert "environments.shop.python: Shop(**initial) failed: TypeError" in (result.error or "")


def test_environments_are_inputs_of_recordings_and_of_the_tool_sets_digest(tmp_path: Path) -> None:
    plain = make_fixture()
    with_env = make_fixture(environments={"shop": shop_decl()})
    assert with_env.inputs_hash() != plain.inputs_hash()
    assert make_fixture(environments={"shop": shop_decl(initial={})}).inputs_hash() != with_env.inputs_hash()
    before = _toolset(tmp_path).digest
    write_json(tmp_path / "tools.json", {"environments": {"shop": shop_decl(initial={"orders": {}})}})
    assert _toolset_again(tmp_path).digest != before
