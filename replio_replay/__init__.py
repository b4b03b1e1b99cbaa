"""replio-replay: measure how well an LLM uses an agent's tools, and make it reproducible.

The public API, re-exported from the modules that own it. Names are imported on first use
(PEP 562), so `replio --help` and `replio eval list` do not pay for the engine or httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import Limits, Transcript, run_loop
    from .errors import (
        CassetteError,
        ConfigError,
        FixtureError,
        GoldenError,
        ProviderError,
        ReplioError,
        ToolSetError,
        UnknownFixtureError,
        UnknownProviderError,
        UsageError,
    )
    from .fixtures.discovery import discover
    from .fixtures.model import Fixture, Verifier, load_fixture
    from .hookspecs import hookimpl
    from .providers import ChatRequest, ChatResponse, Message, Provider, ToolCall, Usage
    from .results import FixtureResult, RunResult, Status, Summary, TraceCall
    from .runner import RunOptions, run_fixture, run_suite
    from .tools.base import Tool, ToolContext, ToolFailure
    from .tools.function import tool
    from .tools.toolset import ToolSet
    from .verifier import verify

_SOURCES: dict[str, str] = {
    "CassetteError": ".errors",
    "ChatRequest": ".providers",
    "ChatResponse": ".providers",
    "ConfigError": ".errors",
    "Fixture": ".fixtures.model",
    "FixtureError": ".errors",
    "FixtureResult": ".results",
    "GoldenError": ".errors",
    "Limits": ".engine",
    "Message": ".providers",
    "Provider": ".providers",
    "ProviderError": ".errors",
    "ReplioError": ".errors",
    "RunOptions": ".runner",
    "RunResult": ".results",
    "Status": ".results",
    "Summary": ".results",
    "Tool": ".tools.base",
    "ToolCall": ".providers",
    "ToolContext": ".tools.base",
    "ToolFailure": ".tools.base",
    "ToolSet": ".tools.toolset",
    "ToolSetError": ".errors",
    "TraceCall": ".results",
    "Transcript": ".engine",
    "UnknownFixtureError": ".errors",
    "UnknownProviderError": ".errors",
    "Usage": ".providers",
    "UsageError": ".errors",
    "Verifier": ".fixtures.model",
    "discover": ".fixtures.discovery",
    "hookimpl": ".hookspecs",
    "load_fixture": ".fixtures.model",
    "run_fixture": ".runner",
    "run_loop": ".engine",
    "run_suite": ".runner",
    "tool": ".tools.function",
    "verify": ".verifier",
}

__all__ = [
    "CassetteError",
    "ChatRequest",
    "ChatResponse",
    "ConfigError",
    "Fixture",
    "FixtureError",
    "FixtureResult",
    "GoldenError",
    "Limits",
    "Message",
    "Provider",
    "ProviderError",
    "ReplioError",
    "RunOptions",
    "RunResult",
    "Status",
    "Summary",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolFailure",
    "ToolSet",
    "ToolSetError",
    "TraceCall",
    "Transcript",
    "UnknownFixtureError",
    "UnknownProviderError",
    "Usage",
    "UsageError",
    "Verifier",
    "discover",
    "hookimpl",
    "load_fixture",
    "run_fixture",
    "run_loop",
    "run_suite",
    "tool",
    "verify",
]


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
