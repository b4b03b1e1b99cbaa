"""The OpenAI Responses wire format (``POST /v1/responses``, not streamed, nothing stored).

Request: ``{model, instructions, input, tools, temperature, max_output_tokens, store: false,
include: ["reasoning.encrypted_content"], stream: false}``; the system prompt only in
``instructions``; tools as ``{"type": "function", name, description, parameters, strict: false}``
(the schema as given, not made strict); ``input`` items: user and assistant messages,
``function_call`` items (JSON-string arguments) and ``function_call_output`` items carrying the
``call_id`` they answer. Response: ``output`` items (``message`` with ``output_text`` parts,
``function_call`` with ``call_id``, ``reasoning``) and ``usage.input_tokens`` /
``output_tokens`` / ``total_tokens``.

With ``store: false`` the server keeps nothing, so a turn's output items are sent back in the
next request as received (`ChatResponse.provider_items`): each reasoning item, with its
encrypted content, stays the same JSON object in its place before its function call.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, ToolCall, Usage
from . import as_int, parse_arguments, shape_error, unparsed_arguments

__all__ = ["PROVIDER", "decode_response", "encode_input", "encode_request", "encode_tool"]

PROVIDER = "openai-responses"
#: What a stateless request asks to get back, so reasoning can be carried across tool calls.
INCLUDE = ("reasoning.encrypted_content",)


def encode_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral tool spec ``{name, description, parameters}`` as a Responses function tool.

    ``strict`` is false: the API makes functions strict by default, which refuses any schema
    that does not require every property and forbid all others.
    """
    return {
        "type": "function",
        "name": spec["name"],
        "description": spec.get("description", ""),
        "parameters": spec.get("parameters") or {"type": "object", "properties": {}},
        "strict": False,
    }


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    if message.provider_items:  # the output as received: reasoning items exactly, in their place
        return list(message.provider_items)
    items: list[dict[str, Any]] = []
    if message.content:
        items.append({"role": "assistant", "content": message.content})
    items.extend(
        {"type": "function_call", "call_id": call.id, "name": call.name,
         "arguments": unparsed_arguments(call.arguments)}
        for call in message.tool_calls
    )
    return items


def encode_input(messages: tuple[Message, ...] | list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(instructions, input items): system messages joined into the instructions and nowhere else."""
    instructions = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            items.extend(_assistant_items(m))
        elif m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content})
        elif m.role == "user":
            items.append({"role": "user", "content": m.content})
    return instructions, items


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {base_url}/responses`` (sent with keys sorted)."""
    instructions, items = encode_input(request.messages)
    body: dict[str, Any] = {"model": settings.model}
    if instructions:
        body["instructions"] = instructions
    body["input"] = items
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    body["max_output_tokens"] = settings.max_tokens
    body["store"] = False
    body["include"] = list(INCLUDE)
    body["stream"] = False
    return body


def _error(data: dict[str, Any]) -> str | None:
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if isinstance(error, str) and error:
        return error
    if data.get("status") == "failed":
        return "the response failed"
    return None


def _message_text(item: dict[str, Any], index: int, data: Any) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise shape_error(PROVIDER, f"output[{index}] is a message without a content list", data)
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
    return "".join(texts)


def _call(item: dict[str, Any], index: int, data: Any) -> ToolCall:
    name, call_id = item.get("name"), item.get("call_id")
    if not isinstance(name, str) or not name or not isinstance(call_id, str) or not call_id:
        raise shape_error(PROVIDER, f"output[{index}] is a function_call without a name or call_id", data)
    return ToolCall(id=call_id, name=name, arguments=parse_arguments(item.get("arguments")))


def decode_response(data: dict[str, Any]) -> ChatResponse:
    """A Responses body as a neutral response, its output items kept to be sent back; raises
    ProviderResponseError on the wrong shape or a failed response."""
    if not isinstance(data, dict):
        raise shape_error(PROVIDER, "expected a JSON object", data)
    problem = _error(data)
    if problem:
        raise shape_error(PROVIDER, f"the server reported an error: {problem}", data)
    output = data.get("output")
    if not isinstance(output, list):
        raise shape_error(PROVIDER, "no output list", data)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, item in enumerate(output):
        if not isinstance(item, dict):
            raise shape_error(PROVIDER, f"output[{i}] is not an object", data)
        kind = item.get("type")
        if kind == "message":
            texts.append(_message_text(item, i, data))
        elif kind == "function_call":
            calls.append(_call(item, i, data))
        # reasoning and any other item are not part of the answer; they go back as received
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    return ChatResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(
            prompt=as_int(usage.get("input_tokens")),
            completion=as_int(usage.get("output_tokens")),
            total=as_int(usage.get("total_tokens")),
        ),
        provider_items=tuple(output),
    )
