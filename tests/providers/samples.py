"""Plain data shared by the provider tests: a tool spec and a conversation with a tool round trip."""

from __future__ import annotations

from typing import Any

from replio_replay.providers.base import (
    ChatRequest,
    Message,
    ProviderSettings,
    ResponseSchema,
    ToolCall,
)

READ_TOOL: dict[str, Any] = {
    "name": "file_read",
    "description": "Read a text file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "default": 1}},
        "required": ["path"],
        "additionalProperties": False,
    },
}
GREP_TOOL: dict[str, Any] = {
    "name": "grep",
    "description": "Search files.",
    "parameters": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
}
TOOLS = (READ_TOOL, GREP_TOOL)
#: An answer asked for as one JSON object of this schema (structured output).
ANSWER = ResponseSchema("answer", {
    "type": "object",
    "properties": {"port": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["port", "why"],
    "additionalProperties": False,
})


def schema_request() -> ChatRequest:
    """A request for an `ANSWER` object, without tools (as the judge's)."""
    return ChatRequest((Message("system", "Answer in JSON."), Message("user", "What port?")), (),
                       response_schema=ANSWER)


def settings(name: str = "openai", model: str = "test-model", **kw: Any) -> ProviderSettings:
    return ProviderSettings(name=name, model=model, **kw)


def first_turn() -> ChatRequest:
    return ChatRequest((Message("system", "Be brief."), Message("user", "What port?")), TOOLS)


def after_two_calls(arguments: Any = None) -> ChatRequest:
    """The conversation after the model asked for two calls and both were answered."""
    a = ToolCall(
        "call_a", "file_read", {"path": "config/server.toml"} if arguments is None else arguments
    )
    b = ToolCall("call_b", "grep", {"pattern": "port"})
    return ChatRequest(
        (
            Message("system", "Be brief."),
            Message("user", "What port?"),
            Message("assistant", "Let me look.", (a, b)),
            Message("tool", "port = 8743", tool_call_id="call_a", name="file_read"),
            Message("tool", "Error: no match", tool_call_id="call_b", name="grep"),
        ),
        TOOLS,
    )
