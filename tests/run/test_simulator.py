"""The simulated user: its view of the conversation (roles swapped, tool traffic left out), stop
markers, its turn bound, and a simulated conversation run with the mock provider playing both sides."""

from __future__ import annotations

from typing import Any

from replio_replay.errors import ProviderError
from replio_replay.fixtures.model import Fixture
from replio_replay.judge.results import FixtureResult, Status
from replio_replay.providers.base import Message, ToolCall
from replio_replay.run.runner import RunOptions, run_fixture
from replio_replay.run.simulator import OPENING, before_stop, user_view
from tests.helpers import call, make_case, mock_provider, turn

INSTRUCTIONS = "You are Ana. You want the notes read to you. Say ###STOP### when you have them."


def test_the_view_swaps_roles_and_leaves_out_tool_calls_and_results() -> None:
    read = ToolCall("c1", "file_read", {"path": "notes.txt"})
    conversation = [Message("system", "agent prompt"), Message("user", "Read my notes."),
                    Message("assistant", "Let me look.", (read,)), Message("tool", "secret tool output", "", "c1"),
                    Message("assistant", "They say hello."), Message("user", "Thanks.")]
    view = user_view(INSTRUCTIONS, conversation)
    assert [(m.role, m.content) for m in view] == [
        ("system", INSTRUCTIONS), ("user", OPENING), ("assistant", "Read my notes."),
        ("user", "They say hello."), ("assistant", "Thanks.")]
    assert all(not m.tool_calls for m in view)


def test_before_the_opening_the_simulator_sees_its_instructions_and_the_greeting() -> None:
    assert [(m.role, m.content) for m in user_view(INSTRUCTIONS, [])] == [("system", INSTRUCTIONS),
                                                                            ("user", OPENING)]


def test_stop_markers_cut_the_reply() -> None:
    assert before_stop("Great, thanks! ###STOP### bye", ["###STOP###"]) == ("Great, thanks!", True)
    assert before_stop("###STOP###", ["###STOP###"]) == ("", True)
    assert before_stop("  no marker here ", ["###STOP###"]) == ("no marker here", False)
    assert before_stop("done [END] then ###STOP###", ["###STOP###", "[END]"]) == ("done", True)


def simulated(**user: Any) -> Fixture:
    return Fixture.model_validate({"id": "conv", "files": {"notes.txt": "hello\n"},
                                   "user": {"instructions": INSTRUCTIONS, **user}})


def play(fixture: Fixture, agent: list[Any], user: list[Any]) -> tuple[FixtureResult, Any]:
    provider = mock_provider({"conv": agent, "user:conv": user})
    return run_fixture(make_case(fixture), provider, RunOptions()), provider


def test_the_simulator_opens_and_ends_with_a_stop_marker() -> None:
    result, provider = play(
        simulated(),
        [turn(call("file_read", path="notes.txt"), usage={"prompt": 100, "completion": 7}),
         turn(text="They say hello.", usage={"prompt": 120, "completion": 5})],
        [turn(text="Please read my notes.", usage={"prompt": 30, "completion": 6}),
         turn(text="Thanks! ###STOP### (the user leaves)", usage={"prompt": 40, "completion": 3}),
         turn(text="never asked")])
    assert result.status is Status.OK and result.names == ["file_read"]
    # "Thanks!" was sent, so the agent answered it: the mock's third agent turn is its default text
    assert [m["content"] for m in result.conversation or [] if m["role"] == "user"] == [
        "Please read my notes.", "Thanks!"]
    agent_requests = [r for fid, r in provider.requests if fid == "conv"]
    assert all(INSTRUCTIONS not in m.content and "###STOP###" not in m.content
               for r in agent_requests for m in r.messages)
    user_requests = [r for fid, r in provider.requests if fid == "user:conv"]
    assert len(user_requests) == 2 and all(r.tools == () for r in user_requests)
    assert user_requests[1].messages[-1] == Message("user", "They say hello.")
    assert result.tokens_by_role == {"agent": {"prompt": 230, "completion": 17}, "user": {"prompt": 70, "completion": 9}}
    assert result.tokens == 100 + 7 + 120 + 5 + 10 + 5  # the agent's alone


def test_a_stop_with_nothing_before_it_forwards_nothing() -> None:
    result, provider = play(simulated(), [turn(text="Hello.")], [turn(text="Hi."), turn(text="###STOP###")])
    assert result.status is Status.OK
    assert [m["role"] for m in result.conversation or []] == ["user", "assistant"]
    assert len([1 for fid, _ in provider.requests if fid == "conv"]) == 1


def test_the_task_is_the_users_first_message_and_counts_as_a_turn() -> None:
    fx = simulated(max_turns=2).model_copy(update={"task": "Read my notes."})
    # the mock plays a role's turn by the count of its earlier messages: the task is the user's first
    result, provider = play(fx, [turn(text="Hello."), turn(text="Sure.")],
                            [turn(text="(the task)"), turn(text="Go on."), turn(text="More!")])
    assert [m["content"] for m in result.conversation or [] if m["role"] == "user"] == ["Read my notes.", "Go on."]
    assert result.status is Status.TRUNCATED  # two user turns, no stop
    assert len([1 for fid, _ in provider.requests if fid == "user:conv"]) == 1


def test_a_failing_simulator_ends_the_fixture_in_error() -> None:
    result, _ = play(simulated(), [turn(text="Hello.")], [ProviderError("mock: the simulator is down")])
    assert result.status is Status.ERROR and result.error == "mock: the simulator is down"
    assert not result.passed


def test_an_unknown_user_provider_is_that_fixtures_error() -> None:
    fx = simulated(provider="nosuch:model")
    provider = mock_provider({"conv": [turn(text="x")]})
    result = run_fixture(make_case(fx), provider, RunOptions(role_providers={"nosuch:model": "unknown provider"}))
    assert result.status is Status.ERROR
    assert result.error == "fixture 'conv': user.provider 'nosuch:model': unknown provider"


def test_a_reply_with_no_text_ends_the_fixture_in_error_and_sends_the_agent_nothing() -> None:
    for silent in (turn(text=""), turn(text="  \n "), turn(call("file_read", path="notes.txt"))):
        result, provider = play(simulated(), [turn(text="Hello."), turn(text="Sure.")], [turn(text="Hi."), silent])
        assert result.status is Status.ERROR and not result.passed
        assert result.error == (
            "fixture 'conv': the simulated user's reply 2 holds no text and no stop marker, so there is nothing to "
            "send the agent; tell it in user.instructions to end with a stop marker (###STOP###) when it is done")
        assert [m["content"] for m in result.conversation or [] if m["role"] == "user"] == ["Hi."]
        assert len([1 for fid, _ in provider.requests if fid == "conv"]) == 1


HISTORY = [{"role": "user", "content": "Read my notes."},
           {"role": "assistant", "calls": [{"name": "file_read", "arguments": {"path": "notes.txt"}}]},
           {"role": "tool", "content": "hello"},
           {"role": "assistant", "content": "They say hello."}]


def test_a_conversation_with_history_continues_it_on_both_sides_without_the_greeting() -> None:
    result, provider = play(simulated() .model_copy(update={"history": Fixture.model_validate(
        {"id": "h", "task": "t", "history": HISTORY}).history}),
        # the mock answers by the assistant turns already in the request: the history's count too
        [turn(text="-"), turn(text="-"), turn(text="They still say hello.")],
        [turn(text="-"), turn(text="And again?"), turn(text="###STOP###")])
    assert result.status is Status.OK and result.trace == []  # the history's call is not made again
    first_user = next(r for fid, r in provider.requests if fid == "user:conv")
    assert [(m.role, m.content) for m in first_user.messages] == [
        ("system", INSTRUCTIONS), ("assistant", "Read my notes."), ("user", "They say hello.")]
    agent = next(r for fid, r in provider.requests if fid == "conv")
    assert [(m.role, m.content) for m in agent.messages[1:]] == [  # after the system prompt
        ("user", "Read my notes."), ("assistant", ""), ("tool", "hello"), ("assistant", "They say hello."),
        ("user", "And again?")]
    assert agent.messages[3].tool_call_id == agent.messages[2].tool_calls[0].id
    assert [m["content"] for m in result.conversation or []][:4] == ["Read my notes.", "", "hello", "They say hello."]


def test_history_must_be_a_conversation_the_user_continues() -> None:
    for history, why in [([{"role": "assistant", "content": "Hi"}], "must start with a user message"),
                         ([*HISTORY[:2], HISTORY[3]], "need 1 more tool message"),
                         (HISTORY[:3], "must end with the agent's text answer"),
                         ([{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}],
                          "must follow an assistant message's call")]:
        try:
            Fixture.model_validate({"id": "h", "task": "t", "history": history})
        except Exception as exc:  # pydantic's ValidationError names the field
            assert why in str(exc) and "history" in str(exc)
        else:
            raise AssertionError(f"accepted {history}")
