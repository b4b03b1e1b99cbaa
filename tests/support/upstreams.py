"""Fake model APIs for the real-SDK agents (`tests/support/real_agents`): `LLMServer` handlers that
answer in each provider's wire format as its API does, stateless, from the conversation in the
request.

Each plays one plan: the user's latest message asks for the weather in a city (or a sum), so the
model calls `get_weather` (or `add`); once the request carries that call's result back, the model
answers with text that quotes the result word for word, so a test can see it went back. Like the
real APIs, a request without the expected key (`Authorization: Bearer KEY`; for Anthropic also
`x-api-key: KEY`) gets a 401, and one for another model than `model` a 404.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.support.llm_server import Reply, Seen

__all__ = ["anthropic_messages", "chat_completions", "final_text", "responses_api"]

Handler = Callable[[Seen], Reply]
#: A model's turn: a call (tool name, arguments), or its final text.
Turn = tuple[str, dict[str, Any]] | str


def final_text(result: str) -> str:
    """The model's answer once it has `result`: it quotes it."""
    return f"The tool said: {result}"


def _turn(user: str, results: list[str]) -> Turn:
    """What the model does next for the user's latest message, given the tool results since (one
    that asks to keep checking is never answered: the model calls the tool again and again)."""
    if results and not user.lower().startswith("keep checking"):
        return final_text(results[-1])
    if found := re.search(r"(\d+) \+ (\d+)", user):
        return "add", {"a": int(found[1]), "b": int(found[2])}
    if found := re.search(r"\bin ([A-Z][a-z]+)", user):
        return "get_weather", {"city": found[1]}
    return "I can only tell the weather or add numbers."


def _text(content: Any) -> str:
    """A message's text: its string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _refused(seen: Seen, key: str, model: str, *, x_api_key: bool = False) -> Reply | None:
    """A 401 for a request without the key (a bearer token; Anthropic's also as `x-api-key`), a 404
    for another model (as the APIs answer); None if fine."""
    if seen.headers.get("authorization") != f"Bearer {key}" and not (x_api_key and seen.headers.get("x-api-key") == key):
        return Reply(401, json={"error": {"type": "authentication_error", "message": "Incorrect API key provided"}})
    if seen.json().get("model") != model:
        return Reply(404, json={"error": {"type": "not_found_error", "message": f"no model {seen.json().get('model')}"}})
    return None


def _sse(events: list[Any]) -> Reply:
    """A Server-Sent-Events body of `events` ending in `[DONE]`, as OpenAI streams."""
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return Reply(body=body.encode(), headers={"content-type": "text/event-stream; charset=utf-8"})


def chat_completions(key: str, *, model: str = "test-model", stream: bool = False) -> Handler:
    """OpenAI Chat Completions; a request with `stream: true` gets chunks (`stream=True` makes the
    handler insist on it), usage in a last chunk when `stream_options.include_usage` asks."""

    def handle(seen: Seen) -> Reply:
        if (refused := _refused(seen, key, model)) is not None:
            return refused
        body = seen.json()
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        results = [_text(m["content"]) for m in messages[last_user + 1:] if m["role"] == "tool"]
        n = sum(1 for m in messages if m["role"] == "assistant")
        turn = _turn(_text(messages[last_user]["content"]), results)
        usage = {"prompt_tokens": 40 + 10 * n, "completion_tokens": 7, "total_tokens": 47 + 10 * n}
        if stream and body.get("stream") is not True:
            return Reply(400, json={"error": {"message": "this test's model only streams"}})
        if body.get("stream") is True:
            return _chat_stream(turn, n, model, usage if (body.get("stream_options") or {}).get("include_usage")
                                else None)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(turn, str):
            message["content"] = turn
        else:
            message["tool_calls"] = [{"id": f"call_{n}", "type": "function",
                                      "function": {"name": turn[0], "arguments": json.dumps(turn[1])}}]
        return Reply(json={
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n, "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "stop" if isinstance(turn, str) else "tool_calls"}],
            "usage": usage, "system_fingerprint": "fp_test"})

    return handle


def _chat_stream(turn: Turn, n: int, model: str, usage: dict[str, int] | None) -> Reply:
    """The chunks OpenAI streams for `turn`: the role, the text or the call in pieces (the
    arguments split across chunks), the finish reason, then the usage chunk with no choices."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1700000000 + n, "model": model,
                "system_fingerprint": "fp_test",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    if isinstance(turn, str):
        middle = len(turn) // 2
        chunks = [chunk({"role": "assistant", "content": "", "refusal": None}),
                  chunk({"content": turn[:middle]}), chunk({"content": turn[middle:]}), chunk({}, "stop")]
    else:
        arguments = json.dumps(turn[1])
        cut = arguments.index(":") + 1
        chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [
                      {"index": 0, "id": f"call_{n}", "type": "function",
                       "function": {"name": turn[0], "arguments": ""}}]}),
                  chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[:cut]}}]}),
                  chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[cut:]}}]}),
                  chunk({}, "tool_calls")]
    if usage is not None:
        chunks.append({**chunk({}), "choices": [], "usage": usage})
    return _sse(chunks)


def responses_api(key: str, *, model: str = "test-model") -> Handler:
    """OpenAI Responses (not streamed): a `function_call` item, or a `message` with `output_text`."""

    def handle(seen: Seen) -> Reply:
        if (refused := _refused(seen, key, model)) is not None:
            return refused
        body = seen.json()
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
        results = [_text(i["output"]) for i in items[last_user + 1:] if i.get("type") == "function_call_output"]
        n = sum(1 for i in items if i.get("type") == "function_call")
        turn = _turn(_text(items[last_user]["content"]), results)
        if isinstance(turn, str):
            output = [{"id": f"msg_{n}", "type": "message", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": turn}]}]
        else:
            output = [{"id": f"fc_{n}", "type": "function_call", "status": "completed", "call_id": f"call_{n}",
                       "name": turn[0], "arguments": json.dumps(turn[1])}]
        return Reply(json={
            "id": f"resp_{n}", "object": "response", "created_at": 1700000000 + n, "status": "completed",
            "error": None, "incomplete_details": None, "instructions": body.get("instructions"), "model": model,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools", []),
            "store": body.get("store", True), "temperature": 1.0, "top_p": 1.0, "text": {"format": {"type": "text"}},
            "usage": {"input_tokens": 60 + 10 * n, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 69 + 10 * n}})

    return handle


def anthropic_messages(key: str, *, model: str = "claude-test") -> Handler:
    """Anthropic Messages (not streamed): a text block and a `tool_use` block (stop reason
    `tool_use`), or the answer's text (`end_turn`)."""

    def handle(seen: Seen) -> Reply:
        if (refused := _refused(seen, key, model, x_api_key=True)) is not None:
            return refused
        if "anthropic-version" not in seen.headers:
            return Reply(400, json={"type": "error", "error": {"type": "invalid_request_error",
                                                              "message": "anthropic-version: header is required"}})
        messages = seen.json()["messages"]

        def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
            content = message["content"]
            return [{"type": "text", "text": content}] if isinstance(content, str) else content

        asked = [i for i, m in enumerate(messages)
                 if m["role"] == "user" and not any(b.get("type") == "tool_result" for b in blocks(m))]
        last_user = asked[-1]
        results = [_text(b["content"]) if isinstance(b["content"], list) else b["content"]
                   for m in messages[last_user + 1:] for b in blocks(m) if b.get("type") == "tool_result"]
        n = sum(1 for m in messages if m["role"] == "assistant")
        turn = _turn(_text(blocks(messages[last_user])), results)
        if isinstance(turn, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": turn}]
        else:
            content = [{"type": "text", "text": "Let me look that up."},
                       {"type": "tool_use", "id": f"toolu_{n}", "name": turn[0], "input": turn[1]}]
        return Reply(json={
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "end_turn" if isinstance(turn, str) else "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 80 + 10 * n, "output_tokens": 11, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}})

    return handle
