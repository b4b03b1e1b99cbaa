"""The OpenAI Chat Completions wire format (also spoken by vLLM, llama.cpp, LM Studio, Ollama's /v1).

Request: ``{model, messages, tools, temperature, seed, max_tokens, response_format, stream: false}``
(``response_format`` only for a request with a `ResponseSchema`: ``json_schema``, strict, or
``json_object`` where structured output is off); tools as
``{"type": "function", "function": {name, description, parameters}}``; an assistant's calls as
``tool_calls`` with JSON-string arguments; results as ``role: "tool"`` messages with
``tool_call_id``. Response: ``choices[0].message`` (text and ``tool_calls``), its
``finish_reason`` and ``usage``.

Streamed (``stream: true``), the answer comes as ``chat.completion.chunk`` objects whose
``choices[0].delta`` carry pieces of the text and of each call (keyed by ``index``), with the
usage on a last chunk of its own (``stream_options.include_usage``): `aggregate_stream` gathers
them into the body `decode_response` reads. `tool_results` reads the ``role: "tool"`` messages
a request carries back.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, ResponseSchema, Usage
from . import (
    ToolResult,
    as_int,
    content_text,
    finish,
    function_calls,
    nonempty,
    shape_error,
    unparsed_arguments,
)

__all__ = [
    "PROVIDER",
    "aggregate_stream",
    "decode_response",
    "encode_message",
    "encode_request",
    "encode_tool",
    "tool_results",
]

PROVIDER = "openai"

#: The finish reasons of a turn that ended as turns do (`function_call`: the legacy name for a
#: call), and of one a length limit cut short (Mistral says `model_length` for its context);
#: any other (`content_filter`, a server's own) is abnormal.
DONE = frozenset({"stop", "tool_calls", "function_call"})
LENGTH = frozenset({"length", "model_length"})


def encode_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral tool spec ``{name, description, parameters}`` as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": spec["name"],
            "description": spec.get("description", ""),
            "parameters": spec.get("parameters") or {"type": "object", "properties": {}},
        },
    }


def encode_message(message: Message) -> dict[str, Any]:
    """One neutral message as an OpenAI chat message."""
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": unparsed_arguments(call.arguments),
                    },
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _response_format(schema: ResponseSchema, structured: bool) -> dict[str, Any]:
    """The ``response_format`` asking for `schema`: strict structured output, else JSON mode
    (``json_object``: any one object, which llama.cpp's server and most compatible ones take)."""
    if not structured:
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema, "strict": True}}


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {base_url}/chat/completions`` (sent with keys sorted)."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [encode_message(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.seed is not None:
        body["seed"] = settings.seed + request.trial - 1
    body["max_tokens"] = settings.max_tokens
    if request.response_schema is not None:
        body["response_format"] = _response_format(request.response_schema, settings.structured_output)
    body["stream"] = False
    return body


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some compatible servers answer with content parts
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    raise TypeError(type(content).__name__)


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def decode_response(
    data: dict[str, Any], *, turn: int = 0, provider: str = PROVIDER
) -> ChatResponse:
    """A chat-completion body as a neutral response; ProviderResponseError on the wrong shape.

    `turn` only names calls that come without an id (``call_{turn}_{i}``), which some
    compatible servers omit; `provider` is the name errors give (``llamacpp`` speaks this too).
    """
    if not isinstance(data, dict):
        raise shape_error(provider, "expected a JSON object", data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if "error" in data:
            raise shape_error(
                provider, f"the server reported an error: {_error_message(data['error'])}", data
            )
        raise shape_error(provider, "no choices[0]", data)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise shape_error(provider, "choices[0] has no message object", data)
    try:
        text = _text(message.get("content"))
    except TypeError as exc:
        raise shape_error(provider, f"message.content is a {exc}, not text", data) from None
    calls = function_calls(message.get("tool_calls") or [], provider=provider, data=data, turn=turn)
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    return ChatResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(
            prompt=as_int(usage.get("prompt_tokens")),
            completion=as_int(usage.get("completion_tokens")),
            total=as_int(usage.get("total_tokens")),
            cached=as_int(details.get("cached_tokens")),
        ),
        finish=finish("finish_reason", choices[0].get("finish_reason"), done=DONE, length=LENGTH),
    )


def _add_call(calls: dict[Any, dict[str, Any]], raw: Any) -> None:
    """One `delta.tool_calls` entry: id and name set once, arguments appended (keyed by `index`,
    else by id, else the last call: a few compatible servers send no index)."""
    if not isinstance(raw, dict):
        return
    key = raw.get("index")
    if not isinstance(key, int):
        key = nonempty(raw.get("id")) or (next(reversed(calls)) if calls else 0)
    call = calls.setdefault(key, {"type": "function", "function": {"name": "", "arguments": ""}})
    if "id" not in call and nonempty(raw.get("id")):
        call["id"] = raw["id"]
    function = raw.get("function")
    if not isinstance(function, dict):
        function = {}
    if not call["function"]["name"] and nonempty(function.get("name")):
        call["function"]["name"] = function["name"]
    if isinstance(function.get("arguments"), str):
        call["function"]["arguments"] += function["arguments"]


def _add_delta(message: dict[str, Any], calls: dict[Any, dict[str, Any]], delta: Any) -> None:
    """One chunk's `delta`: its calls, and every text field (content, refusal, reasoning) appended."""
    if not isinstance(delta, dict):
        return
    for key, value in delta.items():
        if key == "tool_calls" and isinstance(value, list):
            for raw in value:
                _add_call(calls, raw)
        elif key != "role" and isinstance(value, str):
            message[key] = (message.get(key) or "") + value


def aggregate_stream(events: list[Any]) -> dict[str, Any]:
    """Streamed chunks as the chat-completion body they stand for (the first choice only), for
    `decode_response`; ProviderResponseError on a chunk that is not an object or reports an error."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[Any, dict[str, Any]] = {}
    body: dict[str, Any] = {"object": "chat.completion"}
    reason, usage = None, None
    for chunk in events:
        if not isinstance(chunk, dict):
            raise shape_error(PROVIDER, "a stream chunk is not an object", chunk)
        if chunk.get("error") is not None:
            raise shape_error(
                PROVIDER, f"the stream reported an error: {_error_message(chunk['error'])}", chunk
            )
        body.update({k: chunk[k] for k in ("id", "created", "model") if k in chunk and k not in body})
        usage = chunk["usage"] if isinstance(chunk.get("usage"), dict) else usage
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                _add_delta(message, calls, choice.get("delta"))
                reason = choice.get("finish_reason") or reason
    if calls:
        message["tool_calls"] = list(calls.values())
    body["choices"] = [{"index": 0, "message": message, "finish_reason": reason}]
    body["usage"] = usage
    return body


def _call_names(raw_calls: Any) -> dict[str, str]:
    """An assistant message's `tool_calls` as {id: function name}."""
    names = {}
    for call in raw_calls if isinstance(raw_calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and nonempty(call.get("id")) and nonempty(function.get("name")):
            names[call["id"]] = function["name"]
    return names


def tool_results(body: Any) -> list[ToolResult]:
    """The ``role: "tool"`` messages of a chat request body, in order, each named by the earlier
    assistant call it answers (else by its own ``name``); malformed messages are skipped."""
    messages = body.get("messages") if isinstance(body, dict) else None
    names: dict[str, str] = {}
    results = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            names.update(_call_names(message.get("tool_calls")))
        content = content_text(message.get("content"))
        if message.get("role") != "tool" or content is None:
            continue
        call_id = nonempty(message.get("tool_call_id"))
        name = names.get(call_id or "") or nonempty(message.get("name"))
        results.append(ToolResult(call_id, name, content))
    return results
