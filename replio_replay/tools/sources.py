"""Where a run's tools come from, read from disk and plugins: built-ins, plugin tools, tool-set files.

`plugin_tools` collects the tools plugins register (a plugin whose hook fails, or that
registers something that is not a tool, is reported and its tools left out);
`load_toolsets` finds each named tool set's file chain and hands it, with the built-in and
plugin tools, to the pure resolution in `resolve`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import pluggy

from ..errors import ToolSetError
from ..fixtures.sources import Problem
from ..mcp.config import McpServer
from .base import Tool
from .builtin import builtin_tools
from .resolve import resolve_toolset
from .schema import name_problem
from .setfile import load_chain, locate
from .toolset import ToolSet

__all__ = ["load_toolsets", "plugin_tools"]


def load_toolsets(
    project: Path, names: Sequence[str], configured: str | None, pm: pluggy.PluginManager,
    servers: Mapping[str, McpServer] | None = None,
) -> tuple[list[ToolSet], list[Problem]]:
    """The tool sets `names` names (`default`, a variant, a file), and the plugins that failed.

    `configured` is the config's `tools` (the default set's file), `servers` its `mcp_servers`.
    Raises ToolSetError (or UsageError for a name that is not a tool set) before anything runs.
    """
    extra, problems = plugin_tools(pm)
    sources = [*builtin_tools(), *extra]
    toolsets = []
    for wanted in names:
        name, path = locate(project, wanted, configured)
        toolsets.append(resolve_toolset(name, load_chain(path) if path else [], sources, servers))
    seen = [t.name for t in toolsets]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ToolSetError(f"--tools names the tool set {twice[0]!r} twice; give each tool set once")
    return toolsets, problems


def plugin_tools(pm: pluggy.PluginManager) -> tuple[list[Tool], list[Problem]]:
    """Every tool plugins register, in registration order, and the plugins that failed."""
    tools: list[Tool] = []
    problems: list[Problem] = []
    for impl in pm.hook.register_tools.get_hookimpls():
        source = f"plugin:{impl.plugin_name}"
        added: dict[str, object] = {}
        try:
            impl.function(tools=added)
        except Exception as exc:  # a plugin's bug must not stop the rest
            problems.append(Problem(source, f"register_tools failed: {type(exc).__name__}: {exc}"))
            continue
        for name, value in added.items():
            problem = name_problem(str(name))
            if problem:
                problems.append(Problem(source, problem))
                continue
            if not isinstance(value, Tool):
                problems.append(Problem(source, f"tool {name!r} is a {type(value).__name__}, not a Tool; "
                                                "make it with the replio_replay.tool decorator"))
                continue
            tools.append(dataclasses.replace(value, name=str(name), source=source))
    return tools, problems
