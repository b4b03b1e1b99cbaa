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
from ..agents.decl import AgentDecl, AgentSpec, resolve_agent
from ..errors import ToolSetError
from .base import Tool
from .builtin import builtin_tools
from .child import ForkServer
from .declared import command_argv
from .mcp.config import McpServer
from .resolve import resolve_toolset
from .schema import name_problem
from .setfile import CONFIG_DIR, SetFile, load_chain, locate
from .toolset import ToolSet

__all__ = ["load_toolsets", "plugin_tools"]


def load_toolsets(
    project: Path, names: Sequence[str], configured: str | None, pm: pluggy.PluginManager,
    servers: Mapping[str, McpServer] | None = None, *, agent: AgentDecl | None = None,
    agent_flag: AgentSpec | None = None,
) -> tuple[list[ToolSet], list[Problem]]:
    """The tool sets `names` names (`default`, a variant, a file), and the plugins that failed.

    `configured` is the config's `tools` (the default set's file), `servers` its `mcp_servers`,
    `agent` its `agent` (for the sets whose files declare none); `agent_flag` (`--agent`) is every
    set's agent. Raises ToolSetError (or UsageError for a name that is not a tool set) before
    anything runs.
    """
    extra, problems = plugin_tools(pm)
    sources = [*builtin_tools(), *extra]
    # The config's paths are relative to the project, as its `tools` and `baseline` are.
    default_agent = resolve_agent(agent, project, f"{project / CONFIG_DIR / 'config.json'}: agent") \
        if agent is not None and agent_flag is None else agent_flag
    toolsets = []
    python = ForkServer()  # one per load: the sets and their fixtures share what it describes
    for wanted in names:
        name, path = locate(project, wanted, configured)
        chain = load_chain(path) if path else []
        toolset = resolve_toolset(name, chain, sources, servers, python)
        _check_commands(chain, {t.name for t in toolset.tools})
        toolsets.append(_with_agent(toolset, chain, default_agent, agent_flag is not None))
    seen = [t.name for t in toolsets]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ToolSetError(f"--tools names the tool set {twice[0]!r} twice; give each tool set once")
    return toolsets, problems


def _with_agent(toolset: ToolSet, chain: Sequence[SetFile], default: AgentSpec | None, forced: bool) -> ToolSet:
    """`toolset` with its agent: the last file of its chain that declares one, unless `--agent` gave
    one for every set (`forced`), else the config's (`default`)."""
    declared = [link for link in chain if link.data.agent is not None]
    agent = default
    if declared and not forced:
        link = declared[-1]
        assert link.data.agent is not None
        agent = resolve_agent(link.data.agent, link.path.parent, f"{link.path}: agent")
    return toolset if agent is None else dataclasses.replace(toolset, agent=agent)


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
