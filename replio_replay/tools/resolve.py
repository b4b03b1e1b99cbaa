"""Resolving a run's tool set, pure: sources -> `extends` -> `disable` -> `override` -> fixture additions.

The sources are the built-in tools, the tools plugins register and the tools a tool-set file
declares; names are unique across them (a collision names both sources). The files of an
`extends` chain apply in order, the root first: a later system prompt wins, disabled names
add up, overrides apply in turn (a description replaced, parameters merged into the schema).
A fixture may then declare tools of its own, name the ones it is offered and bring its own
system prompt (`for_fixture`); `name_problems` lists the tool names a fixture mentions that
its tool set does not have.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ToolSetError
from .base import Tool
from .declared import declared_tool
from .schema import merge_patch, schema_problem
from .setfile import Override, SetFile
from .toolset import DEFAULT_SYSTEM_PROMPT, ToolSet

if TYPE_CHECKING:
    from ..fixtures.model import Fixture

__all__ = ["for_fixture", "name_problems", "resolve_toolset"]


def resolve_toolset(name: str, chain: Sequence[SetFile], sources: Iterable[Tool]) -> ToolSet:
    """The tool set named `name` from `sources` (built-ins, then plugins) and a file chain (root first)."""
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
    for link in chain:
        prompt = link.data.system_prompt or prompt
        for tool_name in link.data.disable:
            if tool_name not in known:
                raise ToolSetError(f"{link.path}: disable: {_no_tool(tool_name, known)}")
            tools.pop(tool_name, None)
        for tool_name, override in link.data.override.items():
            if tool_name not in tools:
                why = "it is disabled" if tool_name in known else _no_tool(tool_name, known)
                raise ToolSetError(f"{link.path}: override.{tool_name}: cannot override it: {why}")
            tools[tool_name] = _overridden(tools[tool_name], override, f"{link.path}: override.{tool_name}")
    return ToolSet(name, tuple(tools.values()), prompt, known)


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
    if not fixture.tools and fixture.tools_offered is None and fixture.system_prompt is None:
        return base
    where = f"fixture {fixture.id!r}"
    base_dir = Path(origin).parent if not origin.startswith("plugin:") else None
    tools = list(base.tools)
    for tool_name, decl in fixture.tools.items():
        if tool_name in base.known:
            raise ToolSetError(f"{where}: tools.{tool_name}: tool set {base.name!r} already has a tool of "
                               "that name; rename the fixture's tool")
        tools.append(declared_tool(tool_name, decl, source=f"{where} ({origin})", base_dir=base_dir))
    if fixture.tools_offered is not None:
        names = {t.name for t in tools}
        missing = [n for n in fixture.tools_offered if n not in names]
        if missing:
            raise ToolSetError(f"{where}: tools_offered: {_no_tool(missing[0], names)}")
        tools = [t for t in tools if t.name in set(fixture.tools_offered)]
    return base.replace(tools=tools, system_prompt=fixture.system_prompt)


def name_problems(fixture: Fixture, toolset: ToolSet) -> list[str]:
    """Tool names the fixture mentions that its tool set cannot satisfy, one message per field.

    Calls that are expected or required (`expected`, `verifier.exact`, `must_include`, `args`)
    must name an offered tool; `avoid` and `tools_deny` must name a tool the set knows (a
    disabled one is fine: it is avoided by construction).
    """
    offered, known = set(toolset.names), set(toolset.known)
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
        for name in dict.fromkeys(n for n in names if n not in allowed):
            what = f"{name!r} is not offered" if name in known else f"no tool named {name!r}"
            hint = "" if name in known else _hint(name, allowed)
            problems.append(f"{field}: {what} in tool set {toolset.name!r}, {effect}{hint}")
    return problems
