"""Request drift, pure: how a request body sent now differs from the recorded one, named for a reviewer.

Tools are compared by name, whatever the wire format wraps them in, so a changed description
reads ``tools[file_read].description changed`` rather than ``tools[0].function.description``,
and a tool added or removed is named. A tool's result that changed (a Python tool or an
environment re-run on replay answering otherwise) is named by its tool and call:
``messages[3](cancel_order, call 2).content tool_result_changed``, whatever the wire format
(OpenAI's and Ollama's ``tool`` messages, Anthropic's ``tool_result`` blocks). Ids the provider or
the run invented are left out.
"""

from __future__ import annotations

import re
from typing import Any

from .._runtime.diffing import Change, changes

__all__ = ["VOLATILE_PATHS", "keyed_tools", "request_changes", "volatile_pattern"]

#: Request-body fields left out of request drift: ids the provider or the run invented.
VOLATILE_PATHS = (r"\['(id|call_id|tool_call_id|tool_use_id|user|metadata)'\]$",)

_TOOL_PATH = re.compile(r"^tools\.([A-Za-z0-9_-]+)")


def keyed_tools(body: Any) -> Any:
    """`body` with its `tools` list turned into name -> spec (the wire envelope and name removed).

    OpenAI and Ollama wrap a tool as ``{"type": "function", "function": {name, ...}}``,
    Anthropic sends ``{name, description, input_schema}``, the Responses API
    ``{"type": "function", name, ...}`` and Gemini ``{"functionDeclarations": [{name, ...}]}``;
    all become ``{name: {...}}``.
    A list that is not of named tools, or names one twice, is left as it is.
    """
    if not isinstance(body, dict) or not isinstance(body.get("tools"), list):
        return body
    keyed: dict[str, Any] = {}
    for item in _flat(body["tools"]):
        if not isinstance(item, dict):
            return body
        function = item.get("function")
        inner: dict[str, Any] = function if isinstance(function, dict) else item
        name = inner.get("name")
        if not isinstance(name, str) or name in keyed:
            return body
        spec = {k: v for k, v in inner.items() if k != "name"}
        if inner is not item:
            spec.update({k: v for k, v in item.items() if k not in ("function", "type")})
        keyed[name] = spec
    return {**body, "tools": keyed}


def _flat(tools: list[Any]) -> list[Any]:
    """Gemini's tools, ``[{"functionDeclarations": [...]}]``, as the list of declarations."""
    out: list[Any] = []
    for item in tools:
        declarations = item.get("functionDeclarations") if isinstance(item, dict) else None
        out.extend(declarations if isinstance(declarations, list) else [item])
    return out


def request_changes(recorded: Any, sent: Any, volatile: re.Pattern[str] | None = None) -> list[Change]:
    """The differences from the recorded request body to the one sent now, tools named; those whose
    path `volatile` matches (`volatile_pattern`: fields a user's agent varies) left out."""
    found = changes(keyed_tools(recorded), keyed_tools(sent), exclude_regex_paths=VOLATILE_PATHS)
    named = [Change(_TOOL_PATH.sub(r"tools[\1]", c.path), c.kind, c.old, c.new) for c in found]
    return [_tool_result_named(c, recorded if c.kind == "removed" else sent) for c in named
            if volatile is None or not volatile.match(c.path)]


def volatile_pattern(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    """The change paths `globs` mark volatile (an agent's `volatile`): a glob is a path as drift names
    it, `*` standing for any characters (`messages[*].content`, `metadata`), and covers what is
    under it (`metadata.trace_id`); None for none."""
    if not globs:
        return None
    alternatives = "|".join(".*".join(re.escape(part) for part in glob.split("*")) for glob in globs)
    return re.compile(rf"(?:{alternatives})(?:$|[.\[(])")


_RESULT_PATH = re.compile(r"^messages\[(\d+)\](?:\.content\[(\d+)\])?")


def _tool_result_named(change: Change, body: Any) -> Change:
    """`change` named by tool and call when it is inside a tool's result in `body`."""
    match = _RESULT_PATH.match(change.path)
    messages = body.get("messages") if isinstance(body, dict) else None
    if match is None or not isinstance(messages, list) or int(match[1]) >= len(messages):
        return change
    results, i = _tool_results(messages), int(match[1])
    if match[2] is not None and (i, int(match[2])) in results:  # an Anthropic tool_result block
        (ordinal, name), end = results[(i, int(match[2]))], match.end()
    elif (i, None) in results:  # an OpenAI or Ollama tool message
        (ordinal, name), end = results[(i, None)], len(f"messages[{i}]")
    else:
        return change
    path = f"{change.path[:end]}({name}, call {ordinal}){change.path[end:]}"
    return Change(path, "tool_result_changed" if change.kind == "changed" else change.kind, change.old, change.new)


def _tool_results(messages: list[Any]) -> dict[tuple[int, int | None], tuple[int, str]]:
    """(message, block or None) -> (the call's ordinal in the conversation, its tool) for every tool result."""
    names: dict[str, str] = {}  # call id -> tool
    found: dict[tuple[int, int | None], tuple[int, str]] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or ():  # OpenAI
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name"))
        if message.get("role") == "tool":  # OpenAI by id, Ollama by name
            name = message.get("tool_name") or names.get(str(message.get("tool_call_id")), "?")
            found[(i, None)] = (len(found) + 1, str(name))
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else ()):  # Anthropic
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            elif block.get("type") == "tool_result":
                found[(i, j)] = (len(found) + 1, names.get(str(block.get("tool_use_id")), "?"))
    return found
