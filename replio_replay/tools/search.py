"""The finding tools: `glob` (names by pattern), `list_dir` (a tree to a depth), `grep` (lines by regex)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from pydantic import Field

from .base import Params, Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .sandbox import HIDDEN

__all__ = ["search_tools"]

_MAX_RESULTS = 200


class GlobParams(Params):
    pattern: str = Field(description="Glob pattern relative to the project root, e.g. 'src/**/*.py'.")


class ListParams(Params):
    path: str = Field(".", description="Directory relative to the project root.")
    depth: int = Field(1, ge=1, le=10, description="How many levels deep to list.")


class GrepParams(Params):
    pattern: str = Field(description="Regular expression to search for (Python syntax).")
    path: str = Field(".", description="File or directory to search, relative to the project root.")
    glob: str | None = Field(None, description="Only search files whose name matches this glob, e.g. '*.py'.")


def _capped(lines: list[str], what: str) -> str:
    if len(lines) > _MAX_RESULTS:
        more = len(lines) - _MAX_RESULTS
        lines = [*lines[:_MAX_RESULTS], f"({more} more {what} not shown; narrow the search)"]
    return "\n".join(lines)


def glob(p: GlobParams, ctx: ToolContext) -> str:
    sb = ctx.sandbox
    if p.pattern.startswith("/") or ".." in Path(p.pattern).parts:
        raise ToolFailure(f"pattern {p.pattern!r} must stay inside the project; use a relative pattern")
    rx = re.compile(_glob_regex(p.pattern))
    found = [sb.display(f) for f in sb.walk_files(sb.root) if rx.fullmatch(sb.display(f))]
    if not found:
        return f"No files match {p.pattern}."
    return _capped(found, "files")


def _glob_regex(pattern: str) -> str:
    """Translate a glob with `**` (any depth, including none) into a regex over posix paths."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def list_dir(p: ListParams, ctx: ToolContext) -> str:
    sb = ctx.sandbox
    real = sb.resolve(p.path)
    if not real.exists():
        raise ToolFailure(f"directory not found: {p.path}")
    if not real.is_dir():
        raise ToolFailure(f"{p.path} is a file; use file_read to read it")
    lines: list[str] = []
    _tree(sb, real, p.depth, "", lines)
    header = f"{sb.display(real)}/" if real != sb.root else "./"
    return _capped([header, *lines] if lines else [header, "(empty)"], "entries")


def _tree(sb, directory: Path, depth: int, indent: str, lines: list[str]) -> None:
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.name in HIDDEN:
            continue
        try:
            inside = sb.contains(entry.resolve())
        except OSError:
            inside = False
        if not inside:
            continue
        if entry.is_dir():
            lines.append(f"{indent}{entry.name}/")
            if depth > 1:
                _tree(sb, entry, depth - 1, indent + "  ", lines)
        else:
            lines.append(f"{indent}{entry.name}")


def grep(p: GrepParams, ctx: ToolContext) -> str:
    sb = ctx.sandbox
    try:
        rx = re.compile(p.pattern)
    except re.error as exc:
        raise ToolFailure(f"invalid regular expression {p.pattern!r}: {exc}") from None
    real = sb.resolve(p.path)
    if not real.exists():
        raise ToolFailure(f"path not found: {p.path}")
    files = [real] if real.is_file() else sb.walk_files(real)
    matches: list[str] = []
    for f in files:
        if p.glob and not fnmatch.fnmatch(f.name, p.glob):
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        shown = sb.display(f)
        matches.extend(
            f"{shown}:{n}:{line}" for n, line in enumerate(text.splitlines(), 1) if rx.search(line)
        )
    if not matches:
        return f"No matches for {p.pattern}."
    return _capped(matches, "matches")


def search_tools() -> tuple[Tool, ...]:
    """The tools of this family, as offered by default."""
    return (
        model_tool("glob", "Find files whose paths match a glob pattern.", Category.LIST, GlobParams, glob),
        model_tool(
            "list_dir",
            "List a directory's files and subdirectories, to the given depth.",
            Category.LIST,
            ListParams,
            list_dir,
        ),
        model_tool(
            "grep",
            "Search file contents with a regular expression; returns file:line:text matches.",
            Category.READ,
            GrepParams,
            grep,
        ),
    )
