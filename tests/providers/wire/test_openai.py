"""The OpenAI Chat Completions converters, on plain data."""

from __future__ import annotations

import json

import pytest

from replio_replay._runtime.jsoncanon import canonical
from replio_replay.errors import ProviderResponseError
from replio_replay.providers.base import ChatRequest, Message, ToolCall
from replio_replay.providers.wire import openai as wire
from tests.providers.samples import (
    ANSWER,
    READ_TOOL,
    after_two_calls,
    first_turn,
    schema_request,
    settings,
)


def test_body_has_model_tools_sampling_and_no_stream_in_a_fixed_order():
    body = wire.encode_request(first_turn(), settings(temperature=0.2, seed=7, max_tokens=300))
    assert list(body) == [
        "model",
        "messages",
        "tools",
        "temperature",
        "seed",
        "max_tokens",
        "stream",
    ]
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What port?"},
    ]
    assert (body["temperature"], body["seed"], body["max_tokens"], body["stream"]) == (
        0.2,
        7,
        300,
        False,
    )


def test_defaults_are_temperature_zero_and_a_seed():
    body = wire.encode_request(first_turn(), settings())
    assert body["temperature"] == 0.0
    assert body["seed"] == 0


def test_no_seed_key_when_the_seed_is_none_and_no_tools_key_without_tools():
    body = wire.encode_request(ChatRequest((Message("user", "hi"),), ()), settings(seed=None))
    assert "seed" not in body
    assert "tools" not in body


def test_tool_spec_becomes_a_function_tool_with_the_schema_untouched():
    assert wire.encode_tool(READ_TOOL) == {
        "type": "function",
        "function": {
            "name": "file_read",
            "description": "Read a text file.",
            "parameters": READ_TOOL["parameters"],
        },
    }


def test_history_sends_calls_as_json_strings_and_results_as_tool_messages():
    messages = wire.encode_request(after_two_calls(), settings())["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "file_read", "arguments": '{"path": "config/server.toml"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"pattern": "port"}'},
            },
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_a", "content": "port = 8743"}
    assert messages[4] == {"role": "tool", "tool_call_id": "call_b", "content": "Error: no match"}


def test_assistant_without_text_sends_null_content_and_cut_off_arguments_as_a_json_string():
    request = ChatRequest(
        (
            Message("user", "x"),
            Message("assistant", "", (ToolCall("c1", "file_read", '{"path": "a'),)),
        ),
        (),
    )
    sent = wire.encode_request(request, settings())["messages"][1]
    assert sent["content"] is None
    assert json.loads(sent["tool_calls"][0]["function"]["arguments"]) == '{"path": "a'


def test_the_same_conversation_gives_the_same_bytes():
    assert canonical(wire.encode_request(after_two_calls(), settings())) == canonical(
        wire.encode_request(after_two_calls(), settings())
    )


def _completion(message: dict, usage: dict | None = None) -> dict:
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "tool_calls"}
        ],
    }
    if usage is not None:
        data["usage"] = usage
    return data


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_decode_one_call_with_string_arguments_and_usage_total():
    data = _completion(
        {"content": None, "tool_calls": [_call("call_1", "file_read", '{"path":"a.txt"}')]},
        {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 101},
    )
    response = wire.decode_response(data)
    assert response.text == ""
    assert response.tool_calls == (ToolCall("call_1", "file_read", {"path": "a.txt"}),)
    assert response.usage.tokens == 101


def test_decode_keeps_text_and_several_calls_in_order():
    data = _completion(
        {
            "content": "Checking both.",
            "tool_calls": [
                _call("c1", "file_read", '{"path":"a"}'),
                _call("c2", "grep", '{"pattern":"b"}'),
                _call("c3", "file_read", '{"path":"c"}'),
            ],
        }
    )
    response = wire.decode_response(data)
    assert response.text == "Checking both."
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("c1", "file_read", {"path": "a"}),
        ("c2", "grep", {"pattern": "b"}),
        ("c3", "file_read", {"path": "c"}),
    ]


def test_decode_keeps_malformed_or_non_object_arguments_as_the_raw_string():
    data = _completion(
        {
            "tool_calls": [
                _call("c1", "file_read", '{"path": "a.txt"'),
                _call("c2", "grep", '["x"]'),
                _call("c3", "grep", ""),
            ]
        }
    )
    calls = wire.decode_response(data).tool_calls
    assert calls[0].arguments == '{"path": "a.txt"'
    assert calls[1].arguments == '["x"]'
    assert calls[2].arguments == {}


def test_usage_without_total_adds_prompt_and_completion():
    data = _completion({"content": "done"}, {"prompt_tokens": 12, "completion_tokens": 3})
    usage = wire.decode_response(data).usage
    assert (usage.prompt, usage.completion, usage.total, usage.tokens) == (12, 3, None, 15)


def test_calls_without_ids_get_stable_ones_from_the_turn():
    data = _completion(
        {"tool_calls": [{"function": {"name": "grep", "arguments": {"pattern": "x"}}}]}
    )
    call = wire.decode_response(data, turn=3).tool_calls[0]
    assert (call.id, call.arguments) == ("call_3_0", {"pattern": "x"})


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"object": "list", "data": []}, "no choices[0]"),
        ({"choices": []}, "no choices[0]"),
        ({"choices": [{"text": "legacy completion"}]}, "no message"),
        (
            {"choices": [{"message": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]},
            "no function.name",
        ),
        ({"error": {"message": "model is loading", "code": 503}}, "model is loading"),
        (["not", "an", "object"], "expected a JSON object"),
    ],
)
def test_wrong_shapes_name_the_provider_and_show_the_body(data, problem):
    with pytest.raises(ProviderResponseError) as info:
        wire.decode_response(data)
    message = str(info.value)
    assert message.startswith("openai: unexpected response:")
    assert problem in message
    assert json.dumps(data, separators=(",", ":"))[:30] in message
    assert "\n" not in message


def test_errors_can_name_a_compatible_provider():
    with pytest.raises(ProviderResponseError, match=r"^llamacpp: "):
        wire.decode_response({"choices": []}, provider="llamacpp")


def test_long_bodies_are_cut_in_the_message():
    with pytest.raises(ProviderResponseError) as info:
        wire.decode_response({"unexpected": "x" * 5000})
    assert len(str(info.value)) < 400
    assert str(info.value).endswith("...")


def test_a_response_schema_is_strict_structured_output_or_json_mode_where_that_is_off():
    body = wire.encode_request(schema_request(), settings())
    assert body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER.schema, "strict": True}}
    assert list(body)[-2:] == ["response_format", "stream"]
    off = wire.encode_request(schema_request(), settings(structured_output=False))
    assert off["response_format"] == {"type": "json_object"}  # llama.cpp's preset, by default
    assert "response_format" not in wire.encode_request(first_turn(), settings())
