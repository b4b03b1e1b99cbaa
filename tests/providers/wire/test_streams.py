"""Streamed responses read as the body one answer would have had, and the tool results a request
carries back, for every wire format, on small bodies shaped like the providers' own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replio_replay.errors import ProviderResponseError
from replio_replay.providers.base import Finish, ToolCall
from replio_replay.providers.wire import ToolResult, streams
from replio_replay.providers.wire import anthropic as anthropic_wire
from replio_replay.providers.wire import gemini as gemini_wire
from replio_replay.providers.wire import ollama as ollama_wire
from replio_replay.providers.wire import openai as openai_wire
from replio_replay.providers.wire import responses as responses_wire
from replio_replay.providers.wire.relayed import Relayed, decoded
from tests.providers.samples import after_two_calls, settings


def _sse(*events: dict[str, Any], named: bool = False) -> bytes:
    """An SSE body: one ``data:`` line per event, after an ``event:`` line naming its type when
    `named` (as Anthropic and the Responses API send them)."""
    return "".join(
        (f"event: {event['type']}\n" if named else "") + f"data: {json.dumps(event)}\n\n"
        for event in events
    ).encode()


def _ndjson(*chunks: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(c).encode() + b"\n" for c in chunks)


# --- parsing the framings -------------------------------------------------------------------


def test_sse_events_join_data_lines_skip_comments_names_and_done():
    body = (
        b": keep-alive\r\n\r\n"
        b"event: message\r\nid: 7\r\ndata: {\"a\":\r\ndata:  1}\r\n\r\n"
        b"data:{\"b\": \"x\\u2028y\"}\n\n"
        b"event: ping\n\n"
        b"data: [DONE]\n\n"
    )
    assert streams.sse_events(body) == [{"a": 1}, {"b": "x\u2028y"}]


def test_sse_events_keep_a_raw_line_separator_inside_json_and_a_last_event_without_blank_line():
    body = 'data: {"t": "a\u2028b"}\n\ndata: {"n": 2}'.encode()
    assert streams.sse_events(body) == [{"t": "a\u2028b"}, {"n": 2}]


def test_sse_data_that_is_not_json_names_the_event_and_shows_it():
    body = b'data: {"ok": true}\n\ndata: {"cut": \n\n'
    with pytest.raises(ProviderResponseError) as info:
        streams.sse_events(body, provider="anthropic")
    message = str(info.value)
    assert message.startswith("anthropic: unexpected response: event 2 of the stream is not JSON")
    assert '{"cut":' in message and "\n" not in message


def test_ndjson_lines_skip_blank_lines_and_name_a_broken_one():
    assert streams.ndjson_lines(b'{"a": 1}\n\n{"b": 2}\r\n') == [{"a": 1}, {"b": 2}]
    with pytest.raises(ProviderResponseError, match=r"^stream: .*line 2 of the stream is not JSON"):
        streams.ndjson_lines(b'{"a": 1}\n{"b": \n')


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'data: {"a": 1}\n\n', "text/event-stream; charset=utf-8", True),
        (b'{"a": 1}\n{"b": 2}\n', "application/x-ndjson", True),
        (b'data: {"a": 1}\n\n', None, True),
        (b"event: message_start\ndata: {}\n\n", None, True),
        (b": OPENROUTER PROCESSING\n\ndata: {}\n\n", "", True),
        (b'{"a": 1}\n{"b": 2}\n', None, True),
        (b'{"a": 1}\n{"b": 2}\n', "text/plain", True),
        (b'{"a": 1}', None, False),
        (b'{\n  "a": 1,\n  "b": 2\n}\n', None, False),
        (b'{"a": 1}\n{"b": 2}\n', "application/json", False),
        (b"", None, False),
    ],
)
def test_is_stream_by_content_type_else_by_the_body(body, content_type, expected):
    assert streams.is_stream(body, content_type) is expected


def test_a_body_that_is_not_a_stream_is_parsed_as_it_is():
    body = b'{"choices": [{"message": {"content": "hi"}}]}'
    assert streams.response_json("chat", body, "application/json") == json.loads(body)
    assert streams.response_json("ollama", b'{"message": {"content": "x"}}', None) == {
        "message": {"content": "x"}
    }


def test_response_json_refuses_an_unknown_format_and_a_body_that_is_not_json():
    with pytest.raises(ValueError, match="unknown wire format 'cohere'"):
        streams.response_json("cohere", b"{}", None)
    with pytest.raises(ProviderResponseError, match=r"^gemini: .*the body is not JSON"):
        streams.response_json("gemini", b"<html>502</html>", "text/html")
    assert streams.FORMATS == ("anthropic", "chat", "gemini", "ollama", "responses")


# --- chat completions -----------------------------------------------------------------------


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-9x", "object": "chat.completion.chunk", "created": 1747148049,
            "model": "gpt-4o-mini-2024-07-18", "choices": choices, "usage": None, **extra}


_CHAT_USAGE = {"prompt_tokens": 87, "completion_tokens": 26, "total_tokens": 113,
               "prompt_tokens_details": {"cached_tokens": 64}}


def _tool_delta(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> dict:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        call.update(id=call_id, type="function")
        call["function"]["name"] = name
    return {"tool_calls": [call]}


def test_chat_text_stream_with_usage_on_a_last_chunk_of_its_own():
    body = _sse(
        _chunk({"role": "assistant", "content": "", "refusal": None}),
        _chunk({"content": "The port"}),
        _chunk({"content": " is 8743."}),
        _chunk({}, "stop"),
        _chunk(usage=_CHAT_USAGE),
    ) + b"data: [DONE]\n\n"
    data = streams.response_json("chat", body, "text/event-stream; charset=utf-8")
    assert data["choices"] == [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "The port is 8743."}}]
    assert (data["id"], data["model"], data["usage"]) == ("chatcmpl-9x", "gpt-4o-mini-2024-07-18", _CHAT_USAGE)
    response = openai_wire.decode_response(data)
    assert response.text == "The port is 8743."
    assert (response.usage.prompt, response.usage.completion, response.usage.total,
            response.usage.cached) == (87, 26, 113, 64)


def test_chat_tool_call_arguments_split_over_deltas_and_two_parallel_calls():
    events = [
        _chunk({"role": "assistant", "content": None, **_tool_delta(0, "", "call_a", "file_read")}),
        _chunk(_tool_delta(0, '{"pa')),
        _chunk(_tool_delta(0, 'th": "config/')),
        _chunk(_tool_delta(0, 'server.toml"}')),
        _chunk(_tool_delta(1, "", "call_b", "grep")),
        _chunk(_tool_delta(1, '{"pattern"')),
        _chunk(_tool_delta(1, ': "port"}')),
        _chunk({}, "tool_calls"),
        _chunk(usage={"prompt_tokens": 54, "completion_tokens": 20, "total_tokens": 74}),
    ]
    data = openai_wire.aggregate_stream(events)
    message = data["choices"][0]["message"]
    assert message["content"] is None and data["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"][0] == {"id": "call_a", "type": "function", "function": {
        "name": "file_read", "arguments": '{"path": "config/server.toml"}'}}
    response = openai_wire.decode_response(data)
    assert response.text == ""
    assert response.tool_calls == (ToolCall("call_a", "file_read", {"path": "config/server.toml"}),
                                   ToolCall("call_b", "grep", {"pattern": "port"}))
    assert response.usage.tokens == 74


def test_chat_stream_without_usage_or_calls_has_no_tool_calls_key_and_null_usage():
    data = openai_wire.aggregate_stream([_chunk({"content": "ok"}, "stop")])
    assert "tool_calls" not in data["choices"][0]["message"]
    assert data["usage"] is None
    assert openai_wire.decode_response(data).usage.tokens == 0


def test_chat_stream_that_reports_an_error_raises():
    with pytest.raises(ProviderResponseError, match="the stream reported an error: overloaded"):
        openai_wire.aggregate_stream([_chunk({"content": "x"}), {"error": {"message": "overloaded"}}])


# --- responses ------------------------------------------------------------------------------


def _created() -> dict:
    return {"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-4.1-mini",
        "output": [], "usage": None}}


def _call_events(index: int, call_id: str, name: str, pieces: list[str]) -> list[dict]:
    item = {"id": f"fc_{index}", "type": "function_call", "status": "in_progress",
            "call_id": call_id, "name": name, "arguments": ""}
    events = [{"type": "response.output_item.added", "output_index": index, "item": item}]
    events += [{"type": "response.function_call_arguments.delta", "item_id": f"fc_{index}",
                "output_index": index, "delta": p} for p in pieces]
    done = {**item, "status": "completed", "arguments": "".join(pieces)}
    return events + [{"type": "response.output_item.done", "output_index": index, "item": done}]


_RESPONSES_USAGE = {"input_tokens": 120, "output_tokens": 31, "total_tokens": 151}


def test_responses_stream_returns_the_completed_response():
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Port 8743.", "annotations": []}]}
    completed = {**_created()["response"], "status": "completed", "output": [message],
                 "usage": _RESPONSES_USAGE}
    body = _sse(
        _created(),
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**message, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
         "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Port"},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": " 8743."},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": completed},
        named=True,
    )
    data = streams.response_json("responses", body, "text/event-stream")
    assert data == completed
    response = responses_wire.decode_response(data)
    assert (response.text, response.usage.tokens) == ("Port 8743.", 151)


def test_responses_two_calls_with_split_arguments():
    events = [_created(),
              *_call_events(0, "call_a", "file_read", ['{"path":', ' "config/server.toml"}']),
              *_call_events(1, "call_b", "grep", ['{"pat', 'tern": "port"}'])]
    done_items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    completed = {**_created()["response"], "status": "completed", "output": done_items,
                 "usage": _RESPONSES_USAGE}
    response = responses_wire.decode_response(
        responses_wire.aggregate_stream([*events, {"type": "response.completed", "response": completed}])
    )
    assert response.tool_calls == (ToolCall("call_a", "file_read", {"path": "config/server.toml"}),
                                   ToolCall("call_b", "grep", {"pattern": "port"}))
    assert response.usage.prompt == 120


def test_responses_stream_without_a_completed_event_is_rebuilt_from_its_items():
    events = [_created(), *_call_events(0, "call_a", "file_read", ['{"path":', ' "a"}'])]
    events += _call_events(1, "call_b", "grep", ['{"pattern": ', '"po'])[:-1]  # cut off mid-call
    data = responses_wire.aggregate_stream(events)
    assert data["id"] == "resp_1" and data["status"] == "in_progress"
    assert [item["arguments"] for item in data["output"]] == ['{"path": "a"}', '{"pattern": "po']
    calls = responses_wire.decode_response(data).tool_calls
    assert [c.arguments for c in calls] == [{"path": "a"}, '{"pattern": "po']


def test_responses_text_deltas_alone_rebuild_the_message():
    events = [_created(),
              {"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}},
              {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "Hal"},
              {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "f"}]
    assert responses_wire.decode_response(responses_wire.aggregate_stream(events)).text == "Half"
    assert events[1]["item"]["content"] == []  # the events themselves are left alone


@pytest.mark.parametrize("kind", ["response.incomplete", "response.failed"])
def test_responses_incomplete_and_failed_events_give_their_response(kind):
    final = {**_created()["response"], "status": kind.split(".")[1], "output": []}
    assert responses_wire.aggregate_stream([_created(), {"type": kind, "response": final}]) == final


def test_responses_error_event_raises():
    with pytest.raises(ProviderResponseError, match="the stream reported an error: rate limited"):
        responses_wire.aggregate_stream([_created(), {"type": "error", "code": "rate_limit",
                                                      "message": "rate limited"}])


# --- anthropic ------------------------------------------------------------------------------


def _message_start(input_tokens: int = 506) -> dict:
    return {"type": "message_start", "message": {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 5}}}


def _block(index: int, block: dict, deltas: list[dict]) -> list[dict]:
    return ([{"type": "content_block_start", "index": index, "content_block": block}]
            + [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            + [{"type": "content_block_stop", "index": index}])


def _json_deltas(*pieces: str) -> list[dict]:
    return [{"type": "input_json_delta", "partial_json": p} for p in pieces]


def _message_end(stop: str, output_tokens: int, **usage: int) -> list[dict]:
    return [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": output_tokens, **usage}},
            {"type": "message_stop"}]


def test_anthropic_text_stream_with_ping_and_usage_from_start_and_delta():
    body = _sse(
        _message_start(),
        {"type": "ping"},
        *_block(0, {"type": "text", "text": ""}, [{"type": "text_delta", "text": "Port "},
                                                  {"type": "text_delta", "text": "8743."}]),
        *_message_end("end_turn", 12, cache_read_input_tokens=400),
        named=True,
    )
    data = streams.response_json("anthropic", body, "text/event-stream; charset=utf-8")
    assert data["content"] == [{"type": "text", "text": "Port 8743."}]
    assert data["stop_reason"] == "end_turn" and data["id"] == "msg_01"
    assert data["usage"] == {"input_tokens": 506, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 400, "output_tokens": 12}
    response = anthropic_wire.decode_response(data)
    # the prompt is the uncached input and both cache counts; the cache reads are its cached part
    assert (response.text, response.usage.prompt, response.usage.completion) == ("Port 8743.", 906, 12)
    assert response.usage.cached == 400


def test_anthropic_thinking_then_two_tool_uses_with_split_and_empty_input():
    events = [
        _message_start(),
        *_block(0, {"type": "thinking", "thinking": "", "signature": ""},
                [{"type": "thinking_delta", "thinking": "Read the "},
                 {"type": "thinking_delta", "thinking": "config."},
                 {"type": "signature_delta", "signature": "EqQBCkgIAR"}]),
        *_block(1, {"type": "tool_use", "id": "toolu_a", "name": "file_read", "input": {}},
                _json_deltas("", '{"path', '": "config/', 'server.toml"}')),
        *_block(2, {"type": "tool_use", "id": "toolu_b", "name": "now", "input": {}},
                _json_deltas("")),
        *_message_end("tool_use", 153),
    ]
    data = anthropic_wire.aggregate_stream(events)
    assert data["content"][0] == {"type": "thinking", "thinking": "Read the config.",
                                  "signature": "EqQBCkgIAR"}
    assert data["content"][1]["input"] == {"path": "config/server.toml"}
    assert data["content"][2]["input"] == {}
    response = anthropic_wire.decode_response(data)
    assert response.text == ""
    assert response.tool_calls == (ToolCall("toolu_a", "file_read", {"path": "config/server.toml"}),
                                   ToolCall("toolu_b", "now", {}))
    assert response.usage.completion == 153


def test_anthropic_error_event_raises_with_its_message():
    events = [_message_start(), {"type": "error", "error": {"type": "overloaded_error",
                                                            "message": "Overloaded"}}]
    with pytest.raises(ProviderResponseError, match="the stream reported an error: Overloaded"):
        anthropic_wire.aggregate_stream(events)


# --- gemini ---------------------------------------------------------------------------------


def _gemini(parts: list[dict], finish: str | None = None, usage: dict | None = None) -> dict:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage or {"promptTokenCount": 86},
            "modelVersion": "gemini-2.5-flash", "responseId": "m91N"}


_GEMINI_USAGE = {"promptTokenCount": 86, "candidatesTokenCount": 12, "thoughtsTokenCount": 40,
                 "totalTokenCount": 138}


def test_gemini_text_chunks_merge_and_the_last_usage_and_finish_reason_win():
    body = b"".join(
        b"data: " + json.dumps(c).encode() + b"\r\n\r\n"
        for c in [_gemini([{"text": "**Checking**", "thought": True}]),
                  _gemini([{"text": "The port"}]),
                  _gemini([{"text": " is 8743."}]),
                  _gemini([{"text": "", "thoughtSignature": "c2ln"}], "STOP", _GEMINI_USAGE)]
    )
    data = streams.response_json("gemini", body, "text/event-stream")
    assert data["candidates"] == [{"content": {"role": "model", "parts": [
        {"text": "**Checking**", "thought": True},
        {"text": "The port is 8743.", "thoughtSignature": "c2ln"},
    ]}, "index": 0, "finishReason": "STOP"}]
    assert (data["usageMetadata"], data["modelVersion"]) == (_GEMINI_USAGE, "gemini-2.5-flash")
    response = gemini_wire.decode_response(data)
    assert response.text == "The port is 8743."
    assert (response.usage.prompt, response.usage.completion, response.usage.total) == (86, 52, 138)


def test_gemini_two_function_calls_keep_their_parts_and_signature():
    first = {"functionCall": {"name": "file_read", "args": {"path": "config/server.toml"}},
             "thoughtSignature": "c2ln"}
    second = {"functionCall": {"name": "grep", "args": {"pattern": "port"}}}
    data = gemini_wire.aggregate_stream([_gemini([{"text": "Let me look."}]),
                                         _gemini([first]),
                                         _gemini([second], "STOP", _GEMINI_USAGE)])
    assert data["candidates"][0]["content"]["parts"] == [{"text": "Let me look."}, first, second]
    response = gemini_wire.decode_response(data, turn=2)
    assert response.text == "Let me look."
    assert response.tool_calls == (ToolCall("call_2_0", "file_read", {"path": "config/server.toml"}),
                                   ToolCall("call_2_1", "grep", {"pattern": "port"}))
    assert response.provider_items[1]["thoughtSignature"] == "c2ln"


def test_gemini_blocked_prompt_stream_keeps_the_feedback():
    data = gemini_wire.aggregate_stream([{"promptFeedback": {"blockReason": "SAFETY"},
                                          "usageMetadata": {"promptTokenCount": 9}}])
    assert "candidates" not in data
    with pytest.raises(ProviderResponseError, match="the prompt was blocked: SAFETY"):
        gemini_wire.decode_response(data)


def test_gemini_error_chunk_raises():
    with pytest.raises(ProviderResponseError, match="the stream reported an error: quota"):
        gemini_wire.aggregate_stream([_gemini([{"text": "a"}]), {"error": {"message": "quota"}}])


# --- ollama ---------------------------------------------------------------------------------


def _ollama(message: dict | None = None, **extra: Any) -> dict:
    return {"model": "qwen3:14b", "created_at": "2025-06-09T17:58:55Z",
            "message": {"role": "assistant", "content": "", **(message or {})}, "done": False, **extra}


_OLLAMA_DONE = {"done": True, "done_reason": "stop", "total_duration": 2359567, "prompt_eval_count": 218,
                "eval_count": 306}


def test_ollama_text_stream_is_joined_with_the_last_chunk_counts():
    body = _ndjson(_ollama({"content": "The port"}), _ollama({"content": " is 8743."}),
                   _ollama(**_OLLAMA_DONE))
    data = streams.response_json("ollama", body, "application/x-ndjson")
    assert data["message"] == {"role": "assistant", "content": "The port is 8743."}
    assert data["done"] is True and data["done_reason"] == "stop"
    response = ollama_wire.decode_response(data)
    assert (response.text, response.usage.prompt, response.usage.completion) == ("The port is 8743.", 218, 306)


def test_ollama_calls_from_several_chunks_and_thinking_are_collected():
    read = {"function": {"name": "file_read", "arguments": {"path": "config/server.toml"}}}
    grep = {"function": {"index": 1, "name": "grep", "arguments": {"pattern": "port"}}}
    body = _ndjson(_ollama({"thinking": "Look at "}), _ollama({"thinking": "the file."}),
                   _ollama({"tool_calls": [read]}), _ollama({"tool_calls": [grep]}),
                   _ollama(**_OLLAMA_DONE))
    assert streams.is_stream(body, None)
    data = streams.response_json("ollama", body, None)
    assert data["message"]["thinking"] == "Look at the file."
    response = ollama_wire.decode_response(data, turn=1)
    assert response.tool_calls == (ToolCall("call_1_0", "file_read", {"path": "config/server.toml"}),
                                   ToolCall("call_1_1", "grep", {"pattern": "port"}))


def test_ollama_error_line_raises():
    with pytest.raises(ProviderResponseError, match="the stream reported an error: model .* not found"):
        ollama_wire.aggregate_stream([{"error": "model 'x' not found"}])


# --- tool results carried back --------------------------------------------------------------

_FORMATS = [openai_wire, responses_wire, anthropic_wire, gemini_wire, ollama_wire]


@pytest.mark.parametrize("wire", _FORMATS, ids=lambda w: w.PROVIDER)
def test_tool_results_of_our_own_bodies_read_back(wire):
    results = wire.tool_results(wire.encode_request(after_two_calls(), settings()))
    ids = [None, None] if wire in (gemini_wire, ollama_wire) else ["call_a", "call_b"]
    assert results == [ToolResult(ids[0], "file_read", "port = 8743"),
                       ToolResult(ids[1], "grep", "Error: no match")]


@pytest.mark.parametrize("wire", _FORMATS, ids=lambda w: w.PROVIDER)
@pytest.mark.parametrize("body", [None, [], "x", {}, {"messages": "x", "input": 3, "contents": [1]},
                                  {"messages": [None, 3, {"role": "tool", "content": {"a": 1}}]}])
def test_tool_results_skip_anything_malformed(wire, body):
    assert wire.tool_results(body) == []


def test_chat_tool_results_are_named_by_the_earlier_call_else_their_own_name():
    body = {"messages": [
        {"role": "user", "content": "What port?"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "file_read", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "a:1"},
                                                               {"type": "text", "text": "b:2"}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "port = 8743"},
        {"role": "tool", "tool_call_id": "call_9", "name": "legacy", "content": "x"},
        {"role": "tool", "content": None},
    ]}
    assert openai_wire.tool_results(body) == [
        ToolResult("call_2", "grep", "a:1\nb:2"),
        ToolResult("call_1", "file_read", "port = 8743"),
        ToolResult("call_9", "legacy", "x"),
        ToolResult(None, None, ""),
    ]


def test_responses_tool_results_take_string_or_part_outputs_named_by_their_function_call():
    body = {"model": "gpt-4.1", "input": [
        {"role": "user", "content": "What port?"},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"},
        {"type": "function_call", "call_id": "call_a", "name": "file_read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_a", "output": "port = 8743"},
        {"type": "function_call_output", "call_id": "call_x",
         "output": [{"type": "input_text", "text": "one"}, {"type": "input_image", "image_url": "u"},
                    {"type": "input_text", "text": "two"}]},
        {"type": "function_call_output", "call_id": "call_y", "output": 42},
    ]}
    assert responses_wire.tool_results(body) == [ToolResult("call_a", "file_read", "port = 8743"),
                                                 ToolResult("call_x", None, "one\ntwo")]
    assert responses_wire.tool_results({"input": "just a prompt"}) == []


def test_anthropic_tool_results_are_named_by_their_tool_use_and_errors_start_with_error():
    body = {"messages": [
        {"role": "user", "content": "What port?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_a", "name": "file_read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "grep", "input": {"pattern": "p"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a",
             "content": [{"type": "text", "text": "port ="}, {"type": "text", "text": "8743"}]},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no match", "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_c", "content": "Error: gone", "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_d"},
            {"type": "text", "text": "Go on."}]},
    ]}
    assert anthropic_wire.tool_results(body) == [
        ToolResult("toolu_a", "file_read", "port =\n8743"),
        ToolResult("toolu_b", "grep", "Error: no match"),
        ToolResult("toolu_c", None, "Error: gone"),
        ToolResult("toolu_d", None, ""),
    ]


@pytest.mark.parametrize(
    ("response", "content"),
    [
        ({"result": "port = 8743"}, "port = 8743"),
        ({"output": "port = 8743"}, "port = 8743"),
        ({"return_value": "port = 8743"}, "port = 8743"),
        ({"error": "no match"}, "Error: no match"),
        ({"error": "Error: no match"}, "Error: no match"),
        ({"result": 8743}, '{"result":8743}'),
        ({"temp_c": 21, "city": "Zürich"}, '{"temp_c":21,"city":"Zürich"}'),
        ({"result": "a", "note": "b"}, '{"result":"a","note":"b"}'),
        (None, ""),
    ],
)
def test_gemini_function_responses_unwrap_the_common_shapes_else_give_their_json(response, content):
    part = {"functionResponse": {"id": "fc-1", "name": "file_read", "response": response}}
    body = {"contents": [{"role": "user", "parts": [part]}]}
    assert gemini_wire.tool_results(body) == [ToolResult("fc-1", "file_read", content)]


def test_gemini_tool_results_keep_order_across_contents_and_skip_other_parts():
    body = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {"result": "1"}}},
                                   {"text": "and"}, "junk"]},
        {"role": "user", "parts": [{"functionResponse": {"name": "b", "response": {"output": "2"}}}]},
    ]}
    assert gemini_wire.tool_results(body) == [ToolResult(None, "a", "1"), ToolResult(None, "b", "2")]


def test_ollama_tool_results_are_named_by_tool_name_or_name_and_have_ids_only_when_given():
    body = {"messages": [
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "a", "arguments": {}}}]},
        {"role": "tool", "content": "1", "tool_name": "a"},
        {"role": "tool", "content": "2", "name": "b"},
        {"role": "tool", "content": "3", "tool_call_id": "call_9"},
    ]}
    assert ollama_wire.tool_results(body) == [ToolResult(None, "a", "1"), ToolResult(None, "b", "2"),
                                              ToolResult("call_9", None, "3")]


# --- finish reasons through a stream --------------------------------------------------------


@pytest.mark.parametrize(("fmt", "body", "finish"), [
    ("chat", _sse(_chunk({"content": ""}), _chunk({}, "content_filter")),
     Finish("content_filter", "finish_reason", "abnormal")),
    ("anthropic", _sse({"type": "message_start", "message": {"type": "message", "content": [], "usage": {}}},
                       {"type": "message_delta", "delta": {"stop_reason": "refusal"}, "usage": {"output_tokens": 3}},
                       {"type": "message_stop"}, named=True),
     Finish("refusal", "stop_reason", "abnormal")),
    ("responses", _sse({"type": "response.incomplete", "response": {
        "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}}, named=True),
     Finish("max_output_tokens", "incomplete_details.reason", "length")),
    ("gemini", _sse({"candidates": [{"content": {"role": "model", "parts": [{"text": "Lyrics:"}]}, "index": 0}]},
                    {"candidates": [{"finishReason": "RECITATION", "index": 0}]}),
     Finish("RECITATION", "finishReason", "abnormal")),
    ("ollama", _ndjson({"message": {"role": "assistant", "content": "a"}, "done": False},
                       {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "length"}),
     Finish("length", "done_reason", "length")),
])
def test_a_streamed_answer_keeps_its_last_finish_reason(fmt: str, body: bytes, finish: Finish) -> None:
    content_type = "application/x-ndjson" if fmt == "ollama" else "text/event-stream"
    exchange = Relayed(fmt, {}, 200, body, content_type)
    assert decoded(exchange, 0).finish == finish
