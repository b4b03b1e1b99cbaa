"""The trace of a user's agent, read from the exchanges it had with the model (pure).

Each answered exchange is one model turn: its tool calls, in order, are the trace's calls. A
call's result is what the agent carried back to the model: the tool result with the call's id in
any later request (OpenAI's `tool_call_id`, Anthropic's `tool_use_id`, the Responses API's
`call_id`, a Gemini `functionResponse` id); for formats or SDKs that send no id (Ollama, most
Gemini calls), the results new in the next request, matched by tool name, then in order. A call
whose result never came back (the agent stopped, or answered without sending it) is recorded
with `NO_RESULT`. An exchange the provider refused (an HTTP error the agent may have retried)
is no model turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import AgentError, ProviderResponseError
from ..providers.base import ChatResponse, Message, ToolCall, Usage
from ..providers.wire import ToolResult, clean_response
from ..providers.wire.relayed import FORMAT_NAMES, Relayed, decoded, tool_results
from .engine import CallRecord

__all__ = ["NO_RESULT", "AgentTrace", "AgentTurn", "read_trace"]

#: The result recorded for a call whose result the agent never sent back to the model.
NO_RESULT = "(no result: the agent did not send one back to the model)"


@dataclass(frozen=True)
class AgentTurn:
    """One user message the agent answered: the message, its answer, and how many exchanges the
    relay had made by the time it answered."""

    user: str
    answer: str
    exchanges: int


@dataclass
class AgentTrace:
    """The calls (`records`), the conversation as messages, the calls made by the end of each user
    turn, and each model turn's usage and finish reason (the agent, not replio, decides what a
    turn that stopped short means)."""

    records: list[CallRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    turn_calls: list[int] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    finishes: list[str | None] = field(default_factory=list)


def read_trace(exchanges: Sequence[Relayed], turns: Sequence[AgentTurn]) -> AgentTrace:
    """The trace of `exchanges` (in the order relayed), split into the user `turns`; AgentError
    when an answer cannot be read as its wire format."""
    answered = [(i, ex) for i, ex in enumerate(exchanges) if ex.ok]
    responses = [_decoded(ex, n, i) for n, (i, ex) in enumerate(answered)]
    carried = [tool_results(ex) for _, ex in answered]
    by_id: dict[str, ToolResult] = {}
    for results in carried:
        for result in results:
            if result.call_id:
                by_id.setdefault(result.call_id, result)
    out = AgentTrace(usage=[r.usage for r in responses],
                     finishes=[r.finish.reason if r.finish else None for r in responses])
    per_turn: list[list[CallRecord]] = []
    for n, response in enumerate(responses):
        new = _new_results(carried, n)
        calls = [CallRecord(n, call, _result(call, by_id, new)) for call in response.tool_calls]
        per_turn.append(calls)
        out.records += calls
    start = 0
    for turn in turns:
        out.messages.append(Message("user", turn.user))
        for n, (i, _) in enumerate(answered):
            if start <= i < turn.exchanges and responses[n].tool_calls:
                out.messages.append(_assistant(responses[n]))
                out.messages += [Message("tool", r.result, tool_call_id=r.call.id, name=r.call.name)
                                 for r in per_turn[n]]
        out.messages.append(Message("assistant", turn.answer))
        out.turn_calls.append(sum(len(per_turn[n]) for n, (i, _) in enumerate(answered) if i < turn.exchanges))
        start = turn.exchanges
    return out


def _decoded(exchange: Relayed, turn: int, index: int) -> ChatResponse:
    try:
        return clean_response(decoded(exchange, turn))
    except ProviderResponseError as exc:
        raise AgentError(f"the model's answer to the agent's request #{index + 1} cannot be read as "
                         f"{FORMAT_NAMES[exchange.format]}: {exc}") from None


def _new_results(carried: Sequence[list[ToolResult]], n: int) -> list[ToolResult]:
    """The results the request after model turn `n` carried that the one before did not: those of
    turn `n`'s calls when the agent resends the conversation, else all it carried."""
    if n + 1 >= len(carried):
        return []
    before, after = carried[n], carried[n + 1]
    return list(after[len(before):]) if len(after) > len(before) else list(after)


def _result(call: ToolCall, by_id: dict[str, ToolResult], new: list[ToolResult]) -> str:
    """`call`'s result: by its id, else the first new result of its tool's name, else the next new one."""
    found = by_id.get(call.id)
    if found is None:
        found = next((r for r in new if r.call_id is None and r.name == call.name), None)
    if found is None:
        found = next((r for r in new if r.call_id is None and r.name is None), None)
    if found is None:
        return NO_RESULT
    if any(r is found for r in new):
        new.remove(found)
    return found.content


def _assistant(response: ChatResponse) -> Message:
    return Message("assistant", response.text, response.tool_calls)
