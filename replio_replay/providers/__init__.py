"""LLM providers behind one interface; wire formats live in pure converter modules beside them."""

from .base import (
    ChatRequest,
    ChatResponse,
    Exchange,
    Finish,
    Message,
    Provider,
    ProviderSettings,
    ResponseSchema,
    ToolCall,
    Usage,
)
from .registry import PROVIDERS, create_provider, provider_class

__all__ = [
    "PROVIDERS",
    "ChatRequest",
    "ChatResponse",
    "Exchange",
    "Finish",
    "Message",
    "Provider",
    "ProviderSettings",
    "ResponseSchema",
    "ToolCall",
    "Usage",
    "create_provider",
    "provider_class",
]
