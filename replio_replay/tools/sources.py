"""Where a run's tools come from, read from disk and plugins: built-ins, plugin tools, tool-set files.

`load_toolsets` finds each named tool set's file chain and hands it, with the built-in and
plugin tools, to the pure resolution in `resolve`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from ..errors import ToolSetError
from .builtin import builtin_tools
from .resolve import resolve_toolset
from .setfile import load_chain, locate
from .toolset import ToolSet

if TYPE_CHECKING:
    from ..fixtures.sources import Problem

__all__ = ["load_toolsets"]


def load_toolsets(
    project: Path, names: Sequence[str], configured: str | None, pm: pluggy.PluginManager
) -> tuple[list[ToolSet], list[Problem]]:
    """The tool sets `names` names (`default`, a variant, a file), and the plugins that failed.

    `configured` is the config's `tools` (the default set's file). Raises ToolSetError (or
    UsageError for a name that is not a tool set) before anything runs.
    """
    from ..plugins import plugin_tools

    extra, problems = plugin_tools(pm)
    sources = [*builtin_tools(), *extra]
    toolsets = []
    for wanted in names:
        name, path = locate(project, wanted, configured)
        toolsets.append(resolve_toolset(name, load_chain(path) if path else [], sources))
    seen = [t.name for t in toolsets]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ToolSetError(f"--tools names the tool set {twice[0]!r} twice; give each tool set once")
    return toolsets, problems
