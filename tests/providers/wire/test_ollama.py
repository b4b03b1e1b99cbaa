"""The Ollama /api/chat converters, on plain data."""

from __future__ import annotations

import pytest

from replio_replay.errors import ProviderResponseError
from replio_replay.providers.base import ChatRequest, Message, ToolCall
from replio_replay.providers.wire import ollama as wire
from tests.providers.samples import (
    ANSWER,
    READ_TOOL,
    after_two_calls,
    first_turn,
    schema_request,
    settings,
)


def test_body_is_never_streamed_and_carries_sampling_in_options():
    body = wire.encode_request(
        first_turn(), settings("ollama", temperature=0.3, seed=11, max_tokens=64)
    )
    assert list(body) == ["model", "messages", "tools", "stream", "options"]
    assert body["stream"] is False
    assert body["options"] == {"temperature": 0.3, "seed": 11, "num_predict": 64}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_no_seed_option_when_the_seed_is_none():
    body = wire.encode_request(
        ChatRequest((Message("user", "x"),), ()), settings("ollama", seed=None)
    )
    assert body["options"] == {"temperature": 0.0, "num_predict": 2048}
    assert "tools" not in body


def test_tool_spec_becomes_a_function_tool():
    assert wire.encode_tool(READ_TOOL) == {
        "type": "function",
        "function": {
            "name": "file_read",
            "description": "Read a text file.",
            "parameters": READ_TOOL["parameters"],
        },
    }


def test_history_sends_object_arguments_without_ids_and_results_with_the_tool_name():
    messages = wire.encode_request(after_two_calls(), settings("ollama"))["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"function": {"name": "file_read", "arguments": {"path": "config/server.toml"}}},
            {"function": {"name": "grep", "arguments": {"pattern": "port"}}},
        ],
    }
    assert messages[3] == {"role": "tool", "content": "port = 8743", "tool_name": "file_read"}
    assert messages[4] == {"role": "tool", "content": "Error: no match", "tool_name": "grep"}


def test_raw_string_arguments_go_back_as_received():
    request = ChatRequest((Message("assistant", "", (ToolCall("call_0_0", "grep", "{bad"),)),), ())
    sent = wire.encode_request(request, settings("ollama"))["messages"][0]
    assert sent["tool_calls"][0]["function"]["arguments"] == "{bad"


def _reply(message: dict) -> dict:
    return {
        "model": "qwen2.5:7b",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", **message},
        "done_reason": "stop",
        "done": True,
        "prompt_eval_count": 230,
        "eval_count": 40,
    }


def test_decode_two_calls_gets_stable_ids_from_the_turn_and_counts_tokens():
    data = _reply(
        {
            "content": "",
            "tool_calls": [
                {"function": {"name": "grep", "arguments": {"pattern": "port"}}},
                {"function": {"name": "file_read", "arguments": {"path": "a"}}},
            ],
        }
    )
    response = wire.decode_response(data, turn=2)
    assert response.tool_calls == (
        ToolCall("call_2_0", "grep", {"pattern": "port"}),
        ToolCall("call_2_1", "file_read", {"path": "a"}),
    )
    assert response.usage.tokens == 270
    assert wire.decode_response(data, turn=2) == response  # same body, same ids


def test_decode_keeps_text_with_calls_and_string_arguments_parsed_or_raw():
    data = _reply(
        {
            "content": "Looking.",
            "tool_calls": [
                {"function": {"name": "grep", "arguments": '{"pattern": "x"}'}},
                {"function": {"name": "grep", "arguments": '{"pattern": '}},
            ],
        }
    )
    response = wire.decode_response(data)
    assert response.text == "Looking."
    assert [c.arguments for c in response.tool_calls] == [{"pattern": "x"}, '{"pattern": ']


def test_assistant_turn_counts_assistant_messages():
    assert wire.assistant_turn(first_turn()) == 0
    assert wire.assistant_turn(after_two_calls()) == 1


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"error": "model 'nope' not found"}, "model 'nope' not found"),
        ({"model": "x", "done": True}, "no message object"),
        (_reply({"content": ["x"]}), "message.content is not text"),
        (_reply({"tool_calls": [{"function": {}}]}), "tool_calls[0] has no function.name"),
    ],
)
def test_wrong_shapes_name_the_provider_and_show_the_body(data, problem):
    with pytest.raises(ProviderResponseError) as info:
        wire.decode_response(data)
    assert str(info.value).startswith("ollama: unexpected response:")
    assert problem in str(info.value)
    assert "the body starts: {" in str(info.value)


def test_a_response_schema_is_ollamas_format_schema_or_json_where_structured_output_is_off():
    assert wire.encode_request(schema_request(), settings())["format"] == ANSWER.schema
    assert wire.encode_request(schema_request(), settings(structured_output=False))["format"] == "json"
    assert "format" not in wire.encode_request(ChatRequest((Message("user", "hi"),), ()), settings())
