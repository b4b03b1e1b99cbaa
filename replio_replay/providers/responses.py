"""The `openai-responses` provider: OpenAI's Responses API over HTTP, stateless.

``POST {base_url}/responses`` with an optional ``Authorization: Bearer`` key, the same base URL
and key variables as `openai` (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``). Nothing is stored on
the server (``store: false``): each turn's reasoning items travel in the requests instead. The
wire format is `wire.responses`.
"""

from __future__ import annotations

from typing import Any

from .base import ChatRequest, ChatResponse
from .http import HTTPProvider
from .wire import responses as wire

__all__ = ["ResponsesProvider"]


class ResponsesProvider(HTTPProvider):
    """OpenAI's Responses API, or any server that speaks it."""

    name = "openai-responses"
    default_model = "gpt-4o-mini"
    default_base_url = "https://api.openai.com/v1"
    base_url_env = "OPENAI_BASE_URL"
    api_key_env = "OPENAI_API_KEY"
    path = "/responses"
    relays = {"chat": "/chat/completions", "responses": "/responses"}

    def encode(self, request: ChatRequest) -> dict[str, Any]:
        return wire.encode_request(request, self.settings)

    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        return wire.decode_response(data)
