"""What an agent that replio runs reads and writes: the task, or each user message, and its answers.

A fixture with one task gives it in ``REPLIO_TASK`` and on standard input; the agent's standard
output is its answer. A conversation (scripted `turns`, a simulated `user`) sets
``REPLIO_CONVERSATION=1`` and speaks one JSON line per message: replio writes ``{"user": "..."}``,
the agent writes one ``{"answer": "..."}`` back per user message; the end of standard input ends
the conversation. `agent_messages` and `reply` make either one loop::

    from replio_replay import agent_messages, reply

    for message in agent_messages():
        reply(my_agent(message))

An agent that stops at a step limit of its own (the OpenAI Agents SDK's `MaxTurnsExceeded`,
LangGraph's `GRAPH_RECURSION_LIMIT`) says so with ``reply(text, truncated=True)``: its answer
line is then ``{"answer": "...", "truncated": true}`` (in a conversation and for one task
alike), and the fixture ends `truncated`, as when replio's own loop runs out of turns; the
conversation ends there. An agent declared as a Python function raises `Truncated` instead.

This module imports nothing of replio's engine: an agent pays only for the standard library.
A lone surrogate in an answer (a file name that is not UTF-8, as `os.listdir` reads it) is written
as U+FFFD, as replio keeps it, instead of failing the agent on its way to standard output.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import IO

from .._runtime.surrogates import clean_text

__all__ = ["CONVERSATION", "TASK", "Truncated", "agent_messages", "reply", "truncated_answer"]

#: The variable holding a one-task fixture's task.
TASK = "REPLIO_TASK"
#: Set to ``1`` for a conversation: messages and answers go as JSON lines.
CONVERSATION = "REPLIO_CONVERSATION"


class Truncated(Exception):  # noqa: N818 - what the agent is, not a failure: replio's `truncated` status
    """Raised by an agent declared as a Python function that stopped at a step limit of its own:
    the fixture ends `truncated`, with `answer` (what the agent had by then) as its answer."""

    def __init__(self, answer: str = "") -> None:
        super().__init__(answer)
        self.answer = answer


def _conversation() -> bool:
    return os.environ.get(CONVERSATION) == "1"


def agent_messages(stdin: IO[str] | None = None) -> Iterator[str]:
    """Each user message for the agent to answer, in order: the one task, or each message of a
    conversation until replio closes standard input."""
    stream = stdin if stdin is not None else sys.stdin
    if not _conversation():
        task = os.environ.get(TASK)
        yield task if task is not None else stream.read()
        return
    for line in stream:
        if not line.strip():
            continue
        data = json.loads(line)
        if not isinstance(data, dict) or not isinstance(data.get("user"), str):
            raise ValueError(f"replio sent a line that is not {{\"user\": \"...\"}}: {line[:80]!r}")
        yield data["user"]


def reply(text: str, stdout: IO[str] | None = None, *, truncated: bool = False) -> None:
    """Answer the last user message with `text` (as a JSON line in a conversation), flushed at once;
    `truncated`: the agent stopped at a step limit of its own, and `text` is what it had by then."""
    if not isinstance(text, str):
        raise TypeError(f"reply() takes the answer as a str, not {type(text).__name__}")
    stream = stdout if stdout is not None else sys.stdout
    text = clean_text(text)
    if truncated:
        stream.write(json.dumps({"answer": text, "truncated": True}, ensure_ascii=False) + "\n")
    else:
        stream.write(json.dumps({"answer": text}, ensure_ascii=False) + "\n" if _conversation() else text + "\n")
    stream.flush()


def truncated_answer(output: str) -> str | None:
    """The answer of an answer line that says it was cut short (``{"answer": ..., "truncated": true}``);
    None for any other output."""
    try:
        data = json.loads(output)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("truncated") is True and isinstance(data.get("answer"), str):
        return str(data["answer"])
    return None
