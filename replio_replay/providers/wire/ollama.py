"""The Ollama native chat wire format (``POST /api/chat``, not streamed).

Request: ``{model, messages, tools, stream: false, format, options: {temperature, seed,
num_predict}}`` (``format``, a JSON schema or ``"json"`` where structured output is off, only for a
request with a `ResponseSchema`);
tools as ``{"type": "function", "function": {name, description, parameters}}``; an assistant's
calls as ``tool_calls`` with object arguments and no ids; results as ``role: "tool"``
messages carrying ``tool_name``. Response: ``message`` (text and ``tool_calls``), ``done_reason``
and the counts ``prompt_eval_count`` / ``eval_count``. Ollama gives calls no ids, so stable ones are
made from the assistant turn and the call's position: ``call_{turn}_{i}``.

Streamed, the answer comes as one JSON object a line (NDJSON), each with the next piece of
``message``, the last (``done: true``) with the counts: `aggregate_stream` joins them into one
body. `tool_results` reads the ``role: "tool"`` messages a request carries back.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, Usage
from . import (
    ToolResult,
    as_int,
    assistant_turn,
    content_text,
    finish,
    function_calls,
    nonempty,
    omitted_as_zero,
    shape_error,
)
from .openai import encode_tool  # Ollama's function tools are OpenAI's

__all__ = [
    "PROVIDER",
    "aggregate_stream",
    "assistant_turn",
    "decode_response",
    "encode_message",
    "encode_request",
    "encode_tool",
    "tool_results",
]

PROVIDER = "ollama"

#: The done reasons of a turn that ended as turns do (with calls too), and of one `num_predict`
#: cut short; any other is abnormal.
DONE = frozenset({"stop"})
LENGTH = frozenset({"length"})


def encode_message(message: Message) -> dict[str, Any]:
    """One neutral message as an Ollama chat message (no ids: results carry the tool's name)."""
    if message.role == "tool":
        out: dict[str, Any] = {"role": "tool", "content": message.content}
        if message.name:
            out["tool_name"] = message.name
        return out
    out = {"role": message.role, "content": message.content}
    if message.tool_calls:
        # Arguments are an object; a raw string that did not parse goes back as received.
        out["tool_calls"] = [
            {"function": {"name": call.name, "arguments": call.arguments}}
            for call in message.tool_calls
        ]
    return out


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {host}/api/chat``, never streamed (sent with keys sorted)."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [encode_message(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    body["stream"] = False
    if request.response_schema is not None:
        body["format"] = request.response_schema.schema if settings.structured_output else "json"
    options: dict[str, Any] = {} if settings.temperature is None else {"temperature": settings.temperature}
    if settings.seed is not None:
        options["seed"] = settings.seed + request.trial - 1
    options["num_predict"] = settings.max_tokens
    body["options"] = options
    return body


def decode_response(data: dict[str, Any], *, turn: int = 0) -> ChatResponse:
    """An ``/api/chat`` body as a neutral response; calls get ids ``call_{turn}_{i}``."""
    if not isinstance(data, dict):
        raise shape_error(PROVIDER, "expected a JSON object", data)
    message = data.get("message")
    if not isinstance(message, dict):
        if "error" in data:
            raise shape_error(PROVIDER, f"the server reported an error: {data['error']}", data)
        raise shape_error(PROVIDER, "no message object", data)
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise shape_error(PROVIDER, "message.content is not text", data)
    calls = function_calls(message.get("tool_calls") or [], provider=PROVIDER, data=data, turn=turn)
    return ChatResponse(
        text=text,
        tool_calls=calls,
        # Ollama leaves `prompt_eval_count` out when it is 0 (the whole prompt came from its cache);
        # `eval_count` it always sends for an answer, which is at least one token.
        usage=Usage(prompt=omitted_as_zero(data, "prompt_eval_count"), completion=as_int(data.get("eval_count"))),
        finish=finish("done_reason", data.get("done_reason"), done=DONE, length=LENGTH),
    )


def _add_message(message: dict[str, Any], piece: Any) -> None:
    """One chunk's `message`: its calls kept, its text fields (content, thinking) appended."""
    if not isinstance(piece, dict):
        return
    for key, value in piece.items():
        if key == "tool_calls" and isinstance(value, list):
            message.setdefault("tool_calls", []).extend(value)
        elif key != "role" and isinstance(value, str):
            message[key] = message.get(key, "") + value


def aggregate_stream(events: list[Any]) -> dict[str, Any]:
    """Streamed chunks as the ``/api/chat`` body they stand for, for `decode_response`: the text
    joined, the calls of every chunk, the last chunk's counts. ProviderResponseError on a chunk
    that is not an object or reports an error."""
    body: dict[str, Any] = {}
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    for chunk in events:
        if not isinstance(chunk, dict):
            raise shape_error(PROVIDER, "a stream chunk is not an object", chunk)
        if chunk.get("error") is not None:
            raise shape_error(PROVIDER, f"the stream reported an error: {chunk['error']}", chunk)
        body.update({k: v for k, v in chunk.items() if k != "message"})
        _add_message(message, chunk.get("message"))
    return {**body, "message": message}


def tool_results(body: Any) -> list[ToolResult]:
    """The ``role: "tool"`` messages of a request body, in order, named by their ``tool_name``
    (or ``name``); ids only where a ``tool_call_id`` is given. Malformed messages are skipped."""
    messages = body.get("messages") if isinstance(body, dict) else None
    results = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        content = content_text(message.get("content"))
        if content is not None:
            name = nonempty(message.get("tool_name")) or nonempty(message.get("name"))
            results.append(ToolResult(nonempty(message.get("tool_call_id")), name, content))
    return results
