"""Whether a replayed request carries the conversation its recording did, pure: the shape, not the words.

An agent's replay is answered from its recording in order. When the agent declares something
else (a tool's description, its system prompt, a parameter), the request differs but the
conversation is the recorded one: that is request drift, and the replay goes on. When the
conversation itself differs (another number of messages, other roles, other calls carried back,
as when an agent sends one extra warm-up request and every recorded answer comes one request
late), the recorded answer was made for another question: the replay went another way, and the
fixture ends in error (`difference`). Compared are the messages but system and developer ones,
each by its role (a tool result as ``tool``, whatever the wire format) and the calls it carries
(name and arguments, ids left out), in every wire format the relay serves: Chat Completions,
Ollama and Anthropic's ``messages``, the Responses API's ``input``, Gemini's ``contents``. The
text of messages and tool results is request drift (a tool that reads the clock answers
otherwise on replay), not a different conversation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._runtime.jsoncanon import canonical
from .._runtime.wording import plural

__all__ = ["difference", "shape"]

#: One message: its role and the calls it carries, as (name, canonical arguments).
Turn = tuple[str, tuple[tuple[str, str], ...]]

_UNSPOKEN = frozenset({"system", "developer"})


def shape(body: Any) -> list[Turn] | None:
    """The conversation `body` carries, message by message; None when it holds none this knows."""
    if not isinstance(body, dict):
        return None
    for key, read in (("messages", _message), ("contents", _gemini), ("input", _responses_item)):
        items = body.get(key)
        if isinstance(items, list):
            return [turn for item in items if isinstance(item, dict) and (turn := read(item)) is not None]
        if key == "input" and isinstance(items, str):
            return [("user", ())]
    return None


def difference(recorded: Any, sent: Any, volatile: re.Pattern[str] | None = None) -> str | None:
    """How the conversation `sent` carries differs from the one `recorded` did, in a sentence; None
    when it does not (or either holds none, or the agent marked its messages `volatile`)."""
    if volatile is not None and any(volatile.match(k) for k in ("messages", "contents", "input")):
        return None
    old, new = shape(recorded), shape(sent)
    if old is None or new is None or old == new:
        return None
    if len(old) != len(new):
        return f"it holds {plural(len(new), 'message')} where the recording's held {len(old)}"
    i = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    (old_role, old_calls), (new_role, new_calls) = old[i], new[i]
    if old_role != new_role:
        return f"its message {i + 1} is the {new_role}'s where the recording's was the {old_role}'s"
    return f"its message {i + 1} carries {_calls(new_calls)} where the recording's carried {_calls(old_calls)}"


def _calls(calls: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{name}({arguments})" for name, arguments in calls) or "no call"


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return canonical(value)


def _message(message: dict[str, Any]) -> Turn | None:
    """A Chat Completions, Ollama or Anthropic message."""
    role = str(message.get("role"))
    if role in _UNSPOKEN:
        return None
    calls = [(str(c["function"].get("name")), _arguments(c["function"].get("arguments")))
             for c in message.get("tool_calls") or () if isinstance(c, dict) and isinstance(c.get("function"), dict)]
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls += [(str(b.get("name")), _arguments(b.get("input"))) for b in blocks if b.get("type") == "tool_use"]
    if blocks and all(b.get("type") == "tool_result" for b in blocks):
        role = "tool"
    return role, tuple(calls)


def _gemini(content: dict[str, Any]) -> Turn:
    parts = [p for p in content.get("parts") or () if isinstance(p, dict)]
    calls = tuple((str(p["functionCall"].get("name")), _arguments(p["functionCall"].get("args")))
                  for p in parts if isinstance(p.get("functionCall"), dict))
    if parts and all("functionResponse" in p for p in parts):
        return "tool", calls
    return ("assistant" if content.get("role") == "model" else str(content.get("role", "user"))), calls


def _responses_item(item: dict[str, Any]) -> Turn | None:
    kind = item.get("type")
    if kind == "function_call":
        return "assistant", ((str(item.get("name")), _arguments(item.get("arguments"))),)
    if kind == "function_call_output":
        return "tool", ()
    if kind not in (None, "message"):
        return None  # reasoning and other items the model made: not the conversation's messages
    role = str(item.get("role"))
    return None if role in _UNSPOKEN else (role, ())
