"""The file tools: `file_read` (line-numbered, paged), `file_write` and `file_edit` (exact replace)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from .._runtime.atomic import atomic_write
from .base import Params, Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category
from .sandbox import Sandbox

__all__ = ["DEFAULT_READ_LIMIT", "file_tools"]

#: Lines `file_read` returns when the model gives no `limit`.
DEFAULT_READ_LIMIT = 200
_MAX_LINE = 2000


class ReadParams(Params):
    path: str = Field(description="File path relative to the project root.")
    offset: int = Field(1, ge=1, description="First line to read, counting from 1.")
    limit: int = Field(DEFAULT_READ_LIMIT, ge=1, description="How many lines to read at most.")


class WriteParams(Params):
    path: str = Field(description="File path relative to the project root.")
    content: str = Field(description="The file's complete new content.")


class EditParams(Params):
    path: str = Field(description="File path relative to the project root.")
    old_string: str = Field(description="Exact text to replace; it must occur exactly once.")
    new_string: str = Field(description="The replacement text.")


def _existing_file(sandbox: Sandbox, path: str) -> Path:
    real = sandbox.resolve(path)
    if not real.exists():
        raise ToolFailure(f"file not found: {path}")
    if real.is_dir():
        raise ToolFailure(f"{path} is a directory; use list_dir to see what it holds")
    return real


def _read_text(real: Path, shown: str) -> str:
    try:
        return real.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{shown} is not a UTF-8 text file") from None


def file_read(p: ReadParams, ctx: ToolContext) -> str:
    real = _existing_file(ctx.sandbox, p.path)
    shown = ctx.sandbox.display(real)
    lines = _read_text(real, shown).splitlines()
    total = len(lines)
    if total == 0:
        return f"{shown} is empty."
    if p.offset > total:
        raise ToolFailure(f"offset {p.offset} is past the end of {shown} ({total} lines)")
    end = min(total, p.offset - 1 + p.limit)
    body = "\n".join(
        f"{n:>6}  {line[:_MAX_LINE]}" for n, line in enumerate(lines[p.offset - 1 : end], p.offset)
    )
    if end < total:
        body += (
            f"\n\n(Showing lines {p.offset}-{end} of {total}. "
            f"Call file_read with offset={end + 1} to read more.)"
        )
    return body


def file_write(p: WriteParams, ctx: ToolContext) -> str:
    real = ctx.sandbox.resolve(p.path)
    if real.is_dir():
        raise ToolFailure(f"{p.path} is a directory")
    atomic_write(real, p.content)
    return f"Wrote {len(p.content.splitlines())} lines to {ctx.sandbox.display(real)}."


def file_edit(p: EditParams, ctx: ToolContext) -> str:
    real = _existing_file(ctx.sandbox, p.path)
    shown = ctx.sandbox.display(real)
    text = _read_text(real, shown)
    count = text.count(p.old_string) if p.old_string else 0
    if count == 0:
        raise ToolFailure(f"old_string not found in {shown}; read the file and copy the text exactly")
    if count > 1:
        raise ToolFailure(f"old_string occurs {count} times in {shown}; include more context")
    atomic_write(real, text.replace(p.old_string, p.new_string, 1))
    return f"Edited {shown}."


def file_tools() -> tuple[Tool, ...]:
    """The tools of this family, as offered by default."""
    return (
        model_tool(
            "file_read",
            "Read a text file. Returns numbered lines; use offset and limit to page through long files.",
            Category.READ,
            ReadParams,
            file_read,
        ),
        model_tool(
            "file_write",
            "Create or overwrite a text file with the given content.",
            Category.EDIT,
            WriteParams,
            file_write,
        ),
        model_tool(
            "file_edit",
            "Replace one exact occurrence of old_string with new_string in a file.",
            Category.EDIT,
            EditParams,
            file_edit,
        ),
    )
