"""The scripted `mock` provider: plays a script of model turns, so tests and docs run offline.

A script maps a fixture id (or ``"*"`` for any fixture) to a list of model turns (its responses,
one per request, across all the user's turns); a model turn is a
`ChatResponse`, a dict ``{"text", "tool_calls": [{"name", "arguments"}], "usage"}``, an
exception to raise, or a callable taking the `ChatRequest`. When a fixture's turns run
out, the mock answers with plain text, which ends the loop. The requests of another role than
the agent's (a simulated user's, a judge's) play the entry ``"ROLE:ID"`` (or ``"ROLE:*"``), for
example ``"user:refund"``; a judge's requests play its entry's turns in the order they are asked
(one per rubric item). From the CLI, point the config's ``providers.mock.script`` at a JSON file of
that shape.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .._runtime.jsonin import read_json
from ..errors import ConfigError, ProviderError
from .base import ChatRequest, ChatResponse, Exchange, Provider, ProviderSettings, ToolCall, Usage

__all__ = ["MockProvider", "Turn"]

Turn = Union[ChatResponse, Mapping[str, Any], BaseException, Callable[[ChatRequest], ChatResponse]]


class MockProvider(Provider):
    """Plays scripted turns per fixture; a real provider in every other respect.

    A fixture the script does not cover (no entry, no ``"*"``) ends in `error`: a mock run
    never passes by accident.
    """

    name = "mock"
    default_model = "scripted"

    def __init__(self, settings: ProviderSettings, script: Mapping[str, Sequence[Turn]] | None = None):
        super().__init__(settings)
        self.source = "the mock script"
        if script is None:
            path = settings.options.get("script")
            script = _load_script(path)
            self.source = f"mock script {path}" if path else "the mock provider (no script configured)"
        self.script = script
        #: (script entry, trial) -> judge requests already played: each starts afresh, so they play in turn.
        self._judged: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self.requests: list[tuple[str, ChatRequest]] = []

    def generate(self, request: ChatRequest, exchange: Exchange) -> ChatResponse:
        fid = exchange.fixture_id if exchange.role == "agent" else f"{exchange.role}:{exchange.fixture_id}"
        wildcard = "*" if exchange.role == "agent" else f"{exchange.role}:*"
        with self._lock:
            self.requests.append((fid, request))
            turns = self.script.get(fid, self.script.get(wildcard))
            # Count the assistant turns already in the conversation: each fixture replays from 0.
            index = sum(1 for m in request.messages if m.role == "assistant")
            if exchange.role == "judge":  # a judge's request holds no earlier turn: one per rubric item
                index = self._judged.get((fid, request.trial), 0)
                self._judged[(fid, request.trial)] = index + 1
        if turns is None:
            known = ", ".join(sorted(self.script)) or "none"
            raise ProviderError(f"{self.source} has no turns for fixture {fid!r} (it covers: {known}); "
                                f'add an entry {fid!r} (or "{wildcard}" for every fixture)')
        if index >= len(turns):
            return ChatResponse(text="(mock) the script has no more turns.", usage=Usage(10, 5))
        return _play(turns[index], request, index)


def _play(turn: Turn, request: ChatRequest, index: int) -> ChatResponse:
    if isinstance(turn, BaseException):
        raise turn
    if isinstance(turn, ChatResponse):
        return turn
    if callable(turn):
        return turn(request)
    calls = tuple(
        ToolCall(id=c.get("id", f"call_{index}_{i}"), name=c["name"], arguments=c.get("arguments", {}))
        for i, c in enumerate(turn.get("tool_calls", ()))
    )
    usage = turn.get("usage", {})
    return ChatResponse(
        text=turn.get("text", ""),
        tool_calls=calls,
        usage=Usage(usage.get("prompt", 10), usage.get("completion", 5), usage.get("total")),
    )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


class _Call(_Strict):
    name: str
    arguments: Union[dict[str, Any], str] = Field(default_factory=dict)
    id: str | None = None


class _Usage(_Strict):
    prompt: int = 10
    completion: int = 5
    total: int | None = None


class _Turn(_Strict):
    text: str = ""
    tool_calls: list[_Call] = Field(default_factory=list)
    usage: _Usage | None = None


#: Built when a script is first checked, not when the module loads.
_SCRIPT = TypeAdapter(dict[str, list[_Turn]], config=ConfigDict(defer_build=True))


def _load_script(path: str | None) -> Mapping[str, Sequence[Turn]]:
    """The script file, checked: fixture id (or "*") -> turns of text, tool_calls and usage only."""
    if not path:
        return {}
    try:
        data = read_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"mock script {path}: no such file; providers.mock.script in .replio/config.json is "
                          "relative to the project folder") from None
    except (OSError, ValueError) as exc:  # JsonProblem too
        raise ConfigError(f"mock script {path}: {exc}; give a JSON object of fixture id -> model turns") from None
    try:
        _SCRIPT.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(the whole script)"
        raise ConfigError(
            f"mock script {path}: {where}: {first['msg']} ({exc.error_count()} problem(s)); a script maps fixture "
            'ids (or "*") to lists of turns {"text", "tool_calls": [{"name", "arguments"}], "usage"}'
        ) from None
    return data
