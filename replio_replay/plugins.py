"""The plugin manager: the bundled catalog as a default plugin, third-party ones by entry point.

`plugin_tools` collects the tools plugins register; a plugin whose hook fails, or that
registers something that is not a tool, is reported and its tools left out.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pluggy

from . import hookspecs

if TYPE_CHECKING:
    from .fixtures.sources import Problem
    from .tools.base import Tool

__all__ = ["BUILTIN_CATALOG", "ENTRY_POINT_GROUP", "plugin_manager", "plugin_tools"]

#: Third-party plugins declare an entry point in this group.
ENTRY_POINT_GROUP = "replio"
#: The name the bundled catalog registers under (and shows as its fixtures' source).
BUILTIN_CATALOG = "replio-core-eval"


def plugin_manager(*, entry_points: bool = True) -> pluggy.PluginManager:
    """A manager with the hook specs, the bundled catalog and (optionally) installed plugins."""
    from .fixtures import catalog

    pm = pluggy.PluginManager("replio")
    pm.add_hookspecs(hookspecs)
    pm.register(catalog, name=BUILTIN_CATALOG)
    if entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def plugin_tools(pm: pluggy.PluginManager) -> tuple[list[Tool], list[Problem]]:
    """Every tool plugins register, in registration order, and the plugins that failed."""
    from .fixtures.sources import Problem
    from .tools.base import Tool
    from .tools.schema import name_problem

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
