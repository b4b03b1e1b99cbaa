"""The Ollama native chat wire format (``POST /api/chat``, not streamed).

Request: ``{model, messages, tools, stream: false, options: {temperature, seed, num_predict}}``;
tools as ``{"type": "function", "function": {name, description, parameters}}``; an assistant's
calls as ``tool_calls`` with object arguments and no ids; results as ``role: "tool"``
messages carrying ``tool_name``. Response: ``message`` (text and ``tool_calls``) and the
counts ``prompt_eval_count`` / ``eval_count``. Ollama gives calls no ids, so stable ones are
made from the assistant turn and the call's position: ``call_{turn}_{i}``.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, Usage
from . import as_int, assistant_turn, function_calls, shape_error
from .openai import encode_tool  # Ollama's function tools are OpenAI's

__all__ = [
    "PROVIDER",
    "assistant_turn",
    "decode_response",
    "encode_message",
    "encode_request",
    "encode_tool",
]

PROVIDER = "ollama"


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
    if request.json_mode:
        body["format"] = "json"
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
        usage=Usage(
            prompt=as_int(data.get("prompt_eval_count")), completion=as_int(data.get("eval_count"))
        ),
    )
