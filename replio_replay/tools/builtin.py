"""The built-in tools, in the order they are offered: files, search, shell, web."""

from __future__ import annotations

import functools

from .base import Tool
from .files import file_tools
from .search import search_tools
from .shell import shell_tools
from .web import web_tools

__all__ = ["builtin_tools"]


@functools.cache
def builtin_tools() -> tuple[Tool, ...]:
    """The eight built-in tools (immutable, built once per process)."""
    return (*file_tools(), *search_tools(), *shell_tools(), *web_tools())
