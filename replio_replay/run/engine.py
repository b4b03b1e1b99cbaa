"""The headless agent loop: provider ⇄ tools until an answer, a limit, a failure or an interrupt.

It knows no wire format, no file layout and no recording: it is handed a `generate`
callable (one turn) and a toolbox (which knows the tool set: the specs offered and the
system prompt), and it returns a `Transcript`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from .._runtime.deadline import Interrupted
from ..errors import ReplioError
from ..judge.results import Status
from ..providers.base import ChatRequest, ChatResponse, Message, ToolCall
from ..tools.toolbox import Toolbox

__all__ = ["NOT_RUN", "CallRecord", "Limits", "Transcript", "run_loop"]

Generate = Callable[[ChatRequest], ChatResponse]


@dataclass(frozen=True)
class Limits:
    """When the loop gives up: after `max_turns` model turns or `max_calls` tool calls; with
    `single_response`, after the first response, whose calls are recorded but not run."""

    max_turns: int = 12
    max_calls: int = 40
    single_response: bool = False


#: The result a call of a single-response fixture is recorded with: it was judged, not run.
NOT_RUN = "(not run: the fixture judges the first response only)"


@dataclass(frozen=True)
class CallRecord:
    """One executed (or refused) tool call and what the model was told."""

    turn: int
    call: ToolCall
    result: str

    @property
    def is_error(self) -> bool:
        return self.result.startswith("Error")


@dataclass
class Transcript:
    """What the loop produced."""

    status: Status = Status.OK
    records: list[CallRecord] = field(default_factory=list)
    answer: str = ""
    tokens: int = 0
    #: The sums of the usage each turn reported, for the cost (`replio_replay.prices`); 0 where none was.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    error: str | None = None
    messages: list[Message] = field(default_factory=list)
    #: The files the verifier asks about, as the loop left them (None: no such file).
    files: dict[str, str | None] = field(default_factory=dict)


def run_loop(
    task: str,
    generate: Generate,
    toolbox: Toolbox,
    *,
    limits: Limits = Limits(),
    cancel: threading.Event | None = None,
) -> Transcript:
    """Run one fixture's conversation to its end; never raises for provider or tool failures."""
    prompt = toolbox.system_prompt  # empty: no system message at all
    out = Transcript(messages=[*([Message("system", prompt)] if prompt else []), Message("user", task)])
    tool_specs = toolbox.specs
    for turn in range(limits.max_turns):
        if cancel is not None and cancel.is_set():
            out.status = Status.CANCELLED
            return out
        try:
            response = generate(ChatRequest(tuple(out.messages), tool_specs))
        except Interrupted:
            out.status = Status.CANCELLED
            return out
        except ReplioError as exc:
            cancelled = cancel is not None and cancel.is_set()  # a failure caused by the interrupt
            out.status, out.error = (Status.CANCELLED, None) if cancelled else (Status.ERROR, str(exc))
            return out
        out.tokens += response.usage.tokens
        out.prompt_tokens += response.usage.prompt or 0
        out.completion_tokens += response.usage.completion or 0
        out.cached_tokens += response.usage.cached or 0
        out.messages.append(Message("assistant", response.text, response.tool_calls))
        if not response.tool_calls:
            out.answer = response.text
            return out
        if limits.single_response:
            out.answer = response.text
            out.records = [CallRecord(turn, call, NOT_RUN) for call in response.tool_calls]
            return out
        for call in response.tool_calls:
            if cancel is not None and cancel.is_set():
                out.status = Status.CANCELLED
                return out
            if len(out.records) >= limits.max_calls:
                out.status = Status.TRUNCATED
                return out
            try:
                result = toolbox.call(call.name, call.arguments)
            except ReplioError as exc:  # the harness could not run it (a replayed MCP call not recorded)
                out.status, out.error = Status.ERROR, str(exc)
                return out
            out.records.append(CallRecord(turn, call, result))
            out.messages.append(Message("tool", result, tool_call_id=call.id, name=call.name))
    out.status = Status.TRUNCATED
    return out
