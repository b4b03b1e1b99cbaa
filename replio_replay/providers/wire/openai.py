"""The OpenAI Chat Completions wire format (also spoken by vLLM, llama.cpp, LM Studio, Ollama's /v1).

Request: ``{model, messages, tools, temperature, seed, max_tokens, stream: false}``; tools as
``{"type": "function", "function": {name, description, parameters}}``; an assistant's calls as
``tool_calls`` with JSON-string arguments; results as ``role: "tool"`` messages with
``tool_call_id``. Response: ``choices[0].message`` (text and ``tool_calls``) and ``usage``.
"""

from __future__ import annotations

from typing import Any

from ..base import ChatRequest, ChatResponse, Message, ProviderSettings, Usage
from . import as_int, function_calls, shape_error, unparsed_arguments

__all__ = ["PROVIDER", "decode_response", "encode_message", "encode_request", "encode_tool"]

PROVIDER = "openai"


def encode_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A neutral tool spec ``{name, description, parameters}`` as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": spec["name"],
            "description": spec.get("description", ""),
            "parameters": spec.get("parameters") or {"type": "object", "properties": {}},
        },
    }


def encode_message(message: Message) -> dict[str, Any]:
    """One neutral message as an OpenAI chat message."""
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": unparsed_arguments(call.arguments),
                    },
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def encode_request(request: ChatRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body of ``POST {base_url}/chat/completions`` (sent with keys sorted)."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [encode_message(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.seed is not None:
        body["seed"] = settings.seed + request.trial - 1
    body["max_tokens"] = settings.max_tokens
    if request.json_mode:  # llama.cpp's server takes it too
        body["response_format"] = {"type": "json_object"}
    body["stream"] = False
    return body


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some compatible servers answer with content parts
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    raise TypeError(type(content).__name__)


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def decode_response(
    data: dict[str, Any], *, turn: int = 0, provider: str = PROVIDER
) -> ChatResponse:
    """A chat-completion body as a neutral response; ProviderResponseError on the wrong shape.

    `turn` only names calls that come without an id (``call_{turn}_{i}``), which some
    compatible servers omit; `provider` is the name errors give (``llamacpp`` speaks this too).
    """
    if not isinstance(data, dict):
        raise shape_error(provider, "expected a JSON object", data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if "error" in data:
            raise shape_error(
                provider, f"the server reported an error: {_error_message(data['error'])}", data
            )
        raise shape_error(provider, "no choices[0]", data)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise shape_error(provider, "choices[0] has no message object", data)
    try:
        text = _text(message.get("content"))
    except TypeError as exc:
        raise shape_error(provider, f"message.content is a {exc}, not text", data) from None
    calls = function_calls(message.get("tool_calls") or [], provider=provider, data=data, turn=turn)
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    return ChatResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(
            prompt=as_int(usage.get("prompt_tokens")),
            completion=as_int(usage.get("completion_tokens")),
            total=as_int(usage.get("total_tokens")),
            cached=as_int(details.get("cached_tokens")),
        ),
    )
