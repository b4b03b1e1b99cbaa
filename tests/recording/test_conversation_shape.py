"""A replayed request's conversation against its recording's: roles and calls carried, in each wire
format; the words and what the agent declares are drift, not another conversation."""

from __future__ import annotations

from typing import Any

from replio_replay.recording.conversation import difference, shape
from replio_replay.recording.requests import volatile_pattern


def chat(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": list(messages), **extra}


SYSTEM = {"role": "system", "content": "Be brief."}
ASK = {"role": "user", "content": "Weather in Paris?"}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


def test_what_the_agent_declares_and_the_words_are_not_another_conversation() -> None:
    recorded = chat(SYSTEM, ASK, CALL, RESULT, tools=[{"type": "function", "function": {"name": "get_weather"}}])
    declared = chat({**SYSTEM, "content": "Be very brief."}, ASK,
                    {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "id": "call_9"}]}, {**RESULT, "content": "rainy"},
                    tools=[], temperature=0.0)
    assert difference(recorded, declared) is None
    spaced = {**CALL, "tool_calls": [{**CALL["tool_calls"][0],
                                      "function": {"name": "get_weather", "arguments": '{ "city":"Paris" }'}}]}
    assert difference(recorded, chat(SYSTEM, ASK, spaced, RESULT)) is None


def test_a_conversation_that_went_another_way_is_named() -> None:
    recorded = chat(SYSTEM, ASK, CALL, RESULT)
    assert difference(recorded, chat(SYSTEM, ASK)) == "it holds 1 message where the recording's held 3"
    other = {**CALL, "tool_calls": [{**CALL["tool_calls"][0],
                                     "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]}
    assert difference(recorded, chat(SYSTEM, ASK, other, RESULT)) == (
        'its message 2 carries get_weather({"city":"Rome"}) where the recording\'s carried '
        'get_weather({"city":"Paris"})')
    assert difference(chat(ASK, {"role": "assistant", "content": "Hi"}), chat(ASK, ASK)) == \
        "its message 2 is the user's where the recording's was the assistant's"
    assert difference(recorded, chat(SYSTEM, ASK), volatile_pattern(("messages",))) is None


def test_every_wire_format_the_relay_serves_has_a_shape() -> None:
    anthropic = {"system": "x", "messages": [
        ASK, {"role": "assistant", "content": [{"type": "text", "text": "Let me see."},
                                               {"type": "tool_use", "id": "t1", "name": "get_weather",
                                                "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}]}
    responses = {"input": [{"role": "developer", "content": "x"}, {"role": "user", "content": "Weather?"},
                           {"type": "reasoning", "summary": []},
                           {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": '{"city":"Paris"}'},
                           {"type": "function_call_output", "call_id": "c", "output": "sunny"}]}
    gemini = {"contents": [{"role": "user", "parts": [{"text": "Weather?"}]},
                           {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
                           {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {}}}]}]}
    expected = [("user", ()), ("assistant", (("get_weather", '{"city":"Paris"}'),)), ("tool", ())]
    for body in (chat(SYSTEM, ASK, CALL, RESULT), anthropic, responses, gemini):
        assert shape(body) == expected, body
    assert shape({"input": "Weather?"}) == [("user", ())]
    assert shape("not json") is None and difference("x", chat(ASK)) is None
