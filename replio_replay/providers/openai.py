"""The `openai` provider and its `llamacpp` preset: Chat Completions over HTTP.

``POST {base_url}/chat/completions`` with an optional ``Authorization: Bearer`` key. Any
OpenAI-compatible server works (vLLM, llama.cpp's server, LM Studio, Ollama's ``/v1``):
point the base URL at it; the key is optional. The wire format is `wire.openai`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .base import ChatRequest, ChatResponse
from .http import HTTPProvider
from .wire import assistant_turn
from .wire import openai as wire

__all__ = ["LlamaCppProvider", "OpenAIProvider"]


class OpenAIProvider(HTTPProvider):
    """OpenAI Chat Completions, or any server that speaks it."""

    name = "openai"
    default_model = "gpt-4o-mini"
    default_base_url = "https://api.openai.com/v1"
    base_url_env = "OPENAI_BASE_URL"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    path = "/chat/completions"
    relays = {"chat": "/chat/completions", "responses": "/responses"}

    def encode(self, request: ChatRequest) -> dict[str, Any]:
        return wire.encode_request(request, self.settings)

    def decode(self, data: Any, request: ChatRequest) -> ChatResponse:
        return wire.decode_response(data, turn=assistant_turn(request), provider=self.settings.name)


class LlamaCppProvider(OpenAIProvider):
    """llama.cpp's `llama-server` on its default local port; no key, the loaded model answers."""

    name = "llamacpp"
    default_model = "default"
    default_base_url = "http://127.0.0.1:8080/v1"
    base_url_env = "LLAMACPP_BASE_URL"
    local = True
    api_key_env = None
    #: llama-server takes a `json_schema` response format, but the judges recorded before it was
    #: asked for sent `json_object`: kept so, those recordings replay without request drift.
    default_structured_output = False
    #: llama-server speaks Anthropic's Messages and OpenAI's Responses too, under its /v1.
    relays = {"anthropic": "/messages", "chat": "/chat/completions", "responses": "/responses"}
