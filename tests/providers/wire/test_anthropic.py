"""The Anthropic Messages converters, on plain data."""

from __future__ import annotations

import dataclasses

import pytest

from replio_replay.errors import ProviderResponseError
from replio_replay.providers.base import ChatRequest, Message, ToolCall
from replio_replay.providers.wire import anthropic as wire
from tests.providers.samples import (
    ANSWER,
    READ_TOOL,
    after_two_calls,
    first_turn,
    schema_request,
    settings,
)


def test_body_has_top_level_system_max_tokens_temperature_and_no_seed():
    body = wire.encode_request(first_turn(), settings("anthropic", max_tokens=512, seed=5))
    assert list(body) == ["model", "max_tokens", "system", "messages", "tools", "temperature"]
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "What port?"}]
    assert (body["max_tokens"], body["temperature"]) == (512, 0.0)
    assert "seed" not in body


def test_no_system_key_without_a_system_message():
    body = wire.encode_request(ChatRequest((Message("user", "hi"),), ()), settings("anthropic"))
    assert "system" not in body and "tools" not in body


def test_tool_spec_becomes_name_description_input_schema():
    assert wire.encode_tool(READ_TOOL) == {
        "name": "file_read",
        "description": "Read a text file.",
        "input_schema": READ_TOOL["parameters"],
    }


def test_calls_are_tool_use_blocks_and_consecutive_results_share_one_user_message():
    messages = wire.encode_request(after_two_calls(), settings("anthropic"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {
            "type": "tool_use",
            "id": "call_a",
            "name": "file_read",
            "input": {"path": "config/server.toml"},
        },
        {"type": "tool_use", "id": "call_b", "name": "grep", "input": {"pattern": "port"}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_a", "content": "port = 8743"},
        {
            "type": "tool_result",
            "tool_use_id": "call_b",
            "content": "Error: no match",
            "is_error": True,
        },
    ]


def test_a_user_message_after_results_joins_the_same_user_turn():
    request = ChatRequest(
        (
            Message("user", "go"),
            Message("assistant", "", (ToolCall("t1", "grep", {"pattern": "x"}),)),
            Message("tool", "x:1", tool_call_id="t1", name="grep"),
            Message("user", "and now?"),
        ),
        (),
    )
    messages = wire.encode_request(request, settings("anthropic"))["messages"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "x"}}
    ]
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "x:1"},
            {"type": "text", "text": "and now?"},
        ],
    }


def test_raw_string_arguments_go_back_as_received():
    request = ChatRequest((Message("assistant", "", (ToolCall("t1", "grep", "{oops"),)),), ())
    block = wire.encode_request(request, settings("anthropic"))["messages"][0]["content"][0]
    assert block["input"] == "{oops"


def test_decode_text_and_two_tool_use_blocks_in_order_with_usage_sum():
    data = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll check both."},
            {"type": "tool_use", "id": "toolu_1", "name": "file_read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"pattern": "b"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 500, "cache_read_input_tokens": 0, "output_tokens": 40},
    }
    response = wire.decode_response(data)
    assert response.text == "I'll check both."
    assert response.tool_calls == (
        ToolCall("toolu_1", "file_read", {"path": "a"}),
        ToolCall("toolu_2", "grep", {"pattern": "b"}),
    )
    assert response.usage.tokens == 540


def test_decode_ignores_thinking_blocks_and_keeps_string_input_raw_when_malformed():
    data = {
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "tool_use", "id": "t1", "name": "grep", "input": '{"pattern": '},
            {"type": "tool_use", "id": "t2", "name": "grep", "input": '{"pattern": "x"}'},
        ]
    }
    response = wire.decode_response(data)
    assert response.text == ""
    assert [c.arguments for c in response.tool_calls] == ['{"pattern": ', {"pattern": "x"}]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "Overloaded",
        ),
        ({"type": "message", "role": "assistant"}, "no content list"),
        ({"content": [{"type": "tool_use", "name": "grep", "input": {}}]}, "without a name or id"),
        ({"content": ["text"]}, "content[0] is not an object"),
    ],
)
def test_wrong_shapes_name_the_provider_and_show_the_body(data, problem):
    with pytest.raises(ProviderResponseError) as info:
        wire.decode_response(data)
    assert str(info.value).startswith("anthropic: unexpected response:")
    assert problem in str(info.value)
    assert "the body starts: {" in str(info.value)


def test_a_response_schema_is_one_more_tool_whose_use_is_forced():
    body = wire.encode_request(dataclasses.replace(schema_request(), tools=(READ_TOOL,)), settings("anthropic"))
    assert [t["name"] for t in body["tools"]] == ["file_read", "answer"]
    assert body["tools"][1]["input_schema"] == ANSWER.schema and body["tools"][1]["description"]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}


def test_without_structured_output_the_prompt_alone_asks_for_json():
    plain = ChatRequest(schema_request().messages, ())
    off = settings("anthropic", structured_output=False)
    assert wire.encode_request(schema_request(), off) == wire.encode_request(plain, off)
    assert wire.answer_tool(schema_request(), off) is None
    assert wire.answer_tool(schema_request(), settings("anthropic")) == ANSWER


def test_the_forced_tools_input_is_the_structured_answer_not_a_call():
    data = {"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "answer", "input": {"port": 8743, "why": "toml"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "file_read", "input": {"path": "a"}}],
            "usage": {"input_tokens": 50, "output_tokens": 9}}
    answered = wire.decode_response(data, answer="answer")
    assert answered.structured == ({"port": 8743, "why": "toml"},)
    assert [c.name for c in answered.tool_calls] == ["file_read"] and answered.text == ""
    unasked = wire.decode_response(data)  # no schema asked: every tool_use is a call
    assert unasked.structured == () and [c.name for c in unasked.tool_calls] == ["answer", "file_read"]
