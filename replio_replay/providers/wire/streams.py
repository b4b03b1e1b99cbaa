"""Streamed response bodies: parsing them, and reading them as the body one answer would have had.

A client that asks for a stream (``stream: true``, Gemini's ``streamGenerateContent?alt=sse``)
gets Server-Sent Events (OpenAI, Anthropic, Gemini) or one JSON object a line (Ollama's
``/api/chat``). This module owns telling a stream from a plain body and parsing both framings;
each format's module owns gathering its events into the body its ``decode_response`` reads
(``aggregate_stream``). `response_json` does the whole of it for a recorded body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import import_module
from typing import Any

from . import shape_error

__all__ = ["FORMATS", "MODULES", "is_stream", "ndjson_lines", "response_json", "sse_events"]

#: The wire formats `response_json` reads, by the names the relay gives them.
FORMATS = ("anthropic", "chat", "gemini", "ollama", "responses")

#: Each format's converter module (its `aggregate_stream` and `PROVIDER`), imported when a body of
#: that format is read: a run reads one or two of the five.
MODULES = {"anthropic": "anthropic", "chat": "openai", "gemini": "gemini", "ollama": "ollama",
            "responses": "responses"}
_NDJSON_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl")
#: Only CR, LF and CRLF end an SSE line (`str.splitlines` would also split at U+2028, which JSON
#: text may hold as is).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _event_data(body: bytes) -> Iterator[str]:
    """The data of each event in an SSE body, its ``data:`` lines joined with newlines."""
    data: list[str] = []
    for line in _LINE_END.split(body.decode("utf-8", "replace").lstrip("\ufeff")):
        if not line:
            if data:
                yield "\n".join(data)
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":  # a comment (":...") has an empty field name; other fields say nothing
            data.append(value[1:] if value.startswith(" ") else value)
    if data:  # the last event, when the body does not end with a blank line
        yield "\n".join(data)


def sse_events(body: bytes, *, provider: str = "stream") -> list[Any]:
    """The JSON data of each event in a Server-Sent-Events body, in order (``[DONE]`` skipped).

    ProviderResponseError, in `provider`'s name, when an event's data is not JSON.
    """
    events = []
    for number, data in enumerate(_event_data(body), 1):
        if data.strip() == "[DONE]":
            continue
        try:
            events.append(json.loads(data))
        except (ValueError, RecursionError) as exc:
            raise shape_error(provider, f"event {number} of the stream is not JSON ({exc})", data) from None
    return events


def ndjson_lines(body: bytes, *, provider: str = "stream") -> list[Any]:
    """The JSON object of each non-blank line of a body (Ollama's stream), in order.

    ProviderResponseError, in `provider`'s name, when a line is not JSON.
    """
    lines = []
    for number, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            raise shape_error(provider, f"line {number} of the stream is not JSON ({exc})", line) from None
    return lines


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def _framing(body: bytes, content_type: str | None) -> str | None:
    """``"sse"``, ``"ndjson"``, or None for a body that is not a stream."""
    mime = (content_type or "").split(";")[0].strip().lower()
    if mime == "text/event-stream":
        return "sse"
    if mime in _NDJSON_TYPES:
        return "ndjson"
    if mime == "application/json" or mime.endswith("+json"):
        return None
    if body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"data:", b"event:", b":")):
        return "sse"
    lines = [line for line in body.splitlines() if line.strip()]
    several = len(lines) > 1 and _is_json_object(lines[0]) and _is_json_object(lines[-1])
    return "ndjson" if several else None


def is_stream(body: bytes, content_type: str | None) -> bool:
    """Whether a response body is streamed: said so by its content type (``text/event-stream``,
    ``application/x-ndjson``), or, without one that says, SSE lines or several JSON lines."""
    return _framing(body, content_type) is not None


def response_json(fmt: str, body: bytes, content_type: str | None) -> Any:
    """A response body as the JSON its format's ``decode_response`` reads: a stream gathered into
    the body one answer would have had, any other body parsed.

    ValueError for a format not in `FORMATS`; ProviderResponseError for a body that is not JSON
    or a stream that does not parse or reports an error.
    """
    if fmt not in MODULES:
        raise ValueError(f"unknown wire format {fmt!r}; expected one of {', '.join(FORMATS)}")
    converter = import_module(f"{__package__}.{MODULES[fmt]}")
    provider: str = converter.PROVIDER
    framing = _framing(body, content_type)
    if framing is None:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise shape_error(provider, "the body is not JSON", body) from None
    read = sse_events if framing == "sse" else ndjson_lines
    aggregated: dict[str, Any] = converter.aggregate_stream(read(body, provider=provider))
    return aggregated
