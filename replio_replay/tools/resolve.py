"""Resolving a run's tool set, pure: sources -> `extends` -> `disable` -> `override` -> fixture -> MCP.

The sources are the built-in tools, the tools plugins register and the tools a tool-set file
declares; names are unique across them (a collision names both sources). The files of an
`extends` chain apply in order, the root first: a later system prompt wins, disabled names
add up, overrides apply in turn (a description replaced, parameters merged into the schema),
MCP servers are added (or removed, `null`) by name over the config's.
A fixture may then declare tools of its own, name the ones it is offered, choose or bring
its MCP servers and its own system prompt (`for_fixture`). An MCP server's tools are known
only once it runs (or its recording is read): `with_mcp_tools` adds them per fixture, and
applies the disables, overrides and `tools_offered` that were waiting for them.
`name_problems` lists the tool names a fixture mentions that its tool set does not have.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolSetError
from .base import Tool
from .declared import declared_tool
from .override import Override
from .schema import merge_patch, schema_problem
from .setfile import SetFile
from .toolset import DEFAULT_SYSTEM_PROMPT, Pending, ToolSet

if TYPE_CHECKING:
    from ..fixtures.model import Fixture
    from .mcp.config import McpServer

__all__ = ["for_fixture", "name_problems", "resolve_toolset", "with_mcp_tools"]


def resolve_toolset(name: str, chain: Sequence[SetFile], sources: Iterable[Tool],
                    servers: Mapping[str, McpServer] | None = None) -> ToolSet:
    """The tool set named `name` from `sources` (built-ins, then plugins), the config's MCP `servers`
    and a file chain (root first)."""
    mcp = dict(servers or {})
    for link in chain:
        for server_name, server in link.data.mcp_servers.items():
            if server is None:
                mcp.pop(server_name, None)
            else:
                mcp[server_name] = server
    tools: dict[str, Tool] = {}
    for tool in sources:
        _add(tools, tool)
    declared_by: dict[str, Path] = {}
    for link in chain:
        for tool_name, decl in link.data.tools.items():
            tool = declared_tool(tool_name, decl, source=str(link.path), base_dir=link.path.parent)
            if tool_name in declared_by:  # a file later in the chain redefines its base's tool
                tools[tool_name] = tool
            else:
                _add(tools, tool)
            declared_by[tool_name] = link.path
    known = frozenset(tools)
    prompt = DEFAULT_SYSTEM_PROMPT
    pending: list[Pending] = []  # changes to tools an MCP server may have
    for link in chain:
        prompt = link.data.system_prompt or prompt
        for tool_name in link.data.disable:
            if tool_name not in known:
                if not mcp:
                    raise ToolSetError(f"{link.path}: disable: {_no_tool(tool_name, known)}")
                pending.append(Pending(f"{link.path}: disable", tool_name))
            tools.pop(tool_name, None)
        for tool_name, override in link.data.override.items():
            where = f"{link.path}: override.{tool_name}"
            if tool_name not in tools:
                if tool_name not in known and mcp:
                    pending.append(Pending(where, tool_name, override))
                    continue
                why = "it is disabled" if tool_name in known else _no_tool(tool_name, known)
                raise ToolSetError(f"{where}: cannot override it: {why}")
            tools[tool_name] = _overridden(tools[tool_name], override, where)
    return ToolSet(name, tuple(tools.values()), prompt, known, mcp, tuple(pending))


def _add(tools: dict[str, Tool], tool: Tool) -> None:
    other = tools.get(tool.name)
    if other is not None:
        raise ToolSetError(
            f"tool {tool.name!r} is defined twice: by {other.source} and by {tool.source}; "
            "rename one, or change the existing tool with `override` instead"
        )
    tools[tool.name] = tool


def _overridden(tool: Tool, override: Override, where: str) -> Tool:
    changes: dict[str, object] = {}
    if override.description is not None:
        changes["description"] = override.description
    if override.parameters is not None:
        merged = merge_patch(dict(tool.parameters), override.parameters)
        problem = schema_problem(merged)
        if problem:
            raise ToolSetError(f"{where}.parameters: after merging, {problem}")
        added = sorted(set(merged.get("properties") or {}) - set(tool.parameters.get("properties") or {}))
        if added and not tool.checks_schema:
            raise ToolSetError(
                f"{where}.parameters: {tool.name} takes no argument {added[0]!r}; an override can describe "
                "or constrain a tool's arguments, not add arguments its code does not take"
            )
        changes.update(parameters=merged, checks_schema=True)
    return dataclasses.replace(tool, **changes)  # type: ignore[arg-type]


def _no_tool(name: str, known: Iterable[str]) -> str:
    return f"no tool named {name!r}{_hint(name, known)}"


def _hint(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known tools: {', '.join(sorted(known))}"


def for_fixture(base: ToolSet, fixture: Fixture, origin: str) -> ToolSet:
    """`base` with the fixture's own tools added, restricted to `tools_offered`, with its prompt.

    Raises ToolSetError naming the fixture and field when that cannot be done.
    """
    if not fixture.tools and fixture.tools_offered is None and fixture.system_prompt is None \
            and fixture.mcp_servers is None:
        return base
    where = f"fixture {fixture.id!r} in tool set {base.name!r}"
    servers = _fixture_servers(base, fixture, where)
    base_dir = Path(origin).parent if not origin.startswith("plugin:") else None
    tools = list(base.tools)
    for tool_name, decl in fixture.tools.items():
        if tool_name in base.known:
            raise ToolSetError(f"{where}: tools.{tool_name}: the tool set already has a tool of that name; "
                               "rename the fixture's tool")
        tools.append(declared_tool(tool_name, decl, source=f"fixture {fixture.id!r} ({origin})", base_dir=base_dir))
    only = None
    if fixture.tools_offered is not None:
        names = {t.name for t in tools}
        missing = [n for n in fixture.tools_offered if n not in names]
        if missing and not servers:  # else an MCP server may have them: `with_mcp_tools` checks
            raise ToolSetError(f"{where}: tools_offered: {_no_tool(missing[0], names)}")
        tools = [t for t in tools if t.name in set(fixture.tools_offered)]
        only = tuple(fixture.tools_offered)
    pending = base.pending
    if fixture.mcp_servers is not None:  # some servers, or its own: a change may be for another's tool
        pending = tuple(dataclasses.replace(p, optional=True) for p in pending)
    return base.replace(tools=tools, system_prompt=fixture.system_prompt, mcp_servers=servers, only=only,
                        pending=pending)


def _fixture_servers(base: ToolSet, fixture: Fixture, where: str) -> Mapping[str, McpServer]:
    """The fixture's MCP servers: its own, the ones it names, or (by default) the tool set's."""
    chosen = fixture.mcp_servers
    if chosen is None:
        return base.mcp_servers
    if isinstance(chosen, dict):
        return chosen
    unknown = [n for n in chosen if n not in base.mcp_servers]
    if unknown:
        have = ", ".join(sorted(base.mcp_servers)) or "none"
        raise ToolSetError(f"{where}: mcp_servers: the tool set has no MCP server named {unknown[0]!r} "
                           f"(it has: {have}); add it to mcp_servers in .replio/config.json or the tool-set file")
    return {n: base.mcp_servers[n] for n in chosen}


def with_mcp_tools(offered: ToolSet, added: Sequence[Tool]) -> ToolSet:
    """`offered` with its MCP servers' tools, and the disables, overrides and `tools_offered` that
    were waiting for them applied; ToolSetError when a name collides or names no tool at all."""
    tools = {t.name: t for t in offered.tools}
    known = set(offered.known)
    for tool in added:
        if tool.name in known:
            other = tools.get(tool.name)
            by = other.source if other is not None else "a tool the tool set disables"
            raise ToolSetError(
                f"tool {tool.name!r} is defined twice: by {by} and by {tool.source}; give the server a "
                '"prefix" in its configuration (say "prefix": "srv_") so its tools get names of their own'
            )
        tools[tool.name] = tool
        known.add(tool.name)
    for change in offered.pending:
        if change.name not in tools:
            if change.optional and change.name not in known:
                continue
            why = "it is disabled" if change.name in known else _no_tool(change.name, known)
            raise ToolSetError(f"{change.where}: {why}")
        if change.override is None:
            del tools[change.name]
        else:
            tools[change.name] = _overridden(tools[change.name], change.override, change.where)
    listed = list(tools.values())
    if offered.only is not None:
        missing = [n for n in offered.only if n not in tools and n not in offered.names]
        if missing:
            raise ToolSetError(f"tools_offered: {_no_tool(missing[0], known)}")
        listed = [t for t in listed if t.name in set(offered.only)]
    return ToolSet(offered.name, tuple(listed), offered.system_prompt, frozenset(known))


def name_problems(fixture: Fixture, toolset: ToolSet) -> list[str]:
    """Tool names the fixture mentions that its tool set cannot satisfy, one message per field.

    Calls that are expected or required (`expected`, `verifier.exact`, `must_include`, `args`)
    must name an offered tool; `avoid` and `tools_deny` must name a tool the set knows (a
    disabled one is fine: it is avoided by construction).
    """
    offered, known = set(toolset.names), set(toolset.known)
    maybe_mcp = bool(toolset.mcp_servers)  # names it does not know may be an MCP server's: checked once listed
    must = "so the check can never pass"
    moot = "so it has no effect; check the spelling"
    verifier = fixture.verifier
    fields: list[tuple[str, Sequence[str], set[str], str]] = [("expected", fixture.expected_names or [], offered, must)]
    if verifier is not None:
        exact = verifier.exact if isinstance(verifier.exact, list) else []
        fields += [
            ("verifier.exact", exact, offered, must),
            ("verifier.must_include", verifier.must_include, offered, must),
            ("verifier.args", list(verifier.args), offered, must),
            ("verifier.avoid", verifier.avoid, known, moot),
            ("verifier.in_order", [e if isinstance(e, str) else e.name for e in verifier.in_order], offered, must),
        ]
    fields.append(("tools_deny", fixture.tools_deny, known, moot))
    problems = []
    for field, names, allowed, effect in fields:
        for name in dict.fromkeys(n for n in names if n not in allowed and not (maybe_mcp and n not in known)):
            what = f"{name!r} is not offered" if name in known else f"no tool named {name!r}"
            hint = "" if name in known else _hint(name, allowed)
            problems.append(f"{field}: {what} in tool set {toolset.name!r}, {effect}{hint}")
    return problems
