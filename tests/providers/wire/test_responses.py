"""The OpenAI Responses converters, on plain data shaped like recorded exchanges."""

from __future__ import annotations

import copy

import pytest

from replio_replay._runtime.jsoncanon import canonical
from replio_replay.errors import ProviderResponseError
from replio_replay.providers.base import ChatRequest, Message
from replio_replay.providers.wire import responses as wire
from tests.providers.samples import (
    ANSWER,
    READ_TOOL,
    after_two_calls,
    first_turn,
    schema_request,
    settings,
)

REASONING = {
    "id": "rs_68af3a", "type": "reasoning", "content": [],
    "summary": [{"type": "summary_text", "text": "**Finding the port**"}],
    "encrypted_content": "gAAAAABo-opaque+/=",
}


def _body(output: list, usage: dict | None = None, **extra) -> dict:
    return {"id": "resp_1", "object": "response", "status": "completed", "error": None, "model": "test-model",
            "output": output, "store": False,
            "usage": usage or {"input_tokens": 959, "output_tokens": 494,
                               "output_tokens_details": {"reasoning_tokens": 172}, "total_tokens": 1453},
            **extra}


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": f"fc_{call_id}", "type": "function_call", "status": "completed", "call_id": call_id,
            "name": name, "arguments": arguments}


def test_first_request_has_instructions_input_tools_and_no_state_kept():
    body = wire.encode_request(first_turn(), settings(max_tokens=300))
    assert list(body) == ["model", "instructions", "input", "tools", "temperature", "max_output_tokens",
                          "store", "include", "stream"]
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "What port?"}]  # the system prompt only once
    assert (body["store"], body["include"], body["stream"]) == (False, ["reasoning.encrypted_content"], False)
    assert body["max_output_tokens"] == 300
    assert "seed" not in body


def test_tools_are_flat_function_tools_with_the_schema_as_given_and_not_strict():
    assert wire.encode_tool(READ_TOOL) == {
        "type": "function", "name": "file_read", "description": "Read a text file.",
        "parameters": READ_TOOL["parameters"], "strict": False,
    }


def test_a_history_without_provider_items_sends_calls_and_outputs_with_their_call_ids():
    items = wire.encode_request(after_two_calls(), settings())["input"]
    assert items[1:] == [
        {"role": "assistant", "content": "Let me look."},
        {"type": "function_call", "call_id": "call_a", "name": "file_read",
         "arguments": '{"path": "config/server.toml"}'},
        {"type": "function_call", "call_id": "call_b", "name": "grep", "arguments": '{"pattern": "port"}'},
        {"type": "function_call_output", "call_id": "call_a", "output": "port = 8743"},
        {"type": "function_call_output", "call_id": "call_b", "output": "Error: no match"},
    ]


def test_a_reasoning_item_goes_back_byte_for_byte_in_its_place_before_its_call():
    output = [copy.deepcopy(REASONING), _call("call_9", "file_read", '{"path":"a.txt"}')]
    response = wire.decode_response(_body(output))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("call_9", "file_read", {"path": "a.txt"})]
    history = (*first_turn().messages,
               Message("assistant", response.text, response.tool_calls, provider_items=response.provider_items),
               Message("tool", "     1\thello", tool_call_id="call_9", name="file_read"))
    items = wire.encode_request(ChatRequest(history, ()), settings())["input"]
    assert canonical(items[1]) == canonical(REASONING)
    assert items[2]["type"] == "function_call" and items[2]["call_id"] == "call_9"
    assert items[3] == {"type": "function_call_output", "call_id": "call_9", "output": "     1\thello"}


def test_message_text_refusals_and_usage_total_are_read():
    output = [REASONING, {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                          "phase": "final_answer",
                          "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Port "},
                                      {"type": "output_text", "annotations": [], "text": "8743."}]}]
    response = wire.decode_response(_body(output))
    assert response.text == "Port 8743."
    assert (response.usage.prompt, response.usage.completion, response.usage.tokens) == (959, 494, 1453)
    refused = wire.decode_response(_body([{"type": "message", "role": "assistant",
                                           "content": [{"type": "refusal", "refusal": "I can't help."}]}]))
    assert refused.text == "I can't help."


@pytest.mark.parametrize(("data", "problem"), [
    ([], "expected a JSON object"),
    ({"id": "resp_1", "status": "completed"}, "no output list"),
    (_body([], status="failed", error={"code": "server_error", "message": "The model failed."}),
     "the server reported an error: The model failed."),
    ({"error": {"message": "Unsupported parameter: 'temperature'"}}, "the server reported an error: Unsupported"),
    (_body([{"type": "function_call", "name": "grep", "arguments": "{}"}]),
     r"output\[0\] is a function_call without a name or call_id"),
    (_body(["text"]), r"output\[0\] is not an object"),
])
def test_wrong_shapes_are_one_line_errors_naming_the_provider(data, problem):
    with pytest.raises(ProviderResponseError, match=rf"^openai-responses: unexpected response: {problem}"):
        wire.decode_response(data)


def test_a_response_schema_is_a_strict_json_schema_text_format():
    body = wire.encode_request(schema_request(), settings("openai-responses"))
    assert body["text"] == {"format": {"type": "json_schema", "name": "answer", "schema": ANSWER.schema, "strict": True}}
    assert "text" not in wire.encode_request(schema_request(), settings("openai-responses", structured_output=False))
    assert "text" not in wire.encode_request(first_turn(), settings("openai-responses"))
