"""The Anthropic Messages wire format (``POST /v1/messages``).

Request: ``{model, max_tokens, system, messages, tools, temperature}``; the system prompt is
the top-level ``system``; tools as ``{name, description, input_schema}``; an assistant's calls
as ``tool_use`` blocks (arguments as an object); results as ``tool_result`` blocks in a user
message, consecutive results together in ONE user message. The API has no seed. Response:
``content`` blocks (``text`` and ``tool_use``) and ``usage.input_tokens`` / ``output_tokens``.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, ToolCall, Usage
from . import as_int, parse_arguments, shape_error

__all__ = [
    "API_VERSION",
    "PROVIDER",
    "decode_response",
    "encode_messages",
    "encode_request",
    "encode_tool",
]

PROVIDER = "anthropic"
#: The ``anthropic-version`` header this format is written against.
API_VERSION = "2023-06-01"


def encode_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral tool spec ``{name, description, parameters}`` as an Anthropic tool."""
    return {
        "name": spec["name"],
        "description": spec.get("description", ""),
        "input_schema": spec.get("parameters") or {"type": "object", "properties": {}},
    }


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content,
        }
        if message.content.startswith("Error"):  # the engine's convention for a failed call
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # the API refuses empty text blocks
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        # `input` is an object; arguments that did not parse go back as the raw string, as received.
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def encode_messages(
    messages: tuple[Message, ...] | list[Message],
) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, messages): system messages joined; tool results merged into user turns.

    Consecutive messages that land on the same role (tool results, or tool results and a
    following user message) become one message with their blocks in order. A message that is
    only text stays a plain string.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        plain = m.role in ("user", "assistant") and not m.tool_calls
        if out and out[-1]["role"] == role:
            previous = out[-1]
            if isinstance(previous["content"], str):
                previous["content"] = [{"type": "text", "text": previous["content"]}]
            previous["content"].extend(_blocks(m))
        elif plain:
            out.append({"role": role, "content": m.content})
        else:
            out.append({"role": role, "content": _blocks(m)})
    return system, out


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {base_url}/v1/messages`` (sent with keys sorted)."""
    system, messages = encode_messages(request.messages)
    body: dict[str, Any] = {"model": settings.model, "max_tokens": settings.max_tokens}
    if system:
        body["system"] = system
    body["messages"] = messages
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    return body


def decode_response(data: dict[str, Any]) -> ChatResponse:
    """A Messages body as a neutral response; ProviderResponseError on the wrong shape."""
    if not isinstance(data, dict):
        raise shape_error(PROVIDER, "expected a JSON object", data)
    if data.get("type") == "error" or ("error" in data and "content" not in data):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        raise shape_error(PROVIDER, f"the server reported an error: {message}", data)
    content = data.get("content")
    if not isinstance(content, list):
        raise shape_error(PROVIDER, "no content list", data)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            raise shape_error(PROVIDER, f"content[{i}] is not an object", data)
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            name, call_id = block.get("name"), block.get("id")
            if not isinstance(name, str) or not name or not isinstance(call_id, str) or not call_id:
                raise shape_error(
                    PROVIDER, f"content[{i}] is a tool_use without a name or id", data
                )
            calls.append(
                ToolCall(id=call_id, name=name, arguments=parse_arguments(block.get("input")))
            )
        # other blocks (thinking, redacted_thinking, ...) are not part of the answer
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    return ChatResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(
            prompt=as_int(usage.get("input_tokens")), completion=as_int(usage.get("output_tokens"))
        ),
    )
