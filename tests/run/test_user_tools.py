"""A simulated user with tools of its own (τ²-bench's dual control): offered to it, never to the
agent; its calls change the state the checks judge, and stand apart in the result and the golden."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import ToolSetError
from replio_replay.golden.canonical import canonical_result
from replio_replay.judge.metrics import summarize
from replio_replay.judge.results import RunResult
from replio_replay.providers.base import ChatRequest
from replio_replay.run.runner import RunOptions, run_fixture
from replio_replay.run.simulator import MAX_USER_CALLS
from tests.helpers import call, mock_provider, turn
from tests.run.test_environments import _case, _toolset

USER = {"instructions": "You are the customer. Cancel order A-1042 yourself, then tell the agent.",
        "tools": ["cancel_order"]}


def _play(tmp_path: Path, agent: list[Any], user: list[Any], **fixture: Any) -> tuple[Any, Any]:
    case = _case(_toolset(tmp_path), **{"id": "fx", "task": None, "user": USER, **fixture})
    provider = mock_provider({"fx": agent, "user:fx": user})
    return run_fixture(case, provider, RunOptions()), provider


def test_the_users_tool_is_offered_to_it_alone_and_changes_the_judged_state(tmp_path: Path) -> None:
    result, provider = _play(
        tmp_path,
        agent=[turn(call("get_order", order_id="A-1042")), turn(text="I see it is cancelled.")],
        user=[turn(call("cancel_order", order_id="A-1042")), turn(text="I cancelled A-1042, can you check?"),
              turn(text="Thanks ###STOP###")],
        verifier={"state": {"shop.orders.A-1042.status": "cancelled"}, "must_include": ["get_order"]})
    assert result.status.value == "ok" and result.passed, result.reasons
    assert [c.name for c in result.trace] == ["get_order"]
    assert [(c.name, c.arguments, c.result) for c in result.user_trace] == [
        ("cancel_order", {"order_id": "A-1042"}, "Order A-1042 cancelled.")]
    offered = {who: [[t["name"] for t in r.tools] for f, r in provider.requests if f.startswith(who)]
               for who in ("fx", "user:fx")}
    assert all("cancel_order" not in names and "get_order" in names for names in offered["fx"])
    assert all(names == ["cancel_order"] for names in offered["user:fx"])
    # The user saw its own call and result before it spoke; the agent never did.
    second: ChatRequest = [r for f, r in provider.requests if f == "user:fx"][1]
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert second.messages[-1].content == "Order A-1042 cancelled."
    agent_sees = [m.content for f, r in provider.requests if f == "fx" for m in r.messages]
    assert "Order A-1042 cancelled." not in agent_sees
    golden = canonical_result(result)
    assert golden["user_calls"] == [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]


def test_a_user_that_only_calls_tools_ends_the_fixture_in_error(tmp_path: Path) -> None:
    forever = [turn(call("cancel_order", order_id="A-1042"))] * (MAX_USER_CALLS + 2)
    result, _ = _play(tmp_path, agent=[turn(text="Hello.")], user=forever)
    assert result.status.value == "error" and "called its tools 10 times" in (result.error or "")


def test_a_user_tool_the_set_does_not_have_is_named(tmp_path: Path) -> None:
    with pytest.raises(ToolSetError, match="user.tools: no tool named 'reboot'"):
        _case(_toolset(tmp_path), id="fx", user={"instructions": "x", "tools": ["reboot"]})


def test_without_user_tools_nothing_is_added_to_the_result(tmp_path: Path) -> None:
    case = _case(_toolset(tmp_path), id="fx", user={"instructions": "x"})
    result = run_fixture(case, mock_provider({"fx": [turn(text="Hi.")], "user:fx": [turn(text="Bye ###STOP###")]}),
                         RunOptions())
    assert result.user_trace is None and "user_calls" not in canonical_result(result)
    assert "cancel_order" in case.offered.names


def test_the_users_calls_keep_their_place_among_the_agents_turns(tmp_path: Path) -> None:
    """A call the user made between two of the agent's turns is placed there (`at`), not after the
    conversation: what τ²'s evaluator replays in the order it happened."""
    result, _ = _play(
        tmp_path,
        agent=[turn(text="What can I do?"), turn(call("get_order", order_id="A-1042")), turn(text="It is cancelled.")],
        user=[turn(text="Hello."), turn(call("cancel_order", order_id="A-1042")),
              turn(text="I cancelled A-1042, can you check?"), turn(call("cancel_order", order_id="A-1042")),
              turn(text="###STOP###")])
    assert result.status.value == "ok", result.error
    roles = [m["role"] for m in result.conversation]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert [(c.name, c.at) for c in result.user_trace] == [("cancel_order", 2), ("cancel_order", 6)]
    saved = RunResult(provider="mock", model="scripted", fixtures=[result], summary=summarize([result])).to_json()
    fixture = saved["fixtures"][0]
    assert [c["at"] for c in fixture["user_trace"]] == [2, 6]
    assert all("at" not in c for c in fixture["trace"])  # the agent's calls are in `conversation` itself


def test_the_users_failed_calls_and_steps_count_toward_the_fixtures_limits(tmp_path: Path) -> None:
    failing = turn(call("cancel_order", order_id="Z-9"), call("cancel_order", order_id="Z-8"))
    result, _ = _play(tmp_path, agent=[turn(text="Hello.")] * 3,
                      user=[failing, turn(text="Hi."), turn(text="###STOP###")], max_tool_errors=2)
    assert result.status.value == "truncated" and [c.result[:6] for c in result.user_trace] == ["Error:"] * 2
    assert result.conversation == []  # cut short before the user said a word
    fine = turn(call("cancel_order", order_id="A-1042"))
    # the user's call and its result (2), its message (3), the agent's answer (4): the fifth never comes
    steps, _ = _play(tmp_path, agent=[turn(text="Hello.")] * 3,
                     user=[fine, turn(text="Hi."), turn(text="More."), turn(text="###STOP###")], max_steps=4)
    assert steps.status.value == "truncated" and [m["role"] for m in steps.conversation] == ["user", "assistant"]
