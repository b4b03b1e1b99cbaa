"""Where a run's tools come from, read from disk and plugins: built-ins, plugin tools, tool-set files.

`plugin_tools` collects the tools plugins register (a plugin whose hook fails, or that
registers something that is not a tool, is reported and its tools left out);
`load_toolsets` finds each named tool set's file chain and hands it, with the built-in and
plugin tools, to the pure resolution in `resolve`, and checks that a command tool's program
is there, so a missing one fails at load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import pluggy

from .._runtime.problems import Problem
from ..errors import ToolSetError
from .base import Tool
from .builtin import builtin_tools
from .declared import command_argv
from .mcp.config import McpServer
from .resolve import resolve_toolset
from .schema import name_problem
from .setfile import SetFile, load_chain, locate
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
        chain = load_chain(path) if path else []
        toolset = resolve_toolset(name, chain, sources, servers)
        _check_commands(chain, {t.name for t in toolset.tools})
        toolsets.append(toolset)
    seen = [t.name for t in toolsets]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ToolSetError(f"--tools names the tool set {twice[0]!r} twice; give each tool set once")
    return toolsets, problems


def _check_commands(chain: Sequence[SetFile], offered: set[str]) -> None:
    """A command tool the set offers whose program (or a file beside the declaration it names) is
    missing fails the tool set now, rather than each fixture that calls it."""
    last = {name: (link, decl) for link in chain for name, decl in link.data.tools.items()}
    for name, (link, decl) in last.items():
        if decl.command is None or name not in offered:
            continue
        from .command import missing_program

        problem = missing_program(command_argv(decl.command, link.path.parent), decl.command)
        if problem:
            raise ToolSetError(f"{link.path}: tools.{name}.command: {problem}")


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
