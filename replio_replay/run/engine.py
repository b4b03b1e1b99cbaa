"""The headless agent loop: provider ⇄ tools until an answer, a limit, a failure or an interrupt.

It knows no wire format, no file layout and no recording: it is handed a `generate`
callable (one turn), a toolbox (which knows the tool set: the specs offered and the
system prompt) and the user (a task, or a `NextUser` saying each message of a conversation:
scripted turns, a simulated user), and it returns a `Transcript`.

Each user message is one *user turn*: the model answers it, calling tools, until it answers
without a call, or until `max_turns` model turns, or until the conversation no longer fits the
model's context window (then the conversation stops, `truncated`; for the context, `error` says so);
`max_calls` bounds the calls of the whole conversation, and a fixture's `max_steps` and
`max_tool_errors` its steps and failed calls as τ²-bench counts them (`Steps`). A model turn that ends without a call for
a reason other than the usual (its provider's `Finish`) ends the conversation too: a length limit,
`truncated` (the answer, if any, is cut short); any other reason with no answer at all (a content
filter, a refusal, a malformed call), `error` naming it. A tool may be held back until a later
user turn (`offered_from`: a scripted turn's `offer`): it is not offered, and not run, before it.
With `turn_states`, each user turn's end keeps the environments' state then, for per-turn checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from .._runtime.deadline import Interrupted
from ..errors import ContextFullError, ReplioError
from ..fixtures.model import HistoryMessage
from ..judge.results import JudgeVerdict, Status
from ..judge.turns import TurnEvidence, TurnReference
from ..providers.base import ChatRequest, ChatResponse, Finish, Message, ToolCall, Usage
from ..tools.toolbox import Toolbox

__all__ = ["NOT_RUN", "CallRecord", "Limits", "NextUser", "Steps", "Transcript", "run_loop", "scripted"]

Generate = Callable[[ChatRequest], ChatResponse]

#: What the user says next, given the conversation so far: a message, or the status the
#: conversation ends with (`OK`: the user is done; `TRUNCATED`: the user ran out of turns). It
#: may raise ReplioError (a simulated user's provider failed): the fixture ends in `error`.
NextUser = Callable[[Sequence[Message]], Union[str, Status]]


@dataclass(frozen=True)
class Limits:
    """When the loop gives up: after `max_turns` model turns or `max_calls` tool calls; with
    `single_response`, after the first response, whose calls are recorded but not run; at
    `max_steps` steps or `max_tool_errors` failed calls of the conversation (see `Steps`)."""

    max_turns: int = 12
    max_calls: int = 40
    single_response: bool = False
    max_steps: int | None = None
    max_tool_errors: int | None = None


@dataclass
class Steps:
    """A conversation's steps and failed tool calls so far, counted as τ²-bench's orchestrator
    counts them (each user message, each model response, each response's tool results, for the
    agent and a simulated user alike), against the fixture's `max_steps` and `max_tool_errors`
    (None: no limit). Like τ², it is looked at only when no tool result is awaited."""

    max_steps: int | None = None
    max_errors: int | None = None
    taken: int = 0
    errors: int = 0

    @classmethod
    def of(cls, limits: Limits) -> Steps:
        return cls(limits.max_steps, limits.max_tool_errors)

    def take(self, results: Sequence[CallRecord] = ()) -> None:
        """One step more: a message, or (with `results`) the tool results of one response."""
        self.taken += 1
        self.errors += sum(r.is_error for r in results)

    def over(self) -> bool:
        """Whether a limit is reached: the conversation ends `truncated`, as τ²'s ends (`max_steps`,
        `too_many_errors`) with no reward."""
        return (self.max_steps is not None and self.taken >= self.max_steps) or \
            (self.max_errors is not None and self.errors >= self.max_errors)


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
    error: str | None = None
    messages: list[Message] = field(default_factory=list)
    #: The files the verifier asks about, as the loop left them (None: no such file).
    files: dict[str, str | None] = field(default_factory=dict)
    #: Each environment's end state (None: the fixture has none), and the state `state_from_calls`
    #: reaches on fresh ones, or why it cannot be had (see `tools.environment`).
    state: dict[str, Any] | None = None
    reference_state: dict[str, Any] | str | None = None
    #: Each user turn the model answered (or was cut short in), in order.
    turn_ends: list[TurnEvidence] = field(default_factory=list)
    #: The results of the verifier's `state_from_calls` calls (None: it has none, or they failed);
    #: and, by turn number, what each turn's `state_from_calls` reach (see `judge.turns`).
    reference_results: list[str] | None = None
    turn_references: dict[int, TurnReference] = field(default_factory=dict)
    #: Role (`agent`, a simulated `user`, the `judge`) -> its {prompt, completion} tokens (and
    #: `cached`, of the prompt, when a provider reported any); `tokens` is the agent's total as its
    #: provider reports it. What the cost is computed from (`replio_replay.prices`).
    tokens_by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The roles an answer of which did not give its prompt and completion tokens (`Usage.counted`):
    #: what they spent is unknown, so they have no cost.
    uncounted: set[str] = field(default_factory=set)
    #: Role -> the provider (name, model) that spoke as it, besides the agent: what prices the role.
    spoken_by: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: The LLM judge's verdicts, one per rubric item (None: not judged).
    judged: list[JudgeVerdict] | None = None
    #: The calls a simulated user made with its own tools (`user.tools`), in order.
    user_records: list[CallRecord] = field(default_factory=list)
    #: Each model turn's finish reason as its provider said it (None: it said none), in order.
    finishes: list[str | None] = field(default_factory=list)

    def count(self, role: str, usage: Usage) -> None:
        """Add `usage` to `role`'s tokens (one answer's, or a simulated user's sum: `Simulator.usage`)."""
        if not usage.counted:
            self.uncounted.add(role)
        kept = self.tokens_by_role.setdefault(role, {"prompt": 0, "completion": 0})
        kept["prompt"] += usage.prompt or 0
        kept["completion"] += usage.completion or 0
        if usage.cached:
            kept["cached"] = kept.get("cached", 0) + usage.cached


def history_messages(history: Sequence[HistoryMessage] | None) -> list[Message]:
    """A fixture's `history` as the messages the conversation starts with: each call given an id
    of its own (``history-N``) that its tool message answers."""
    out: list[Message] = []
    waiting: list[ToolCall] = []
    for m in history or ():
        if m.role == "tool":
            call = waiting.pop(0)
            out.append(Message("tool", m.content, tool_call_id=call.id, name=call.name))
            continue
        calls = tuple(ToolCall(f"history-{len(out)}-{j}", c.name, c.arguments) for j, c in enumerate(m.calls))
        waiting = list(calls)
        out.append(Message(m.role, m.content, calls))
    return out


def scripted(messages: Sequence[str]) -> NextUser:
    """A user who says `messages` in order, then is done."""
    said = iter(messages)
    return lambda conversation: next(said, Status.OK)


def run_loop(
    user: str | NextUser,
    generate: Generate,
    toolbox: Toolbox,
    *,
    limits: Limits = Limits(),
    cancel: threading.Event | None = None,
    offered_from: Mapping[str, int] | None = None,
    turn_states: bool = False,
    history: Sequence[Message] = (),
    steps: Steps | None = None,
) -> Transcript:
    """Run one fixture's conversation to its end: `user` is its one task, or says each message;
    never raises for provider or tool failures. `offered_from` maps a tool to the user turn (from
    1) it is first offered in; `turn_states` keeps the environments' state at each turn's end;
    `history` is an earlier conversation the run continues (see `history_messages`); `steps`
    counts the conversation's steps against its limits (shared with a simulated user, which
    counts its own; by default, those of `limits`)."""
    steps = steps if steps is not None else Steps.of(limits)
    next_user = scripted([user]) if isinstance(user, str) else user
    prompt = toolbox.system_prompt  # empty: no system message at all
    out = Transcript(messages=[*([Message("system", prompt)] if prompt else []), *history])
    turn = 0  # model turns of the whole conversation: calls of one turn share its number
    while True:
        if cancel is not None and cancel.is_set():
            out.status = Status.CANCELLED
            return out
        try:
            said = next_user(out.messages)
        except Interrupted:
            out.status = Status.CANCELLED
            return out
        except ReplioError as exc:
            _failed(out, exc, cancel)
            return out
        if isinstance(said, Status):
            out.status = said
            return out
        out.messages.append(Message("user", said))
        out.answer = ""  # the answer is this turn's, or none if it is cut short
        steps.take()
        if steps.over():
            out.status = Status.TRUNCATED
            return out
        number = len(out.turn_ends) + 1
        toolbox.held = frozenset(name for name, first in (offered_from or {}).items() if first > number)
        ended = _answer(out, turn, generate, toolbox, limits, cancel, steps)
        turn += ended.model_turns
        state = toolbox.states() if turn_states else None
        out.turn_ends.append(TurnEvidence(len(out.records), out.answer, state))
        if ended.status is not None:
            out.status = ended.status
            return out


@dataclass(frozen=True)
class _Ended:
    """How one user turn ended: after `model_turns` model turns, the conversation going on (None)
    or ending with `status`."""

    model_turns: int
    status: Status | None = None


def _failed(out: Transcript, exc: ReplioError, cancel: threading.Event | None) -> None:
    cancelled = cancel is not None and cancel.is_set()  # a failure caused by the interrupt
    out.status, out.error = (Status.CANCELLED, None) if cancelled else (Status.ERROR, str(exc))


def _stopped_short(finish: Finish | None, *, answered: bool) -> tuple[Status, str] | None:
    """How a model turn without calls ends the conversation when it did not end as turns do: a
    length limit cut it (`truncated`, with or without the start of an answer), or it stopped for
    another reason without a word (`error`); with the reason it gave. None: it ended as turns do,
    or gave some answer however it stopped."""
    if finish is None or finish.kind == "done":
        return None
    said = f"{finish.field} {finish.reason}" + (f": {finish.detail}" if finish.detail else "")
    if finish.kind == "length":
        what = "its answer was cut short at a length limit" if answered else \
            "the model reached a length limit before it answered"
        return Status.TRUNCATED, f"{what} ({said}); the provider's max_tokens (.replio/config.json) bounds a response"
    if answered:
        return None
    return Status.ERROR, f"the model stopped without an answer ({said})"


def _answer(out: Transcript, first: int, generate: Generate, toolbox: Toolbox, limits: Limits,
            cancel: threading.Event | None, steps: Steps) -> _Ended:
    """The model answers the last user message: model turns from number `first` on."""
    tool_specs = toolbox.specs
    for n in range(limits.max_turns):
        turn = first + n
        if cancel is not None and cancel.is_set():
            return _Ended(n, Status.CANCELLED)
        try:
            response = generate(ChatRequest(tuple(out.messages), tool_specs))
        except Interrupted:
            return _Ended(n, Status.CANCELLED)
        except ContextFullError as exc:  # the model's doing, like a turn limit: judged as it stands
            out.error = str(exc)
            return _Ended(n, Status.TRUNCATED)
        except ReplioError as exc:
            _failed(out, exc, cancel)
            return _Ended(n, out.status)
        out.tokens += response.usage.tokens
        out.count("agent", response.usage)
        out.finishes.append(response.finish.reason if response.finish else None)
        out.messages.append(Message("assistant", response.text, response.tool_calls,
                                    provider_items=response.provider_items))
        steps.take()
        if not response.tool_calls:
            out.answer = response.text
            stopped = _stopped_short(response.finish, answered=bool(response.text.strip()))
            if stopped is not None:
                out.error = stopped[1]
            return _Ended(n + 1, stopped[0] if stopped else Status.TRUNCATED if steps.over() else None)
        if limits.single_response:
            out.answer = response.text
            out.records = [CallRecord(turn, call, NOT_RUN) for call in response.tool_calls]
            return _Ended(n + 1, Status.OK)
        made = len(out.records)
        for call in response.tool_calls:
            if cancel is not None and cancel.is_set():
                return _Ended(n + 1, Status.CANCELLED)
            if len(out.records) >= limits.max_calls:
                return _Ended(n + 1, Status.TRUNCATED)
            try:
                result = toolbox.call(call.name, call.arguments)
            except ReplioError as exc:  # the harness could not run it (a replayed MCP call not recorded)
                out.status, out.error = Status.ERROR, str(exc)
                return _Ended(n + 1, Status.ERROR)
            out.records.append(CallRecord(turn, call, result))
            out.messages.append(Message("tool", result, tool_call_id=call.id, name=call.name))
        steps.take(out.records[made:])
        if steps.over():
            return _Ended(n + 1, Status.TRUNCATED)
    return _Ended(limits.max_turns, Status.TRUNCATED)
