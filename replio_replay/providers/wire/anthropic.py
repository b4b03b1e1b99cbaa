"""The Anthropic Messages wire format (``POST /v1/messages``).

Request: ``{model, max_tokens, system, messages, tools, temperature}``; the system prompt is
the top-level ``system``; tools as ``{name, description, input_schema}``; an assistant's calls
as ``tool_use`` blocks (arguments as an object); results as ``tool_result`` blocks in a user
message, consecutive results together in ONE user message. The API has no seed. Response:
``content`` blocks (``text`` and ``tool_use``), ``stop_reason`` and ``usage.input_tokens`` /
``output_tokens``.

Structured output is a tool: a request with a `ResponseSchema` (where structured output is on)
offers one more tool, named for the schema, with it as ``input_schema``, and forces its use
(``tool_choice: {"type": "tool", name}``); the input of that call is the answer
(`ChatResponse.structured`), not a call to run.

Streamed, the message comes as events: ``message_start`` (the message, its input tokens),
``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` per block (a call's
input as pieces of JSON text), ``message_delta`` (stop reason, output tokens), ``message_stop``:
`aggregate_stream` rebuilds the message. `tool_results` reads the ``tool_result`` blocks a
request carries back.
"""

from __future__ import annotations

from typing import Any

from ..base import (
    ChatRequest,
    ChatResponse,
    Message,
    ProviderSettings,
    ResponseSchema,
    ToolCall,
    Usage,
)
from . import (
    ToolResult,
    as_int,
    content_text,
    error_text,
    finish,
    nonempty,
    omitted_as_zero,
    parse_arguments,
    shape_error,
)

__all__ = [
    "API_VERSION",
    "PROVIDER",
    "aggregate_stream",
    "answer_tool",
    "decode_response",
    "encode_messages",
    "encode_request",
    "encode_tool",
    "tool_results",
]

PROVIDER = "anthropic"
#: The ``anthropic-version`` header this format is written against.
API_VERSION = "2023-06-01"
#: The description of the tool a structured answer is given through.
_ANSWER_TOOL = "Give your answer: call this tool once, its input the JSON object asked for."

#: The stop reasons of a turn that ended as turns do (`pause_turn`: a server tool's loop paused,
#: to be continued), and of one a length limit cut short (the response's `max_tokens`, or the
#: context window); any other (`refusal`, a newer one) is abnormal.
DONE = frozenset({"end_turn", "tool_use", "stop_sequence", "pause_turn"})
LENGTH = frozenset({"max_tokens", "model_context_window_exceeded"})


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
    tools = [encode_tool(t) for t in request.tools]
    schema = answer_tool(request, settings)
    if schema is not None:  # structured output: one tool whose input is the answer, its use forced
        tools.append({"name": schema.name, "description": _ANSWER_TOOL, "input_schema": schema.schema})
        body["tool_choice"] = {"type": "tool", "name": schema.name}
    if tools:
        body["tools"] = tools
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    return body


def answer_tool(request: ChatRequest, settings: ProviderSettings) -> ResponseSchema | None:
    """The schema whose tool the model is made to call for its answer: the request's
    `response_schema` where structured output is on (the API has no other), else None."""
    return request.response_schema if settings.structured_output else None


def decode_response(data: dict[str, Any], *, answer: str | None = None) -> ChatResponse:
    """A Messages body as a neutral response; ProviderResponseError on the wrong shape. A call of
    the tool named `answer` (`answer_tool`'s) is no call but the answer: its input is `structured`."""
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
    structured: list[Any] = []
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
            if name == answer:
                structured.append(block.get("input"))
                continue
            calls.append(
                ToolCall(id=call_id, name=name, arguments=parse_arguments(block.get("input")))
            )
        # other blocks (thinking, redacted_thinking, ...) are not part of the answer
    return ChatResponse(text="".join(texts), tool_calls=tuple(calls), structured=tuple(structured), usage=_usage(data),
                        finish=finish("stop_reason", data.get("stop_reason"), done=DONE, length=LENGTH))


def _usage(data: dict[str, Any]) -> Usage:
    """`usage`: `input_tokens` are the prompt tokens not read from or written to the prompt cache, so
    the prompt is those and both cache counts (when there), of which the cache reads are `cached`
    (a cache write is priced at the input rate); a cache count that is there but no count leaves the
    prompt unknown."""
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    read, written = (omitted_as_zero(usage, key) for key in ("cache_read_input_tokens", "cache_creation_input_tokens"))
    uncached = as_int(usage.get("input_tokens"))
    prompt = None if uncached is None or read is None or written is None else uncached + read + written
    return Usage(prompt=prompt, completion=as_int(usage.get("output_tokens")), cached=read or None)


#: The block field each text-like delta extends (an ``input_json_delta`` is gathered apart).
_DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


def _add_delta(blocks: dict[int, Any], inputs: dict[int, str], event: dict[str, Any]) -> None:
    """A ``content_block_delta``: text appended to its block's field, JSON text to its input."""
    index, delta = event.get("index"), event.get("delta")
    if not isinstance(index, int) or not isinstance(blocks.get(index), dict) or not isinstance(delta, dict):
        return
    kind = delta.get("type")
    if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        inputs[index] = inputs.get(index, "") + delta["partial_json"]
    elif kind in _DELTA_FIELDS and isinstance(delta.get(_DELTA_FIELDS[kind]), str):
        field = _DELTA_FIELDS[kind]
        blocks[index][field] = str(blocks[index].get(field) or "") + delta[field]


def _merge_delta(message: dict[str, Any], event: dict[str, Any]) -> None:
    """A ``message_delta``: its fields (stop reason) set, its (cumulative) token counts merged."""
    if isinstance(event.get("delta"), dict):
        message.update(event["delta"])
    if isinstance(event.get("usage"), dict):
        counts = {k: v for k, v in event["usage"].items() if v is not None}
        message["usage"] = {**(message.get("usage") or {}), **counts}


def _error_event(event: dict[str, Any]) -> str:
    error = event.get("error")
    return str(error.get("message") or error) if isinstance(error, dict) else str(error)


def aggregate_stream(events: list[Any]) -> dict[str, Any]:
    """Streamed events as the message they stand for, for `decode_response`; a call's input is
    its JSON text parsed (none: ``{}``). ProviderResponseError on an error event or a non-object."""
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": [], "usage": {}}
    blocks: dict[int, Any] = {}
    inputs: dict[int, str] = {}
    for event in events:
        if not isinstance(event, dict):
            raise shape_error(PROVIDER, "a stream event is not an object", event)
        kind = event.get("type")
        if kind == "error":
            raise shape_error(PROVIDER, f"the stream reported an error: {_error_event(event)}", event)
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = {**event["message"], "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            index = event.get("index")
            blocks[index if isinstance(index, int) else len(blocks)] = dict(event["content_block"])
        elif kind == "content_block_delta":
            _add_delta(blocks, inputs, event)
        elif kind == "message_delta":
            _merge_delta(message, event)
    for index, text in inputs.items():
        blocks[index]["input"] = parse_arguments(text)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _result(block: dict[str, Any], names: dict[str, str]) -> ToolResult | None:
    """A ``tool_result`` block as a result named by its call; an error's text starts ``Error``."""
    content = content_text(block.get("content"))
    if content is None:
        return None
    call_id = nonempty(block.get("tool_use_id"))
    if block.get("is_error") is True:
        content = error_text(content)
    return ToolResult(call_id, names.get(call_id or ""), content)


def tool_results(body: Any) -> list[ToolResult]:
    """The ``tool_result`` blocks of a request body's messages, in order, each named by the earlier
    ``tool_use`` block with its id; malformed messages and blocks are skipped."""
    messages = body.get("messages") if isinstance(body, dict) else None
    names: dict[str, str] = {}
    results = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and nonempty(block.get("id")) and nonempty(block.get("name")):
                names[block["id"]] = block["name"]
            result = _result(block, names) if block.get("type") == "tool_result" else None
            if result is not None:
                results.append(result)
    return results
