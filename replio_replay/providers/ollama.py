"""The `ollama` provider: Ollama's native ``/api/chat`` over HTTP, never streamed.

``POST {host}/api/chat``. The host is read like Ollama's own ``OLLAMA_HOST``: a bare
``host[:port]`` gets ``http://`` and, without a port, 11434; an empty host means
127.0.0.1. No key is sent unless the config names a variable for one (a proxy in front).
The wire format is `wire.ollama`.
"""

from __future__ import annotations

from typing import Any

from .base import ChatRequest, ChatResponse
from .http import HTTPProvider
from .wire import assistant_turn
from .wire import ollama as wire

__all__ = ["DEFAULT_PORT", "OllamaProvider", "normalize_host"]

DEFAULT_PORT = 11434


def normalize_host(host: str) -> str:
    """``OLLAMA_HOST``-style `host` as a base URL: ``localhost`` -> ``http://localhost:11434``."""
    host = host.strip().rstrip("/")
    if "://" in host:
        return host
    hostport, slash, path = host.partition("/")
    name, colon, port = (
        hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
    )
    if not colon:
        name, port = hostport, ""
    if not name:
        name = "127.0.0.1"
    return f"http://{name}:{port or DEFAULT_PORT}" + (f"/{path}" if slash and path else "")


class OllamaProvider(HTTPProvider):
    """Ollama's native chat API, on a local or remote host."""

    name = "ollama"
    default_model = None  # there is no model every install has: name one as ollama:MODEL
    default_base_url = f"http://127.0.0.1:{DEFAULT_PORT}"
    base_url_env = "OLLAMA_HOST"
    local = True
    api_key_env = None
    path = "/api/chat"
    relays = {"ollama": "/api/chat", "chat": "/v1/chat/completions"}

    def normalize_base_url(self, url: str) -> str:
        return super().normalize_base_url(normalize_host(url))

    def encode(self, request: ChatRequest) -> dict[str, Any]:
        return wire.encode_request(request, self.settings)

    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        return wire.decode_response(data, turn=assistant_turn(request))
