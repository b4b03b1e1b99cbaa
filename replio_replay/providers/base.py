"""The provider interface: provider-neutral messages, one request and response model, one method.

A provider turns a `ChatRequest` into a `ChatResponse`. It knows its wire format and its
connection; it knows nothing of fixtures, worktrees or cassettes. The HTTP transport it
sends through is handed in per fixture (`Exchange`), so that recording can wrap it.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Union

from .._runtime.redact import NO_SECRETS, Redactor

if TYPE_CHECKING:
    import httpx

__all__ = [
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
]

Arguments = Union[dict[str, Any], str]
"""Parsed tool-call arguments, or the raw string when the model's JSON did not parse."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model asked for. `id` is the provider's (or a stable one we made)."""

    id: str
    name: str
    arguments: Arguments


@dataclass(frozen=True)
class Message:
    """A provider-neutral chat message."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    #: The provider's own record of an assistant turn, as it answered (`ChatResponse.provider_items`).
    provider_items: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reported them; any may be missing (None: not reported as a
    whole number of tokens). `cached` is the part of `prompt` the provider served from its prompt
    cache (priced apart: `replio_replay.prices`)."""

    prompt: int | None = None
    completion: int | None = None
    total: int | None = None
    cached: int | None = None

    @property
    def counted(self) -> bool:
        """Whether the prompt and completion tokens are both known: what a cost is counted from
        (a total alone does not say how much of it was prompt, which is priced differently)."""
        return self.prompt is not None and self.completion is not None

    @property
    def tokens(self) -> int:
        """`total` from the provider, else prompt + completion."""
        if self.total is not None:
            return self.total
        return (self.prompt or 0) + (self.completion or 0)


@dataclass(frozen=True)
class ResponseSchema:
    """An answer asked for as one JSON object valid against `schema` (a JSON Schema every format's
    structured output takes: an object, its properties required, no others), named `name` where the
    format wants a name (OpenAI's `json_schema`, Anthropic's forced tool)."""

    name: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ChatRequest:
    """One turn's conversation and tool specs; sampling settings are the provider's own.

    `trial` is which of a run's repeated trials (1-based) this turn belongs to: a provider that
    takes a seed sends its seed + trial - 1, so trials differ only by their seed.

    `response_schema` asks for an answer that is one JSON object of that schema: as structured
    output where the provider's settings say its server takes it (`ProviderSettings.structured_output`:
    OpenAI's `json_schema` response format, the Responses API's `text.format`, Gemini's
    `responseSchema`, Ollama's `format` schema, Anthropic's forced tool), else in the format's JSON
    mode where it has one without a schema (OpenAI Chat's `json_object`, Ollama's `"json"`), else by
    the prompt alone.
    """

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...]
    trial: int = 1
    response_schema: ResponseSchema | None = None


@dataclass(frozen=True)
class Finish:
    """Why a model turn ended, as its provider said it: `reason` verbatim (`stop`, `end_turn`,
    `SAFETY`, ...), the wire `field` it came in (`finish_reason`, `stop_reason`, `finishReason`,
    `incomplete_details.reason`, `done_reason`), the provider's explanation when it gave one
    (Gemini's `finishMessage`), and what the format says it means (`kind`):

    - ``done``: the turn ended as turns do, with an answer or with tool calls;
    - ``length``: a length limit (the response's `max_tokens`, the context window) cut it short;
    - ``abnormal``: anything else: a content filter, a refusal, a malformed call, a reason the
      format's list does not know.
    """

    reason: str
    field: str
    kind: Literal["done", "length", "abnormal"]
    detail: str | None = None


@dataclass(frozen=True)
class ChatResponse:
    """A model's turn: its text and its tool calls (both may be present).

    `provider_items` are what the wire format needs sent back with this turn that the neutral
    fields cannot hold (the Responses API's reasoning items, Gemini's thought signatures), as
    received: the engine carries them on the assistant message and the format that made them
    sends them back unchanged. Nothing else reads them: they reach cassettes and request drift
    only as part of the request body. `finish` is why the turn ended (None: the provider did not
    say, as the scripted mock does not).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    provider_items: tuple[dict[str, Any], ...] = ()
    #: The answers to a `response_schema` request that the format gives as data, not as text
    #: (Anthropic's forced tool: one input per call of it), as received; empty for the others,
    #: whose structured answer is the text.
    structured: tuple[Any, ...] = ()
    finish: Finish | None = None


@dataclass(frozen=True)
class Exchange:
    """Per-fixture context a provider sends through: the transport, the fixture's id, the run's
    secrets, which the start of a body quoted in an error shows nothing of, and whose request it
    is (`role`: `agent`, `user` for a simulated user, `judge`), which a cassette records it under."""

    fixture_id: str
    transport: httpx.BaseTransport | None = None
    redactor: Redactor = NO_SECRETS
    role: str = "agent"


@dataclass(frozen=True)
class ProviderSettings:
    """Resolved connection settings for one provider (the key is read from the environment)."""

    name: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    #: None: no temperature is sent (the config's ``"temperature": null``), for models that take
    #: only their own, as OpenAI's reasoning models do.
    temperature: float | None = 0.0
    seed: int | None = 0
    max_tokens: int = 2048
    timeout: float = 60.0
    retries: int = 3
    max_response_bytes: int = 16 * 1024 * 1024
    options: dict[str, Any] = field(default_factory=dict)
    #: Whether a `response_schema` is sent as structured output (default: the class's
    #: `default_structured_output`), else as the format's plain JSON mode or in the prompt alone.
    structured_output: bool = True
    #: Whether the model was named (in the spec, --model or the config) rather than the provider's
    #: default: only a named model replaces the one a user's agent asks for (`providers.relay`).
    model_named: bool = True


class Provider(ABC):
    """One LLM provider. Subclasses set `name` and implement `generate`."""

    name: ClassVar[str]
    default_model: ClassVar[str | None] = None
    default_base_url: ClassVar[str | None] = None
    #: Environment variables read for this provider: base URL and key.
    base_url_env: ClassVar[str | None] = None
    api_key_env: ClassVar[str | None] = None
    #: Variables read for the key, in order, when `api_key_env` is not set.
    api_key_env_fallbacks: ClassVar[tuple[str, ...]] = ()
    #: Whether the provider talks HTTP (and so has exchanges to record or replay).
    speaks_http: ClassVar[bool] = False
    #: Whether a `response_schema` is sent as structured output unless the config says otherwise.
    default_structured_output: ClassVar[bool] = True
    #: A server on this machine (llama.cpp, Ollama): it shares the cores with the run, so
    #: fixtures run one at a time by default and a request that timed out is not sent again.
    local: ClassVar[bool] = False
    #: Set on a provider that plays a recorded trace back (`fixtures.otel.playback`): what its
    #: cassette's header says it was synthesized from, so nobody takes it for a live recording.
    synthesized: dict[str, str] | None = None

    @classmethod
    def default_timeout(cls) -> float:
        """Seconds one request may take unless configured: a model served on this machine's CPU
        can take minutes to prefill a new system prompt, a hosted API answers within one."""
        return 300.0 if cls.local else 60.0

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    @property
    def model(self) -> str:
        return self.settings.model

    @abstractmethod
    def generate(self, request: ChatRequest, exchange: Exchange) -> ChatResponse:
        """Send one turn and return the parsed response; raise ProviderError on failure."""

    def relay_url(self, fmt: str, model: str | None = None, *, streamed: bool = False) -> str | None:
        """Where a request of wire format `fmt` that a user's agent sent goes (`providers.relay`);
        None when this provider's server does not speak it."""
        return None

    def transport(self, cancel: threading.Event | None = None) -> httpx.BaseTransport | None:
        """One fixture's transport over the run's pooled connection (None for providers without
        HTTP); requests through it are bounded, and abandoned once `cancel` is set."""
        return None

    def open(self) -> None:
        """Make the pooled connection the run's requests will go through, before its fixtures start
        (nothing for providers without HTTP)."""

    def close(self) -> None:
        """Release the pooled connections at the end of a run."""
