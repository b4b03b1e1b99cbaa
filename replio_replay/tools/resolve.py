"""Resolving a run's tool set: sources -> `extends` -> `disable` -> `override` -> fixture -> MCP.

The sources are the built-in tools, the tools plugins register and the tools a tool-set file
declares, and the methods of the environments it declares (described by the fork server that
loads the project's Python files: see `child`); names are unique across them (a collision names both sources). The files of an
`extends` chain apply in order, the root first: a later system prompt wins, disabled names
add up, overrides apply in turn (a description replaced, parameters merged into the schema),
MCP servers are added (or removed, `null`) by name over the config's.
A fixture may then add its own (`plan.offer`). An MCP server's tools are known only once it
runs (or its recording is read): `with_mcp_tools` adds them per fixture, and applies the
disables, overrides and `tools_offered` that were waiting for them.
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
from .environment import Environment, environment
from .override import Override
from .schema import merge_patch, schema_problem
from .setfile import SetFile
from .toolset import DEFAULT_SYSTEM_PROMPT, Pending, ToolSet

if TYPE_CHECKING:
    from .child import ForkServer
    from .mcp.config import McpServer

__all__ = ["no_tool", "resolve_toolset", "tool_hint", "with_mcp_tools"]


def resolve_toolset(name: str, chain: Sequence[SetFile], sources: Iterable[Tool],
                    servers: Mapping[str, McpServer] | None = None, python: ForkServer | None = None) -> ToolSet:
    """The tool set named `name` from `sources` (built-ins, then plugins), the config's MCP `servers`
    and a file chain (root first); its environments and Python tools described by `python` (by
    default a fork server of its own)."""
    from .child import ForkServer

    python = python or ForkServer()
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
            tool = declared_tool(tool_name, decl, source=str(link.path), base_dir=link.path.parent, python=python)
            if tool_name in declared_by:  # a file later in the chain redefines its base's tool
                tools[tool_name] = tool
            else:
                _add(tools, tool)
            declared_by[tool_name] = link.path
    environments: dict[str, Environment] = {}
    for link in chain:
        for env_name, env_decl in link.data.environments.items():
            env = environment(env_name, env_decl, base_dir=link.path.parent, where=str(link.path),
                              source=str(link.path), server=python)
            for tool in environments[env_name].tools if env_name in environments else ():
                del tools[tool.name]  # a file later in the chain redefines its base's environment
            for tool in env.tools:
                _add(tools, tool)
            environments[env_name] = env
    known = frozenset(tools)
    prompt = DEFAULT_SYSTEM_PROMPT
    pending: list[Pending] = []  # changes to tools an MCP server may have
    for link in chain:
        prompt = link.data.system_prompt or prompt
        for tool_name in link.data.disable:
            if tool_name not in known:
                if not mcp:
                    raise ToolSetError(f"{link.path}: disable: {no_tool(tool_name, known)}")
                pending.append(Pending(f"{link.path}: disable", tool_name))
            tools.pop(tool_name, None)
        for tool_name, override in link.data.override.items():
            where = f"{link.path}: override.{tool_name}"
            if tool_name not in tools:
                if tool_name not in known and mcp:
                    pending.append(Pending(where, tool_name, override))
                    continue
                why = "it is disabled" if tool_name in known else no_tool(tool_name, known)
                raise ToolSetError(f"{where}: cannot override it: {why}")
            tools[tool_name] = _overridden(tools[tool_name], override, where)
    prices = {key: price for link in chain for key, price in link.data.prices.items()}
    return ToolSet(name, tuple(tools.values()), prompt, known, mcp, tuple(pending), environments=environments,
                   prices=prices, python=python)


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


def no_tool(name: str, known: Iterable[str]) -> str:
    """`no tool named 'x'` and a hint: the nearest known name, or the known ones."""
    return f"no tool named {name!r}{tool_hint(name, known)}"


def tool_hint(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the known name nearest to `name`, else `; known tools: ...`."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known tools: {', '.join(sorted(known))}"


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
            why = "it is disabled" if change.name in known else no_tool(change.name, known)
            raise ToolSetError(f"{change.where}: {why}")
        if change.override is None:
            del tools[change.name]
        else:
            tools[change.name] = _overridden(tools[change.name], change.override, change.where)
    listed = list(tools.values())
    if offered.only is not None:
        missing = [n for n in offered.only if n not in tools and n not in offered.names]
        if missing:
            raise ToolSetError(f"tools_offered: {no_tool(missing[0], known)}")
        listed = [t for t in listed if t.name in set(offered.only)]
    return ToolSet(offered.name, tuple(listed), offered.system_prompt, frozenset(known),
                   environments=offered.environments, prices=offered.prices, agent=offered.agent,
                   user_tools=offered.user_tools, python=offered.python)
