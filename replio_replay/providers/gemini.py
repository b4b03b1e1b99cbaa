"""The `gemini` provider: Gemini's own generateContent API over HTTP, never streamed.

``POST {base_url}/models/{model}:generateContent`` with the key in the ``x-goog-api-key``
header, never in the URL; the key is read from ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``,
and the base URL from ``GEMINI_BASE_URL``. The wire format is `wire.gemini`.
"""

from __future__ import annotations

from typing import Any

from .base import ChatRequest, ChatResponse
from .http import HTTPProvider, joined
from .wire import assistant_turn
from .wire import gemini as wire

__all__ = ["GeminiProvider"]


class GeminiProvider(HTTPProvider):
    """Google's Gemini API (the Developer API; ``v1beta``)."""

    name = "gemini"
    default_model = "gemini-2.5-flash"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    base_url_env = "GEMINI_BASE_URL"
    api_key_env = "GEMINI_API_KEY"
    api_key_env_fallbacks = ("GOOGLE_API_KEY",)

    @property
    def url(self) -> str:
        model = self.model.removeprefix("models/")  # the API's own name for a model has the prefix
        return joined(self.base_url, f"/models/{model}:generateContent")

    def relay_url(self, fmt: str, model: str | None = None, *, streamed: bool = False) -> str | None:
        if fmt != "gemini":
            return None
        name = (self.model if self.settings.model_named or not model else model).removeprefix("models/")
        if streamed:
            return joined(self.base_url, f"/models/{name}:streamGenerateContent") + "?alt=sse"
        return joined(self.base_url, f"/models/{name}:generateContent")

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.settings.api_key} if self.settings.api_key else {}

    def encode(self, request: ChatRequest) -> dict[str, Any]:
        return wire.encode_request(request, self.settings)

    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        return wire.decode_response(data, turn=assistant_turn(request))
