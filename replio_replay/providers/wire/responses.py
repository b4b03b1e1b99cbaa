"""The OpenAI Responses wire format (``POST /v1/responses``, not streamed, nothing stored).

Request: ``{model, instructions, input, tools, temperature, max_output_tokens, text, store: false,
include: ["reasoning.encrypted_content"], stream: false}`` (``text.format``, a strict
``json_schema``, only for a request with a `ResponseSchema` where structured output is on; the
prompt alone asks for JSON otherwise); the system prompt only in
``instructions``; tools as ``{"type": "function", name, description, parameters, strict: false}``
(the schema as given, not made strict); ``input`` items: user and assistant messages,
``function_call`` items (JSON-string arguments) and ``function_call_output`` items carrying the
``call_id`` they answer. Response: ``output`` items (``message`` with ``output_text`` parts,
``function_call`` with ``call_id``, ``reasoning``), ``status`` (``completed``, or ``incomplete``
with ``incomplete_details.reason``) and ``usage.input_tokens`` / ``output_tokens`` /
``total_tokens``.

With ``store: false`` the server keeps nothing, so a turn's output items are sent back in the
next request as received (`ChatResponse.provider_items`): each reasoning item, with its
encrypted content, stays the same JSON object in its place before its function call.

Streamed, the answer comes as typed events (``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.function_call_arguments.delta``,
``response.output_item.done``, ``response.completed`` with the whole response): `aggregate_stream`
gives that body. `tool_results` reads the ``function_call_output`` items a request carries back.
"""

from __future__ import annotations

import copy
from typing import Any

from ..base import ChatRequest, ChatResponse, Finish, Message, ProviderSettings, ToolCall, Usage
from . import (
    ToolResult,
    as_int,
    content_text,
    finish,
    nonempty,
    parse_arguments,
    shape_error,
    unparsed_arguments,
)

__all__ = [
    "PROVIDER",
    "aggregate_stream",
    "decode_response",
    "encode_input",
    "encode_request",
    "encode_tool",
    "tool_results",
]

PROVIDER = "openai-responses"
#: What a stateless request asks to get back, so reasoning can be carried across tool calls.
INCLUDE = ("reasoning.encrypted_content",)

#: An incomplete response's reason when `max_output_tokens` cut it short; any other
#: (`content_filter`, a newer one) is abnormal, as is any status but `completed`.
LENGTH = frozenset({"max_output_tokens"})


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
    schema = request.response_schema
    if schema is not None and settings.structured_output:
        body["text"] = {"format": {"type": "json_schema", "name": schema.name, "schema": schema.schema,
                                   "strict": True}}
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


def _finish(data: dict[str, Any]) -> Finish | None:
    """Why the response ended: its status, or for an incomplete one the reason given for it."""
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if data.get("status") == "incomplete" and isinstance(reason, str) and reason:
        return finish("incomplete_details.reason", reason, done=frozenset(), length=LENGTH)
    return finish("status", data.get("status"), done=frozenset({"completed"}), length=frozenset())


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
    details = usage["input_tokens_details"] if isinstance(usage.get("input_tokens_details"), dict) else {}
    return ChatResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(
            prompt=as_int(usage.get("input_tokens")),
            completion=as_int(usage.get("output_tokens")),
            total=as_int(usage.get("total_tokens")),
            cached=as_int(details.get("cached_tokens")),
        ),
        provider_items=tuple(output),
        finish=_finish(data),
    )


#: The events that end a stream, each with the whole response.
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def _add_delta(item: Any, event: dict[str, Any]) -> None:
    """A text or arguments delta appended to the output item it belongs to."""
    delta = event.get("delta")
    if not isinstance(item, dict) or not isinstance(delta, str):
        return
    if event.get("type") == "response.function_call_arguments.delta":
        item["arguments"] = str(item.get("arguments") or "") + delta
        return
    parts = item.setdefault("content", [])
    index = event.get("content_index", 0)
    if not isinstance(parts, list) or not isinstance(index, int) or index < 0:
        return
    parts.extend({"type": "output_text", "text": ""} for _ in range(len(parts), index + 1))
    if isinstance(parts[index], dict):
        parts[index]["text"] = str(parts[index].get("text") or "") + delta


def _output(items: dict[int, Any], event: dict[str, Any]) -> None:
    """An event that adds, extends or completes an output item, applied to `items` by index."""
    kind, index = event.get("type"), event.get("output_index")
    if not isinstance(index, int):
        index = len(items)
    if kind in ("response.output_item.added", "response.output_item.done"):
        items[index] = copy.deepcopy(event.get("item"))
    elif kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
        _add_delta(items.get(index), event)


def aggregate_stream(events: list[Any]) -> dict[str, Any]:
    """Streamed events as the response body they stand for, for `decode_response`: the response
    of the completed (incomplete, failed) event, else the one created with its output rebuilt
    from the item events. ProviderResponseError on an event that is not an object or an error."""
    response: dict[str, Any] = {}
    items: dict[int, Any] = {}
    for event in events:
        if not isinstance(event, dict):
            raise shape_error(PROVIDER, "a stream event is not an object", event)
        if event.get("type") == "error":
            message = event.get("message") or event.get("error") or event.get("code")
            raise shape_error(PROVIDER, f"the stream reported an error: {message}", event)
        if isinstance(event.get("response"), dict):
            response = event["response"]
            if event.get("type") in _FINAL_EVENTS:
                break
        _output(items, event)
    rebuilt = [items[i] for i in sorted(items) if isinstance(items[i], dict)]
    if response.get("output") or not rebuilt:
        return response
    return {**response, "output": rebuilt}


def tool_results(body: Any) -> list[ToolResult]:
    """The ``function_call_output`` items of a request body's ``input``, in order, each named by
    the earlier ``function_call`` item with its ``call_id``; malformed items are skipped."""
    items = body.get("input") if isinstance(body, dict) else None
    names: dict[str, str] = {}
    results = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind, call_id = item.get("type"), nonempty(item.get("call_id"))
        if kind in ("function_call", "custom_tool_call") and call_id and nonempty(item.get("name")):
            names[call_id] = item["name"]
        content = content_text(item.get("output"))
        if kind in ("function_call_output", "custom_tool_call_output") and content is not None:
            results.append(ToolResult(call_id, names.get(call_id or ""), content))
    return results
