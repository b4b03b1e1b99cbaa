"""One fixture run through the user's own agent instead of replio's loop: relay, process, user, trace.

The relay (`providers.relay`) is served for this fixture alone and sends through the fixture's
session (so the cassette records or replays every exchange as role ``agent``); the agent process
(`agents.process`) starts in the worktree with the relay's URLs; the user is the fixture's task,
its scripted turns or its simulated user (`run.simulator`), exactly as for replio's loop. The
trace is read back from the exchanges (`agents.trace`) into the same `Transcript` the loop makes,
so every check, metric, golden and report works unchanged.

An agent that says it stopped at a step limit of its own (`agents.protocol.reply(...,
truncated=True)`) ends the fixture `truncated`, as replio's loop does at its turn limit.
A fixture ends in `error` when a request could not be relayed (named: no recording for it, the
provider unreachable, a wire format the provider does not speak), when the agent failed (exit
status, timeout, crash: `agents.process`), or when it never sent the model a request.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from .._runtime.deadline import Interrupted
from .._runtime.redact import Redactor
from ..agents.decl import AgentSpec
from ..agents.process import STDERR_CAP, AgentProcess
from ..errors import AgentError, ReplioError
from ..judge.results import Status
from ..judge.turns import TurnEvidence
from ..providers.base import Message, Usage
from ..providers.relay import Relay, RelayServer
from .agent_trace import AgentTurn, read_trace
from .engine import NextUser, Transcript

__all__ = ["AgentRun", "run_agent"]


@dataclass
class AgentRun:
    """What running the agent on one fixture gave: the transcript, the end of what it wrote on
    standard error (redacted), and whether its exchanges are whole (False: it was stopped while a
    request was in flight, so its recording must not be kept)."""

    transcript: Transcript
    stderr: str = ""
    complete: bool = True


def run_agent(spec: AgentSpec, user: str | NextUser, relay: Relay, *, root: Path, redactor: Redactor,
              cancel: threading.Event | None = None) -> AgentRun:
    """Run the agent `spec` on one fixture in `root`, its model requests through `relay`."""
    out = Transcript()
    turns: list[AgentTurn] = []
    with RelayServer(relay) as server:
        task = user if isinstance(user, str) else None
        try:
            agent = AgentProcess(spec, cwd=root, base_url=server.base_url, task=task, cancel=cancel)
        except AgentError as exc:
            return AgentRun(_ended(out, Status.ERROR, str(exc)))
        try:
            if isinstance(user, str):
                answer = agent.answer()
                turns.append(AgentTurn(user, answer.text, len(relay.exchanges)))
                if answer.truncated:
                    out.status = Status.TRUNCATED
            else:
                _converse(agent, user, relay, out, turns)
        except Interrupted:
            out.status = Status.CANCELLED
        except ReplioError as exc:  # the agent failed (AgentError), or the simulated user's provider did
            out.status, out.error = Status.ERROR, str(exc)
        finally:
            stderr = agent.close().stderr
            in_flight = relay.close()
    _read(out, relay, turns)
    if in_flight and out.status is not Status.CANCELLED:
        out.status = Status.ERROR
        out.error = (f"{out.error}; " if out.error else "") + (
            f"the agent ended while its request #{len(relay.exchanges) + 1} to the model was in flight: "
            "what it was answered is not recorded")
    return AgentRun(out, redactor.cut(stderr[-STDERR_CAP:], STDERR_CAP), complete=not in_flight)


def _converse(agent: AgentProcess, user: NextUser, relay: Relay, out: Transcript, turns: list[AgentTurn]) -> None:
    """Each user message to the agent and its answer back, until the user is done."""
    while True:
        said = user(out.messages)
        if isinstance(said, Status):
            agent.end()
            out.status = said
            return
        answer = agent.ask(said)
        turns.append(AgentTurn(said, answer.text, len(relay.exchanges)))
        out.messages += [Message("user", said), Message("assistant", answer.text)]
        if answer.truncated:  # it stopped at a step limit of its own: the conversation ends there
            agent.end()
            out.status = Status.TRUNCATED
            return


def _read(out: Transcript, relay: Relay, turns: list[AgentTurn]) -> None:
    """Fill `out` with what the exchanges say; the relay's failures come first among errors, and a
    request the agent stopped sending comes after why it stopped (the agent was stopped at its timeout)."""
    if relay.failures and out.status is not Status.CANCELLED:
        out.status, out.error = Status.ERROR, relay.failures[0]
    if relay.cut and out.status is not Status.CANCELLED:
        out.status, out.error = Status.ERROR, "; ".join(filter(None, [out.error, relay.cut[0]]))
    try:
        trace = read_trace(relay.exchanges, turns)
    except AgentError as exc:
        _ended(out, Status.ERROR, str(exc))
        return
    out.records, out.messages, out.finishes = trace.records, trace.messages, trace.finishes
    out.answer = turns[-1].answer if turns else ""
    out.turn_ends = [TurnEvidence(calls, turn.answer) for calls, turn in zip(trace.turn_calls, turns)]
    for usage in trace.usage:
        out.tokens += usage.tokens
        out.count("agent", usage)
    if not out.tokens_by_role:  # no answer: nothing spent
        out.count("agent", Usage(0, 0))
    if not relay.exchanges and out.status is Status.OK:
        _ended(out, Status.ERROR, "the agent never sent the model a request: point its SDK at the relay "
                                  "(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, OLLAMA_HOST or "
                                  "REPLIO_BASE_URL, all set in its environment)")


def _ended(out: Transcript, status: Status, error: str) -> Transcript:
    out.status, out.error = status, error
    return out
