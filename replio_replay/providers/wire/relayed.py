"""What an agent's SDK sent through the relay, read back (pure): which wire format a path speaks, and
each exchange's model turn (its text, tool calls and usage) and the tool results it carried back.

The relay (`providers.relay`) tells the format by the request's path, as the SDKs build them:
``.../chat/completions`` (OpenAI Chat Completions, and every compatible SDK), ``.../responses``
(OpenAI Responses), ``.../messages`` (Anthropic), ``.../models/MODEL:generateContent`` and
``:streamGenerateContent`` (Gemini), ``.../api/chat`` (Ollama). A streamed answer is read by
aggregating its events into the body the format's `decode_response` reads (`streams`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any

from ..base import ChatResponse
from . import ToolResult, streams

__all__ = ["FORMAT_NAMES", "Relayed", "Route", "decoded", "route", "tool_results"]

#: Each wire format the relay speaks, as messages name it.
FORMAT_NAMES = {
    "anthropic": "Anthropic Messages",
    "chat": "OpenAI Chat Completions",
    "gemini": "Gemini generateContent",
    "ollama": "Ollama /api/chat",
    "responses": "OpenAI Responses",
}

_GEMINI = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")


@dataclass(frozen=True)
class Route:
    """A request's wire format, told by its path; for Gemini, the model and whether it streams,
    which the path says."""

    format: str
    model: str | None = None
    streamed: bool = False


def route(path: str) -> Route | None:
    """The wire format of a POST to `path` (the relay's own prefix removed); None when it is none of them."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return Route("chat")
    if path.endswith("/responses"):
        return Route("responses")
    if path.endswith("/messages"):
        return Route("anthropic")
    if path.endswith("/api/chat"):
        return Route("ollama")
    found = _GEMINI.search(path)
    if found:
        return Route("gemini", found[1], found[2] == "streamGenerateContent")
    return None


@dataclass(frozen=True)
class Relayed:
    """One exchange the relay made for the agent: the request body it sent upstream and the answer."""

    format: str
    request: dict[str, Any]
    status: int
    body: bytes
    content_type: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


#: The formats whose calls may come without an id, named by their turn.
_NUMBERED = frozenset({"chat", "gemini", "ollama"})


def _converter(fmt: str) -> ModuleType:
    """The format's converter module, imported when an exchange in it is read: a run speaks one or
    two of the five."""
    return import_module(f"{__package__}.{streams.MODULES[fmt]}")


def decoded(exchange: Relayed, turn: int) -> ChatResponse:
    """The model turn an exchange answered (`turn` names calls that come without an id);
    ProviderResponseError when its body is not of its format."""
    data = streams.response_json(exchange.format, exchange.body, exchange.content_type)
    decode = _converter(exchange.format).decode_response
    response: ChatResponse = decode(data, turn=turn) if exchange.format in _NUMBERED else decode(data)
    return response


def tool_results(exchange: Relayed) -> list[ToolResult]:
    """The tool results the exchange's request carried back to the model, in order."""
    results: list[ToolResult] = _converter(exchange.format).tool_results(exchange.request)
    return results
