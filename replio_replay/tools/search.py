"""The finding tools: `glob` (names by pattern), `list_dir` (a tree to a depth), `grep` (lines by regex).

Whatever pattern a model writes, a call takes time linear in what it searches: `grep` compiles its
regex with RE2 (as ripgrep does) and `glob` is translated to RE2, so neither can backtrack
exponentially. `grep` also bounds what it reads (larger files are named, not searched) and what
it shows (each line cut like file_read's).
"""

from __future__ import annotations

import codecs
import fnmatch
import stat
from pathlib import Path
from typing import Any

import re2
from pydantic import Field

from .._runtime.regex import OPTIONS, compile_regex, utf8
from .base import Params, Tool, ToolContext, ToolFailure, model_tool
from .files import _MAX_LINE
from .permissions import Category
from .sandbox import HIDDEN

__all__ = ["search_tools"]

_MAX_RESULTS = 200
#: Files larger than this are not searched by `grep` (and named as such): reading one whole
#: would cost memory and time out of proportion to a tool call.
_MAX_GREP_BYTES = 10 * 1024 * 1024
#: How many skipped files `grep` names before it only counts them.
_MAX_SKIPPED_NAMED = 10
#: Bytes `grep` decodes to tell a binary file (skipped silently) from a text file over the bound.
_SNIFF_BYTES = 8192


class GlobParams(Params):
    pattern: str = Field(description="Glob pattern relative to the project root, e.g. 'src/**/*.py'.")


class ListParams(Params):
    path: str = Field(".", description="Directory relative to the project root.")
    depth: int = Field(1, ge=1, le=10, description="How many levels deep to list.")


class GrepParams(Params):
    pattern: str = Field(description="Regular expression to search for (Python syntax).")
    path: str = Field(".", description="File or directory to search, relative to the project root.")
    glob: str | None = Field(None, description="Only search files whose name matches this glob, e.g. '*.py'.")


def _capped(lines: list[str], what: str, total: int | None = None) -> str:
    """The first `_MAX_RESULTS` lines, then how many more of `total` (default: all `lines`) there are."""
    total = len(lines) if total is None else total
    if total > _MAX_RESULTS:
        more = total - _MAX_RESULTS
        lines = [*lines[:_MAX_RESULTS], f"({more} more {what} not shown; narrow the search)"]
    return "\n".join(lines)


def glob(p: GlobParams, ctx: ToolContext) -> str:
    sb = ctx.sandbox
    if p.pattern.startswith("/") or ".." in Path(p.pattern).parts:
        raise ToolFailure(f"pattern {p.pattern!r} must stay inside the project; use a relative pattern")
    try:
        rx = re2.compile(_glob_regex(p.pattern), OPTIONS)
    except re2.error:
        # Only size can fail here (the translation is always valid RE2): tens of thousands of pieces,
        # which are not worth echoing back whole.
        raise ToolFailure(
            f"pattern of {len(p.pattern)} characters is too long to match; use a shorter pattern"
        ) from None
    found = [name for name in map(sb.display, sb.walk_files(sb.root)) if rx.fullmatch(utf8(name))]
    if not found:
        return f"No files match {p.pattern}."
    return _capped(found, "files")


def _glob_regex(pattern: str) -> str:
    """Translate a glob with `**` (any depth, including none) into an RE2 regex over posix paths.

    RE2 matches in linear time, so the `[^/]*` of each `*` cannot backtrack however many there
    are. A run of `**/` is one `**/` (any depth twice over is any depth), which keeps the
    program small.
    """
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            while pattern.startswith("**/", i):
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
            end = i
            while end < len(pattern) and pattern[end] not in "*?":
                end += 1
            out.append(re2.escape(utf8(pattern[i:end]).decode("utf-8")))
            i = end
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
    rx = _grep_regex(p.pattern)
    real = sb.resolve(p.path)
    if not real.exists():
        raise ToolFailure(f"path not found: {p.path}")
    files = [real] if real.is_file() else sb.walk_files(real)
    shown_lines: list[str] = []  # only the first _MAX_RESULTS are kept; the rest are counted
    total = 0
    too_large: list[str] = []
    for f in files:
        if p.glob and not fnmatch.fnmatch(f.name, p.glob):
            continue
        try:
            text = _text_of(f)
        except _TooLarge:
            too_large.append(sb.display(f))
            continue
        except OSError:
            continue
        if text is None:
            continue
        shown = sb.display(f)
        for n, line in enumerate(text.splitlines(), 1):
            if rx.search(utf8(line)):
                total += 1
                if len(shown_lines) < _MAX_RESULTS:
                    shown_lines.append(f"{shown}:{n}:{_cut(line)}")
    result = _capped(shown_lines, "matches", total) if total else f"No matches for {p.pattern}."
    return result + _skipped_note(too_large)


def _grep_regex(pattern: str) -> Any:
    """`pattern` compiled by RE2, or a `ToolFailure` saying what RE2 lacks and what to write instead."""
    try:
        return compile_regex(pattern, "grep")
    except ValueError as exc:
        raise ToolFailure(str(exc)) from None


class _TooLarge(Exception):
    """A text file over `_MAX_GREP_BYTES`: `grep` names it instead of searching it."""


def _text_of(path: Path) -> str | None:
    """The file's text, or None if it is not a regular UTF-8 text file; `_TooLarge` past the bound.

    Never more than `_MAX_GREP_BYTES` (plus one, to see that there is more) are read, even if the
    file grew after its size was taken.
    """
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        return None  # opening a FIFO would block for ever; a device need not end
    over = info.st_size > _MAX_GREP_BYTES
    with path.open("rb") as fh:
        data = fh.read(_SNIFF_BYTES if over else _MAX_GREP_BYTES + 1)
    if over or len(data) > _MAX_GREP_BYTES:
        # Binary files are skipped silently whatever their size; only text is worth naming.
        if _utf8_text(data[:_SNIFF_BYTES]):
            raise _TooLarge
        return None
    try:
        # `read_text` gave the same: splitlines ends lines at \r\n and \r as universal newlines did.
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _utf8_text(head: bytes) -> bool:
    """Whether the start of a file is UTF-8 (it may end inside a character)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _cut(line: str) -> str:
    """A matching line as shown: cut at file_read's `_MAX_LINE` characters, with a marker."""
    if len(line) <= _MAX_LINE:
        return line
    return f"{line[:_MAX_LINE]} [... line cut at {_MAX_LINE} of {len(line)} characters]"


def _skipped_note(too_large: list[str]) -> str:
    if not too_large:
        return ""
    names = ", ".join(too_large[:_MAX_SKIPPED_NAMED])
    if len(too_large) > _MAX_SKIPPED_NAMED:
        names += f" and {len(too_large) - _MAX_SKIPPED_NAMED} more"
    count = f"{len(too_large)} file{'s' if len(too_large) > 1 else ''}"
    return f"\n({count} larger than {_MAX_GREP_BYTES // (1024 * 1024)} MB not searched: {names})"


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
