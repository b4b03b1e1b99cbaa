"""What a fixture is offered: its tool set with the fixture's own tools, MCP servers and system
prompt (`for_fixture`, pure), checked at once for a missing program (`offered_to`), and the tool
names the fixture mentions that the set cannot satisfy (`name_problems`).

It sits above both fixtures/ and tools/: the fixture model is built from tools' declarations,
and this is where the two meet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import ToolSetError
from ..fixtures.model import Fixture
from ..tools.declared import answering_for, command_argv, declared_tool
from ..tools.environment import Environment, environment
from ..tools.mcp.config import McpServer
from ..tools.resolve import no_tool, tool_hint
from ..tools.toolset import ToolSet

__all__ = ["for_fixture", "name_problems", "offered_to"]


def for_fixture(base: ToolSet, fixture: Fixture, origin: str) -> ToolSet:
    """`base` with the fixture's own tools added, restricted to `tools_offered`, with its prompt.

    Raises ToolSetError naming the fixture and field when that cannot be done.
    """
    user_names = fixture.user.tools if fixture.user is not None else []
    if not fixture.tools and fixture.tools_offered is None and fixture.system_prompt is None \
            and fixture.mcp_servers is None and not fixture.environments and not user_names:
        return base
    where = f"fixture {fixture.id!r} in tool set {base.name!r}"
    servers = _fixture_servers(base, fixture, where)
    base_dir = Path(origin).parent if not origin.startswith("plugin:") else None
    tools = list(base.tools)
    for tool_name, decl in fixture.tools.items():
        if tool_name in base.known and decl.kind == "stub" and decl.description is None:
            # a stub with no description of its own answers for the tool set's tool, offered as the set offers it
            at = next((i for i, t in enumerate(tools) if t.name == tool_name), None)
            if at is None:
                raise ToolSetError(f"{where}: tools.{tool_name}: the tool set disables that tool, so the fixture's "
                                   "stub has nothing to answer for")
            tools[at] = answering_for(tools[at], decl, f"fixture {fixture.id!r} ({origin})")
            continue
        if tool_name in base.known:
            raise ToolSetError(f"{where}: tools.{tool_name}: the tool set already has a tool of that name; "
                               "rename the fixture's tool")
        tools.append(declared_tool(tool_name, decl, source=f"fixture {fixture.id!r} ({origin})", base_dir=base_dir,
                                   python=base.python))
    environments = _fixture_environments(base, fixture, origin, base_dir)
    own = [tool for env in environments.values() for tool in env.tools if env.name not in base.environments]
    shadowed = {tool.name for tool in own}  # only with `tools_offered` (see `_fixture_environments`)
    tools = [t for t in tools if t.name not in shadowed] + own
    by_name = {t.name: t for t in tools}
    missing = [n for n in user_names if n not in by_name]
    if missing:
        raise ToolSetError(f"{where}: user.tools: {no_tool(missing[0], by_name)}")
    user_tools = tuple(by_name[n] for n in user_names)
    tools = [t for t in tools if t.name not in set(user_names)]  # the user's side is never the agent's
    only = None
    if fixture.tools_offered is not None:
        names = {t.name for t in tools}
        missing = [n for n in fixture.tools_offered if n not in names]
        if missing and not servers:  # else an MCP server may have them: `with_mcp_tools` checks
            raise ToolSetError(f"{where}: tools_offered: {no_tool(missing[0], names)}")
        tools = [t for t in tools if t.name in set(fixture.tools_offered)]
        only = tuple(fixture.tools_offered)
    pending = base.pending
    if fixture.mcp_servers is not None:  # some servers, or its own: a change may be for another's tool
        pending = tuple(dataclasses.replace(p, optional=True) for p in pending)
    return base.replace(tools=tools, system_prompt=fixture.system_prompt, mcp_servers=servers, only=only,
                        pending=pending, environments=environments, user_tools=user_tools)


def _fixture_environments(base: ToolSet, fixture: Fixture, origin: str,
                          base_dir: Path | None) -> Mapping[str, Environment]:
    """The tool set's environments and the fixture's own (loaded relative to its file)."""
    if not fixture.environments:
        return base.environments
    where = f"fixture {fixture.id!r} ({origin})"
    if base_dir is None:
        raise ToolSetError(f"{where}: environments: a plugin's fixture has no folder to load them from")
    found = dict(base.environments)
    owner: dict[str, str] = {}  # a tool of the fixture's own environments -> the environment offering it
    for name, decl in fixture.environments.items():
        if name in found:
            raise ToolSetError(f"{where}: environments.{name}: the tool set already has an environment of that "
                               "name; rename the fixture's")
        env = environment(name, decl, base_dir=base_dir, where=origin, source=where, server=base.python)
        twice = next((t.name for t in env.tools if t.name in owner), None)
        if twice is not None:
            raise ToolSetError(f"{where}: environments {owner[twice]!r} and {name!r} both offer a tool {twice!r}; "
                               "give one of them a \"prefix\" (its tools are then named prefix + method)")
        owner.update((t.name, name) for t in env.tools)
        clash = next((t.name for t in env.tools if t.name in base.known), None)
        # with `tools_offered`, the fixture says which tools it offers: its environment's take the name
        if clash is not None and fixture.tools_offered is None:
            raise ToolSetError(f"{where}: environments.{name}: its tool {clash!r} has the name of one the tool set "
                               "has; give the environment a \"prefix\", or list the tools the fixture offers in "
                               "\"tools_offered\" (its environment's then take the name)")
        found[name] = env
    return found


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


def offered_to(toolset: ToolSet, fixture: Fixture, origin: str) -> ToolSet:
    """What `fixture` (read from `origin`) is offered from `toolset` (`resolve.for_fixture`); a
    command tool of its own whose program, or a file beside the fixture it names, is missing fails
    it now (ToolSetError), as a tool set's does, rather than mid-run."""
    offered = for_fixture(toolset, fixture, origin)
    if origin.startswith("plugin:"):
        return offered
    names = {t.name for t in offered.tools}
    for name, decl in fixture.tools.items():
        if decl.command is None or name not in names:
            continue
        from ..tools.command import missing_program

        problem = missing_program(command_argv(decl.command, Path(origin).parent), decl.command)
        if problem:
            raise ToolSetError(f"fixture {fixture.id!r}: tools.{name}.command: {problem}")
    return offered


def name_problems(fixture: Fixture, toolset: ToolSet) -> list[str]:
    """Tool names the fixture mentions that its tool set cannot satisfy, one message per field.

    Calls that are expected or required (`expected`, `verifier.exact`, `must_include`, `args`)
    must name an offered tool; `avoid` and `tools_deny` must name a tool the set knows (a
    disabled one is fine: it is avoided by construction). A user's agent offers the tools in its
    own code, which only its requests name: nothing can be checked before it runs.
    """
    if toolset.agent is not None:
        return []
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
    first = 1 if fixture.task is not None else 0  # `turns[i]` as the fixture writes it
    fields += [(f"turns[{i - first}].offer", turn.offer, offered, "so it can never be offered")
               for i, turn in enumerate(fixture.scripted_turns) if turn.offer]
    problems = []
    for field, names, allowed, effect in fields:
        for name in dict.fromkeys(n for n in names if n not in allowed and not (maybe_mcp and n not in known)):
            what = f"{name!r} is not offered" if name in known else f"no tool named {name!r}"
            hint = "" if name in known else tool_hint(name, allowed)
            problems.append(f"{field}: {what} in tool set {toolset.name!r}, {effect}{hint}")
    return problems
