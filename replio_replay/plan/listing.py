"""`replio eval list`'s answer: every fixture and every problem, validated in each run.

The listing names every fixture and every problem: broken fixture files, and tool names a
fixture mentions that the project's default tool set does not have; what a command shows is then
narrowed by `--fixture`, `--tag` and `--no-bundled` (or the config's `bundled`). A broken config
or default tool set is no fixture's problem but the configuration error a run raises too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pluggy

from .._runtime.problems import Problem
from ..errors import ReplioError
from ..fixtures.discovery import build
from ..fixtures.plugins import BUILTIN_CATALOG
from ..fixtures.selection import pick
from ..fixtures.sources import from_plugin, gather
from ..tools.sources import load_toolsets
from .offer import name_problems, offered_to
from .settings import resolve_settings

__all__ = ["listing"]


def _validated(project: Path, global_dir: Path | None, pm: pluggy.PluginManager) -> tuple[dict[str, Any], bool]:
    """The whole listing, and whether the config keeps the bundled catalog in; ConfigError (or
    ToolSetError) for a broken config or default tool set, as a run raises it: no fixture can
    be offered anything then, so none is listed as if it could run."""
    settings = resolve_settings(project)
    (toolset,), plugin_problems = load_toolsets(project, ["default"], settings.config.tools, pm,
                                                   settings.config.mcp_servers, agent=settings.config.agent)
    catalog = build(*gather(project, global_dir, pm))
    catalog.problems.extend(plugin_problems)
    skipped = set()  # as a run skips them: a tool it is offered cannot load, or a check can never pass
    for f in catalog.sorted():
        try:
            offered = offered_to(toolset, f.fixture, f.origin)
        except ReplioError as exc:
            catalog.problems.append(Problem(f.origin, str(exc)))
            skipped.add(f.fixture.id)
            continue
        impossible = [Problem(f.origin, f"fixture {f.fixture.id!r}: {p}") for p in name_problems(f.fixture, offered)]
        catalog.problems.extend(impossible)
        if impossible:
            skipped.add(f.fixture.id)
    found = [f for f in catalog.sorted() if f.fixture.id not in skipped]
    fixtures = [{"id": f.fixture.id, "source": f.source, "description": f.fixture.description,
                 "tags": f.fixture.tags} for f in found]
    problems_listed = [{"file": p.file, "message": p.message} for p in catalog.problems]
    return {"fixtures": fixtures, "problems": problems_listed}, settings.bundled


def listing(project: Path, global_dir: Path | None, pm: pluggy.PluginManager, *,
            patterns: Sequence[str] = (), tags: Sequence[str] = (), no_bundled: bool = False) -> dict[str, Any]:
    """`{"fixtures": [{id, source, description, tags}], "problems": [{file, message}]}` for `project`:
    the fixtures `patterns` and `tags` select (see `selection.pick`), without the bundled catalog's
    when `no_bundled` or the config's `bundled` says so. ConfigError (ToolSetError) for a broken
    config or default tool set."""
    result, bundled = _validated(project, global_dir, pm)
    if no_bundled or not bundled:
        result = {"fixtures": [f for f in result["fixtures"] if f["source"] != BUILTIN_CATALOG],
                  "problems": [p for p in result["problems"] if not from_plugin(p["file"], BUILTIN_CATALOG)]}
    if patterns or tags:
        tagged = {f["id"]: f["tags"] for f in result["fixtures"]}
        chosen = set(pick(tagged, patterns, tags, [Problem(p["file"], p["message"]) for p in result["problems"]]))
        result = {**result, "fixtures": [f for f in result["fixtures"] if f["id"] in chosen]}
    return result
