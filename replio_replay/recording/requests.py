"""Request drift, pure: how a request body sent now differs from the recorded one, named for a reviewer.

Tools are compared by name, whatever the wire format wraps them in, so a changed description
reads ``tools[file_read].description changed`` rather than ``tools[0].function.description``,
and a tool added or removed is named. Ids the provider or the run invented are left out.
"""

from __future__ import annotations

import re
from typing import Any

from .._runtime.diffing import Change, changes

__all__ = ["VOLATILE_PATHS", "keyed_tools", "request_changes"]

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


def request_changes(recorded: Any, sent: Any) -> list[Change]:
    """The differences from the recorded request body to the one sent now, tools named."""
    found = changes(keyed_tools(recorded), keyed_tools(sent), exclude_regex_paths=VOLATILE_PATHS)
    return [Change(_TOOL_PATH.sub(r"tools[\1]", c.path), c.kind, c.old, c.new) for c in found]
