"""Pure wire-format converters: provider-neutral requests to JSON bodies and JSON bodies back.

One module per wire format (`openai`, `responses`, `anthropic`, `gemini`, `ollama`), each with
``encode_request(request, settings) -> dict`` and ``decode_response(data) -> ChatResponse``;
``aggregate_stream(events) -> dict`` gathers a streamed answer into the body ``decode_response``
reads (`streams` parses the stream), and ``tool_results(body)`` reads the tool results a request
body carries back (`ToolResult`).
Nothing here does I/O or imports httpx: the converters are plain functions of plain data,
so they are tested without a socket and give the same body for the same conversation.
This module holds the helpers they share.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from ..._runtime.redact import NO_SECRETS, Redactor
from ..._runtime.surrogates import clean, clean_text
from ...errors import ProviderResponseError
from ..base import Arguments, ChatRequest, ChatResponse, Finish, ToolCall

__all__ = [
    "PREVIEW_CHARS",
    "ToolResult",
    "as_int",
    "omitted_as_zero",
    "clean",
    "clean_response",
    "clean_text",
    "assistant_turn",
    "content_text",
    "error_text",
    "finish",
    "nonempty",
    "parse_arguments",
    "preview",
    "shape_error",
    "unparsed_arguments",
]

#: How much of a body an error message shows.
PREVIEW_CHARS = 200


@dataclass(frozen=True)
class ToolResult:
    """One tool result a request body carries back to the model: the call it answers (None when
    the format gives no id), the tool's name (None when the body does not tell) and the result
    as text."""

    call_id: str | None
    name: str | None
    content: str


def preview(data: Any, limit: int = PREVIEW_CHARS, redactor: Redactor = NO_SECRETS) -> str:
    """The start of a body on one line: JSON re-serialised compactly, text with whitespace folded,
    redacted before it is cut."""
    if isinstance(data, bytes):
        text = data.decode("utf-8", "replace")
    elif isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            text = repr(data)
    text = " ".join(text.split())
    if not text:
        return "(empty body)"
    return redactor.cut(text, limit)


def shape_error(provider: str, problem: str, data: Any) -> ProviderResponseError:
    """A one-line error for JSON of the wrong shape: the provider, what is wrong, the body's start."""
    return ProviderResponseError(
        f"{provider}: unexpected response: {problem}; the body starts: {preview(data)}"
    )


def parse_arguments(raw: Any) -> Arguments:
    """Tool-call arguments as a dict; anything that is not a JSON object stays the raw string.

    A dict is kept as is, an empty string or None means no arguments, and a string is parsed
    as JSON. A string that does not parse, or parses to something other than an object, is
    returned unchanged: the engine answers it with an ``Error:`` result and the trace keeps it.
    """
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return json.dumps(raw, ensure_ascii=False)
    try:
        parsed = json.loads(raw, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return raw
    return parsed if isinstance(parsed, dict) else raw


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def clean_response(response: ChatResponse) -> ChatResponse:
    """`response` with text no UTF-8 output could hold (lone surrogates) made printable: it is
    sent back in the next request and written to every report."""
    calls = tuple(dataclasses.replace(c, name=clean_text(c.name), arguments=clean(c.arguments))
                  for c in response.tool_calls)
    return dataclasses.replace(response, text=clean_text(response.text), tool_calls=calls,
                               provider_items=tuple(clean(i) for i in response.provider_items))


def unparsed_arguments(arguments: Arguments) -> str:
    """Arguments as the JSON string an OpenAI-style API expects.

    A raw string that is JSON (an array, a number) goes back as-is. One that is not JSON at all
    (a call cut off by the token limit: `{"path": `) goes back as a JSON string holding the
    model's text: servers that parse the arguments of the conversation so far (llama.cpp, vLLM)
    refuse the whole request otherwise, and the model still sees what it wrote.
    """
    if isinstance(arguments, str):
        try:
            json.loads(arguments, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return json.dumps(arguments, ensure_ascii=False)
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def as_int(value: Any) -> int | None:
    """A token count: a whole JSON number from 0 to a 64-bit count; None when the field is missing
    or anything else (a string `"12"`, a float `12.5` or `12.0`, negative, NaN, `1e400`): what a
    provider did not report as a count is not counted, and so not priced (`prices`)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value < 2**63 else None


def omitted_as_zero(data: dict[str, Any], key: str) -> int | None:
    """`as_int` of `data[key]`, and 0 when it is absent or null: for the counts a format leaves out
    when they are 0 (Gemini's proto3 JSON, Ollama's `omitempty`, Anthropic's cache counts)."""
    return 0 if data.get(key) is None else as_int(data[key])


def assistant_turn(request: ChatRequest) -> int:
    """The index of the assistant turn a request asks for: the assistant messages so far."""
    return sum(1 for m in request.messages if m.role == "assistant")


def function_calls(raw_calls: Any, *, provider: str, data: Any, turn: int) -> tuple[ToolCall, ...]:
    """`message.tool_calls` in OpenAI's shape (Ollama's too): `[{id?, function: {name, arguments}}]`.

    A call without an id (Ollama never sends one) gets a stable one, `call_{turn}_{i}`.
    """
    if not isinstance(raw_calls, list):
        raise shape_error(provider, "message.tool_calls is not a list", data)
    calls = []
    for i, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise shape_error(provider, f"tool_calls[{i}] has no function.name", data)
        name = function["name"]
        call_id = raw.get("id")
        calls.append(ToolCall(
            id=call_id if isinstance(call_id, str) and call_id else f"call_{turn}_{i}",
            name=name,
            arguments=parse_arguments(function.get("arguments")),
        ))
    return tuple(calls)


def finish(field: str, reason: Any, *, done: frozenset[str], length: frozenset[str],
           detail: Any = None) -> Finish | None:
    """A turn's finish reason as its format's `field` gave it: `done` and `length` are the format's
    reasons for a turn that ended as turns do and for one a length limit cut short; any other
    reason is abnormal. None when the body gives none (no field, or not a string)."""
    if not isinstance(reason, str) or not reason:
        return None
    if reason in done:
        return Finish(reason, field, "done", nonempty(detail))
    return Finish(reason, field, "length" if reason in length else "abnormal", nonempty(detail))


def nonempty(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def content_text(content: Any) -> str | None:
    """A tool result's content as text: a string as is, a list of parts as the texts of the parts
    that have one joined with newlines, a missing content as ""; None for anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return None


def error_text(text: str) -> str:
    """A failed call's result in the engine's convention: starting with ``Error``."""
    return text if text.startswith("Error") else f"Error: {text}"
