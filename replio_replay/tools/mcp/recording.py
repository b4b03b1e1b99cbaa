"""A fixture's MCP exchanges as its cassette holds them, and how a live server drifted from them, pure.

A cassette's ``mcp:`` section maps each server's name to what it said: ``server`` (name and
version from initialisation), ``tools`` (its `tools/list`, as the protocol's JSON) and
``calls`` (each `tools/call` in the order made: ``tool``, ``arguments``, ``result``). A replay
answers a call with the first unused recorded call of the same tool and arguments.

A result is recorded as `recordable` makes it: what the model saw, not more. Media a model
never sees (an image's or audio's data, a resource's blob) is kept as its size (``dataBytes``,
``blobBytes``), and a result whose text is longer than the model is shown (`RESULT_CAP`
characters in all, whatever the number of blocks) is cut to one character more, so a replay is
cut, and says so, as the live run was; a cassette stays readable and its size bounded. A live
result is compared in the same form.

Drift names what a reviewer needs: ``mcp git: tools[git_log].description changed``,
``mcp git: call 2 git_log result changed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..._runtime.diffing import Change, changes
from ..._runtime.jsoncanon import canonical
from ...errors import CassetteError
from ..toolbox import RESULT_CAP

__all__ = ["CallRecord", "ServerRecord", "call_drift", "parse_records", "recordable", "records_json", "tools_drift"]

#: Characters of a result's text a recording keeps: one more than the model is shown, so the
#: replayed text is cut (with the same note) where the live one was.
_KEPT = RESULT_CAP + 1


@dataclass
class CallRecord:
    """One `tools/call`: the tool's name on the server, the arguments, the result's JSON."""

    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    used: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "result": self.result}


@dataclass
class ServerRecord:
    """What one server said during one fixture."""

    server: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "tools": self.tools, "calls": [c.to_json() for c in self.calls]}

    def take(self, tool: str, arguments: dict[str, Any]) -> CallRecord | None:
        """The first recorded call of `tool` with these arguments not yet replayed (marked used)."""
        wanted = canonical(arguments)
        for call in self.calls:
            if not call.used and call.tool == tool and canonical(call.arguments) == wanted:
                call.used = True
                return call
        return None


def recordable(result: dict[str, Any]) -> dict[str, Any]:
    """`result` as a cassette keeps it: media as its size, no more text than the model saw
    (see the module's docstring); its `result_text` starts as the live result's does."""
    from .convert import result_text

    content = result.get("content")
    if not isinstance(content, list):
        return result
    kept = {**result, "content": [_sized(b) for b in content]}
    if len(result_text(kept)) <= _KEPT:
        return kept  # whole: all of it was shown
    return _cut(kept)


def _sized(item: Any) -> Any:
    """A content block with its media data replaced by the data's size."""
    from .convert import decoded_size

    if not isinstance(item, dict):
        return item
    item = dict(item)
    if item.get("type") in ("image", "audio") and isinstance(item.get("data"), str):
        item["dataBytes"] = decoded_size(item.pop("data"))
    if isinstance(item.get("resource"), dict):
        item["resource"] = _sized(item["resource"])
        if isinstance(item["resource"].get("blob"), str):
            item["resource"]["blobBytes"] = decoded_size(item["resource"].pop("blob"))
    return item


def _cut(result: dict[str, Any]) -> dict[str, Any]:
    """A result longer than the model was shown, as one text block of what it was shown (and one
    character more): the blocks past that, and structured content, were never seen."""
    from .convert import result_text

    text = result_text({**result, "isError": False})[:_KEPT]
    cut = {k: v for k, v in result.items() if k != "structuredContent"}
    return {**cut, "content": [{"type": "text", "text": text}]}


def records_json(records: dict[str, ServerRecord]) -> dict[str, Any]:
    """The ``mcp:`` section for `records`, servers in name order."""
    return {name: records[name].to_json() for name in sorted(records)}


def parse_records(data: Any, source: str) -> dict[str, ServerRecord]:
    """The ``mcp:`` section of cassette `source`; CassetteError naming the field when it is malformed."""

    def wrong(where: str, problem: str) -> CassetteError:
        return CassetteError(f"cassette {source} has the wrong shape: mcp.{where} {problem}; fix that field, "
                             "or delete the cassette and record it again")

    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CassetteError(f"cassette {source} has the wrong shape: mcp must map server names to what each "
                            "said; delete the cassette and record it again")
    records = {}
    for name, value in data.items():
        if not isinstance(value, dict):
            raise wrong(str(name), "must be a mapping with server, tools and calls")
        server = value.get("server") or {}
        tools = value.get("tools") or []
        calls = value.get("calls") or []
        if not isinstance(server, dict):
            raise wrong(f"{name}.server", "must be a mapping (name, version)")
        if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str)
                                                  for t in tools):
            raise wrong(f"{name}.tools", "must be a list of tools, each with a name")
        if not isinstance(calls, list):
            raise wrong(f"{name}.calls", "must be a list")
        parsed = []
        for number, call in enumerate(calls, 1):
            where = f"{name}.calls[{number}]"
            if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
                raise wrong(where, "must be a mapping with tool, arguments and result")
            arguments, result = call.get("arguments") or {}, call.get("result")
            if not isinstance(arguments, dict):
                raise wrong(f"{where}.arguments", "must be a mapping")
            if not isinstance(result, dict):
                raise wrong(f"{where}.result", "must be the tool's result (a mapping with content)")
            parsed.append(CallRecord(call["tool"], arguments, result))
        records[str(name)] = ServerRecord(server, tools, parsed)
    return records


_TOOL_PATH = re.compile(r"^tools\.([^.\[]+)")


def _keyed(match: re.Match[str]) -> str:
    return f"tools[{match.group(1)}]"


def tools_drift(server: str, recorded: ServerRecord, live: ServerRecord) -> list[Change]:
    """How the live server's identity and tool list differ from the recording, tools named."""
    found = [Change(f"mcp {server}: server.{c.path}", c.kind, c.old, c.new)
             for c in changes(recorded.server, live.server)]
    old = {"tools": {t["name"]: {k: v for k, v in t.items() if k != "name"} for t in recorded.tools}}
    new = {"tools": {t["name"]: {k: v for k, v in t.items() if k != "name"} for t in live.tools}}
    found += [Change(f"mcp {server}: {_TOOL_PATH.sub(_keyed, c.path)}", c.kind, c.old, c.new)
              for c in changes(old, new)]
    return found


def call_drift(server: str, number: int, recorded: CallRecord | None, live: CallRecord) -> list[Change]:
    """How call `number` (1-based, per server) differs from the recording's call of that number."""
    where = f"mcp {server}: call {number} {live.tool}"
    if recorded is None:
        return [Change(where, "added", None, live.arguments)]
    if recorded.tool != live.tool:
        return [Change(f"mcp {server}: call {number} tool", "changed", recorded.tool, live.tool)]
    if canonical(recorded.arguments) != canonical(live.arguments):
        return [Change(f"{where} arguments", "changed", recorded.arguments, live.arguments)]
    if canonical(recorded.result) != canonical(live.result):
        from .convert import result_text

        return [Change(f"{where} result", "changed", result_text(recorded.result), result_text(live.result))]
    return []
