"""Scripted turns with the mock provider: each user turn answered in order in one conversation,
per-turn limits and the fixture-wide call bound, per-turn verifiers, and the result's conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import FixtureError
from replio_replay.fixtures.model import Fixture, load_fixture
from replio_replay.judge.results import FixtureResult, Status
from replio_replay.run.engine import Limits
from replio_replay.run.runner import RunOptions, run_fixture
from tests.helpers import call, make_case, mock_provider, turn


def conversation(**data: Any) -> Fixture:
    return Fixture.model_validate({"id": "conv", "files": {"notes.txt": "one\ntwo\n"}, **data})


def play(fixture: Fixture, script: list[Any], limits: Limits | None = None) -> tuple[FixtureResult, Any]:
    provider = mock_provider({"conv": script})
    return run_fixture(make_case(fixture), provider, RunOptions(limits=limits or Limits())), provider


def test_each_turn_is_answered_in_one_conversation_task_first() -> None:
    fx = conversation(task="Read notes.", turns=["Now list the folder.", {"user": "Thanks, that is all."}])
    result, provider = play(fx, [turn(call("file_read", path="notes.txt")), turn(text="It says one, two."),
                                 turn(call("list_dir", path=".")), turn(text="Just notes.txt."),
                                 turn(text="You are welcome.")])
    assert result.status is Status.OK and result.passed
    assert result.names == ["file_read", "list_dir"] and result.answer == "You are welcome."
    last = provider.requests[-1][1].messages
    assert [m.content for m in last if m.role == "user"] == ["Read notes.", "Now list the folder.",
                                                             "Thanks, that is all."]
    assert result.turns == [0, 2]  # the model turn of each call, counted over the whole conversation
    roles = [m["role"] for m in result.conversation or []]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
                     "user", "assistant"]
    assert result.conversation[1] == {"role": "assistant", "content": "",
                                      "calls": [{"name": "file_read", "arguments": {"path": "notes.txt"}}]}
    assert result.conversation[2]["name"] == "file_read" and result.conversation[2]["content"] == result.trace[0].result
    assert "two" in result.conversation[2]["content"]


def test_turns_without_a_task_start_with_the_first_turn() -> None:
    result, provider = play(conversation(turns=["Hello?", "Bye."]), [turn(text="Hi."), turn(text="Bye.")])
    assert result.task is None and result.status is Status.OK
    first = provider.requests[0][1].messages
    assert [m.content for m in first if m.role == "user"] == ["Hello?"]
    assert result.conversation == [{"role": "user", "content": "Hello?"}, {"role": "assistant", "content": "Hi."},
                                   {"role": "user", "content": "Bye."}, {"role": "assistant", "content": "Bye."}]


def test_max_turns_bounds_each_user_turn_and_stops_the_conversation_truncated() -> None:
    fx = conversation(turns=["First.", "Second.", "Third."], max_turns=2)
    read = turn(call("file_read", path="notes.txt"))
    result, provider = play(fx, [read, turn(text="ok"), read, read, turn(text="never asked")])
    assert result.status is Status.TRUNCATED
    assert len(provider.requests) == 4  # 2 model turns for turn 1, then 2 for turn 2, cut short
    assert result.answer == ""  # the last turn was cut short before an answer


def test_max_calls_holds_across_turns() -> None:
    read = turn(call("file_read", path="notes.txt"))
    result, _ = play(conversation(turns=["A.", "B."]), [read, turn(text="a"), read, read, turn(text="b")],
                     Limits(max_calls=2))
    assert result.status is Status.TRUNCATED and result.calls == 2


def test_a_turns_verifier_judges_the_conversation_as_it_stood_then() -> None:
    fx = conversation(task="Look, do not touch.", turns=[
        {"user": "Now delete it.", "verifier": {"must_include": ["file_delete"], "answer": {"$contains": "gone"}}},
        {"user": "Anything else?", "verifier": {"avoid": ["list_dir"]}},
    ], verifier={"answer": "No."})
    fx_first = conversation(task="Look, do not touch.", turns=[
        {"user": "Now delete it.", "verifier": {"avoid": ["file_delete"]}}, "Thanks."])
    script = [turn(text="Looked."), turn(call("file_delete", path="notes.txt")), turn(text="It is gone."),
              turn(call("list_dir", path=".")), turn(text="No.")]
    result, _ = play(fx, script)
    assert not result.passed
    assert result.reasons == ["turn 3: avoid: list_dir was called"]  # the task is turn 1
    early, _ = play(fx_first, script)
    assert early.reasons == ["turn 2: avoid: file_delete was called"]


def test_a_turns_answer_check_sees_that_turns_answer() -> None:
    fx = conversation(turns=[{"user": "Say hi.", "verifier": {"answer": "hi"}}, "Say bye."])
    result, _ = play(fx, [turn(text="hi"), turn(text="bye")])
    assert result.passed and result.answer == "bye"
    wrong, _ = play(fx, [turn(text="hello"), turn(text="bye")])
    assert wrong.reasons == ['turn 1: answer: expected "hi", the answer is "hello"']


def test_a_turn_never_reached_fails_its_verifier() -> None:
    fx = conversation(turns=["One.", {"user": "Two.", "verifier": {"min_calls": 0}}], max_turns=1)
    result, _ = play(fx, [turn(call("file_read", path="notes.txt"))])
    assert result.status is Status.TRUNCATED
    assert result.reasons == ["turn 2: not reached; the conversation ended after turn 1"]


def test_a_single_task_result_has_no_conversation_key() -> None:
    result, _ = play(conversation(task="Hi."), [turn(text="Hello.")])
    assert result.conversation is None and result.tokens_by_role is None


@pytest.mark.parametrize(("data", "says"), [
    ({}, "needs a `task` (or scripted `turns`, or a simulated `user`)"),
    ({"turns": ["a"], "user": {"instructions": "x"}}, "`turns` or a simulated `user`, not both"),
    ({"turns": ["a"], "single_response": True}, "single_response judges the first response only"),
    ({"turns": [{"user": "a", "verifier": {"files": {"a": "b"}}}]}, "turns.0.verifier: a turn's verifier cannot"),
    ({"turns": [{"user": "a", "verifier": {"results_from_calls": True}}]}, "give state_from_calls too"),
    ({"turns": [{"user": "a", "offer": ["ls"]}]}, "turns[0].offer: the first turn is offered every tool"),
    ({"turns": [""]}, "turns.0.user"),
    ({"turns": ["more"] * 1001}, "turns: List should have at most 1000 items"),
])
def test_bad_conversations_are_named(data: dict[str, Any], says: str) -> None:
    with pytest.raises(FixtureError, match="conv.json") as info:
        load_fixture({"id": "conv", **data}, source="eval/conv.json")
    assert says in str(info.value)


def test_turns_and_user_shape_the_recording_but_turn_verifiers_do_not(tmp_path: Path) -> None:
    base = conversation(turns=["a", "b"])
    judged = conversation(turns=["a", {"user": "b", "verifier": {"avoid": ["x"]}}])
    assert base.inputs_hash() == judged.inputs_hash() != conversation(turns=["a", "c"]).inputs_hash()
    user = conversation(user={"instructions": "You want a refund."})
    assert user.inputs_hash() != conversation(user={"instructions": "You want a swap."}).inputs_hash()
    assert make_case(conversation(task="x")).fixture.inputs_hash() == conversation(task="x").inputs_hash()


def test_said_reads_every_text_of_the_agent_not_only_the_last() -> None:
    fx = conversation(task="Refund me.", turns=["Thanks."],
                      verifier={"said": [{"$contains": "refunded"}], "answer": "Bye."})
    agent = [turn(text="You are refunded."), turn(text="Bye.")]
    result, _ = play(fx, agent)
    assert result.passed, result.reasons
    unsaid = conversation(task="Refund me.", turns=["Thanks."], verifier={"said": [{"$contains": "refunded"}]})
    result, _ = play(unsaid, [turn(text="Let me see."), turn(text="Bye.")])
    assert result.reasons == ['said: no message of the agent matches {"$contains": "refunded"} (2 messages)']
