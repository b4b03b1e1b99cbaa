"""Gemini's own wire format (``POST /v1beta/models/{model}:generateContent``), camelCase throughout.

Request: ``{systemInstruction, contents, tools: [{functionDeclarations}], toolConfig,
generationConfig: {temperature, maxOutputTokens, seed, responseMimeType, responseSchema}}``
(the last two, JSON and the schema in Gemini's subset, only for a request with a `ResponseSchema`
where structured output is on; the prompt alone asks for JSON otherwise); the system prompt only in
``systemInstruction``; ``contents`` of role ``user`` and ``model``; a model's calls as
``functionCall`` parts (object ``args``); all function responses of one model turn in ONE
``user`` content, in the order of the calls, each ``response`` an object (``{"result": ...}``,
or ``{"error": ...}`` for a failed call); parameters in Gemini's schema subset
(`geminischema`). Response: ``candidates[0].content.parts`` (``text`` and ``functionCall``;
``thought`` parts are not part of the answer), ``finishReason`` and ``usageMetadata``.

A model turn's parts are sent back as received (`ChatResponse.provider_items`), so a
``thoughtSignature`` stays on the part it came with. Calls without an ``id`` (Gemini gives
none before its newest models) get a stable one, ``call_{turn}_{i}``, which is never sent.

Streamed (``streamGenerateContent?alt=sse``), each event is a response of its own holding the
next parts: `aggregate_stream` joins them into one body. `tool_results` reads the
``functionResponse`` parts a request carries back.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import ChatRequest, ChatResponse, Finish, Message, ProviderSettings, ToolCall, Usage
from . import (
    ToolResult,
    as_int,
    error_text,
    finish,
    nonempty,
    omitted_as_zero,
    parse_arguments,
    shape_error,
)
from .geminischema import gemini_schema

__all__ = [
    "PROVIDER",
    "aggregate_stream",
    "decode_response",
    "encode_contents",
    "encode_request",
    "encode_tool",
    "tool_results",
]

PROVIDER = "gemini"

#: The finish reasons of a candidate that ended as turns do, and of one `maxOutputTokens` cut
#: short; any other (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, LANGUAGE,
#: IMAGE_SAFETY, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, ...) is abnormal.
DONE = frozenset({"STOP"})
LENGTH = frozenset({"MAX_TOKENS"})


def encode_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral tool spec as a function declaration; no ``parameters`` when it takes none (Gemini
    refuses an object schema without properties)."""
    declaration: dict[str, Any] = {"name": spec["name"], "description": spec.get("description", "")}
    parameters = gemini_schema(spec["name"], spec.get("parameters") or {"type": "object"})
    if parameters.get("properties"):
        declaration["parameters"] = parameters
    return declaration


def _model_parts(message: Message) -> list[dict[str, Any]]:
    if message.provider_items:  # as received: thought signatures stay on their parts
        return list(message.provider_items)
    parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
    parts.extend(
        {"functionCall": {"name": call.name,
                          "args": call.arguments if isinstance(call.arguments, dict) else {}}}
        for call in message.tool_calls
    )
    return parts or [{"text": ""}]


def _sent_ids(parts: list[dict[str, Any]]) -> set[str]:
    """The call ids Gemini gave (and so expects back on the responses)."""
    calls = (p.get("functionCall") for p in parts if isinstance(p, dict))
    return {c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)}


def _response_part(message: Message, names: dict[str, str], sent: set[str]) -> dict[str, Any]:
    call_id = message.tool_call_id or ""
    failed = message.content.startswith("Error")  # the engine's convention for a failed call
    response: dict[str, Any] = {
        "name": message.name or names.get(call_id, ""),
        "response": {"error" if failed else "result": message.content},
    }
    if call_id in sent:
        response["id"] = call_id
    return {"functionResponse": response}


def encode_contents(
    messages: tuple[Message, ...] | list[Message],
) -> tuple[str, list[dict[str, Any]]]:
    """(system instruction, contents): consecutive messages of one role share a content, so a
    turn's function responses travel together, in order."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    sent: set[str] = set()
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            role, parts = "model", _model_parts(m)
            names.update({c.id: c.name for c in m.tool_calls})
            sent |= _sent_ids(parts)
        elif m.role == "tool":
            role, parts = "user", [_response_part(m, names, sent)]
        else:
            role, parts = "user", [{"text": m.content}]
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return system, contents


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {base_url}/models/{model}:generateContent`` (sent with keys sorted)."""
    system, contents = encode_contents(request.messages)
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    body["contents"] = contents
    if request.tools:
        body["tools"] = [{"functionDeclarations": [encode_tool(t) for t in request.tools]}]
        body["toolConfig"] = {"functionCallingConfig": {"mode": "AUTO"}}
    generation: dict[str, Any] = {} if settings.temperature is None else {"temperature": settings.temperature}
    generation["maxOutputTokens"] = settings.max_tokens
    if settings.seed is not None:
        generation["seed"] = settings.seed + request.trial - 1
    schema = request.response_schema
    if schema is not None and settings.structured_output:
        generation["responseMimeType"] = "application/json"
        generation["responseSchema"] = gemini_schema(schema.name, schema.schema)
    body["generationConfig"] = generation
    return body


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    candidates = data.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        feedback = data.get("promptFeedback")
        blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
        raise shape_error(PROVIDER, f"no candidates (the prompt was blocked: {blocked})" if blocked
                          else "no candidates", data)
    candidate = candidates[0]
    if not isinstance(candidate, dict):
        raise shape_error(PROVIDER, "candidates[0] is not an object", data)
    return candidate


def _candidate_parts(candidate: dict[str, Any], data: dict[str, Any]) -> list[Any]:
    content = candidate.get("content")
    parts = content.get("parts", []) if isinstance(content, dict) else []
    if not isinstance(parts, list):
        raise shape_error(PROVIDER, "candidates[0].content.parts is not a list", data)
    return parts  # none at all: the model said nothing (finishReason tells why)


def _finish(candidate: dict[str, Any]) -> Finish | None:
    return finish("finishReason", candidate.get("finishReason"), done=DONE, length=LENGTH,
                  detail=candidate.get("finishMessage"))


def _usage(data: dict[str, Any]) -> Usage:
    """`usageMetadata`: the prompt's count, and the answer's and the thoughts' (both billed as output),
    each left out by Gemini's JSON when it is 0; without `usageMetadata` or its prompt count, none."""
    meta: dict[str, Any] = data["usageMetadata"] if isinstance(data.get("usageMetadata"), dict) else {}
    answer, thoughts = (omitted_as_zero(meta, key) for key in ("candidatesTokenCount", "thoughtsTokenCount"))
    prompt = as_int(meta.get("promptTokenCount"))
    output = None if prompt is None or answer is None or thoughts is None else answer + thoughts
    cached = omitted_as_zero(meta, "cachedContentTokenCount")
    return Usage(prompt=prompt, completion=output, total=as_int(meta.get("totalTokenCount")), cached=cached or None)


def decode_response(data: dict[str, Any], *, turn: int = 0) -> ChatResponse:
    """A generateContent body as a neutral response, its parts kept to be sent back; calls without
    an id get ``call_{turn}_{i}``. ProviderResponseError on the wrong shape."""
    if not isinstance(data, dict):
        raise shape_error(PROVIDER, "expected a JSON object", data)
    if "error" in data and "candidates" not in data:
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise shape_error(PROVIDER, f"the server reported an error: {message}", data)
    candidate = _candidate(data)
    parts = _candidate_parts(candidate, data)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise shape_error(PROVIDER, f"parts[{i}] is not an object", data)
        call = part.get("functionCall")
        if call is not None:
            name = call.get("name") if isinstance(call, dict) else None
            if not isinstance(name, str) or not name:
                raise shape_error(PROVIDER, f"parts[{i}] is a functionCall without a name", data)
            call_id = call.get("id")
            calls.append(ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{turn}_{len(calls)}",
                name=name,
                arguments=parse_arguments(call.get("args")),
            ))
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
    return ChatResponse(text="".join(texts), tool_calls=tuple(calls), usage=_usage(data),
                        provider_items=tuple(parts), finish=_finish(candidate))


def _text_part(part: Any) -> bool:
    """A part that is only text (a thought or not, perhaps with its signature)."""
    return (isinstance(part, dict) and isinstance(part.get("text"), str)
            and set(part) <= {"text", "thought", "thoughtSignature"})


def _add_part(parts: list[Any], part: Any) -> None:
    """The next streamed part: text joins the text part before it (of the same kind, not yet
    closed by a signature), anything else is kept as it came."""
    last = parts[-1] if parts else {}
    if (_text_part(part) and _text_part(last) and "thoughtSignature" not in last
            and bool(last.get("thought")) == bool(part.get("thought"))):
        parts[-1] = {**last, **part, "text": last["text"] + part["text"]}
    else:
        parts.append(part)


def _first_candidate(chunk: dict[str, Any]) -> dict[str, Any] | None:
    candidates = chunk.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return first if isinstance(first, dict) else None


def aggregate_stream(events: list[Any]) -> dict[str, Any]:
    """Streamed responses as the one body they stand for, for `decode_response`: the first
    candidate's parts in order, its last finish reason, the last usage and model version.
    ProviderResponseError on a chunk that is not an object or reports an error."""
    body: dict[str, Any] = {}
    candidate: dict[str, Any] | None = None
    parts: list[Any] = []
    for chunk in events:
        if not isinstance(chunk, dict):
            raise shape_error(PROVIDER, "a stream chunk is not an object", chunk)
        if "error" in chunk and "candidates" not in chunk:
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise shape_error(PROVIDER, f"the stream reported an error: {message}", chunk)
        body.update({k: chunk[k] for k in ("usageMetadata", "modelVersion", "responseId",
                                           "promptFeedback") if k in chunk})
        first = _first_candidate(chunk)
        if first is None:
            continue
        candidate = {**(candidate or {}), **{k: v for k, v in first.items() if k != "content"}}
        content = first.get("content")
        new = content.get("parts") if isinstance(content, dict) else None
        for part in new if isinstance(new, list) else []:
            _add_part(parts, part)
    if candidate is None:
        return body
    return {"candidates": [{"content": {"role": "model", "parts": parts}, **candidate}], **body}


#: A response object of one string field that stands for that string (``error``: a failure).
_WRAPPERS = ("result", "output", "return_value")


def _response_text(response: Any) -> str:
    """A function response as text: the string of a common one-field wrapper, else its JSON."""
    if response is None:
        return ""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if isinstance(value, str) and key in _WRAPPERS:
            return value
        if isinstance(value, str) and key == "error":
            return error_text(value)
    return json.dumps(response, ensure_ascii=False, separators=(",", ":"))


def tool_results(body: Any) -> list[ToolResult]:
    """The ``functionResponse`` parts of a request body's contents, in order; malformed contents
    and parts are skipped."""
    contents = body.get("contents") if isinstance(body, dict) else None
    results = []
    for content in contents if isinstance(contents, list) else []:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                results.append(ToolResult(nonempty(response.get("id")), nonempty(response.get("name")),
                                          _response_text(response.get("response"))))
    return results
