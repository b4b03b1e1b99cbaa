"""The `anthropic` provider: the Messages API over HTTP.

``POST {base_url}/v1/messages`` with the ``x-api-key`` and ``anthropic-version`` headers. A
base URL that already ends in ``/v1`` is not given a second one. The wire format is
`wire.anthropic`.
"""

from __future__ import annotations

import functools
from typing import Any

import httpx

from .base import ChatRequest, ChatResponse
from .http import HTTPProvider, joined
from .wire import anthropic as wire

__all__ = ["AnthropicProvider"]


class AnthropicProvider(HTTPProvider):
    """Anthropic's Messages API."""

    name = "anthropic"
    default_model = "claude-haiku-4-5"
    default_base_url = "https://api.anthropic.com"
    base_url_env = "ANTHROPIC_BASE_URL"
    api_key_env = "ANTHROPIC_API_KEY"

    @functools.cached_property
    def url(self) -> str:
        versioned = httpx.URL(self.base_url).path.rstrip("/").endswith("/v1")
        return joined(self.base_url, "/messages" if versioned else "/v1/messages")

    def relay_url(self, fmt: str, model: str | None = None, *, streamed: bool = False) -> str | None:
        return self.url if fmt == "anthropic" else None

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": wire.API_VERSION}
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        return headers

    def encode(self, request: ChatRequest) -> dict[str, Any]:
        return wire.encode_request(request, self.settings)

    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        schema = wire.answer_tool(request, self.settings)
        return wire.decode_response(data, answer=schema.name if schema else None)
