"""replio-replay: measure how well an LLM uses an agent's tools, and make it reproducible.

Only the names in `__all__` are public: running a suite from Python (`RunRequest`, `prepare`,
`execute`; the plan, case and result models; `RecordMode`, `Shard`), every error of `errors`,
the plugin API (`hookimpl`, `tool`, `Tool`, `ToolContext`, `ToolFailure`), the serializer that
lets vcrpy read a cassette, the BFCL reader, τ²'s fixture ids and the simulated user's opening. Every submodule is internal: its names may
change or move without notice; import from `replio_replay` itself. The README's "Python API"
section shows a run.

Names are imported on first use (PEP 562), so `replio --help` and `replio eval list` do not
pay for the engine or httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agents.protocol import Truncated, agent_messages, reply
    from .agents.tools import call_tool, fixture_tools
    from .errors import (
        AgentError,
        BenchmarkError,
        CassetteError,
        ConfigError,
        ContextFullError,
        FixtureError,
        GoldenError,
        McpError,
        ProviderAuthError,
        ProviderConnectError,
        ProviderError,
        ProviderHTTPError,
        ProviderResponseError,
        ReplioError,
        ToolSetError,
        UnknownFixtureError,
        UnknownProviderError,
        UsageError,
        UserCodeError,
    )
    from .fixtures.bfcl.convert import BFCL_CATEGORIES
    from .fixtures.bfcl.multi_turn import MULTI_TURN_CATEGORIES
    from .fixtures.bfcl.names import decode_name
    from .fixtures.bfcl.source import open_bfcl
    from .fixtures.cases import Case
    from .fixtures.hookspecs import hookimpl
    from .fixtures.model import Fixture, Judge, Verifier, load_fixture
    from .fixtures.tau2.convert import tau2_fixture_id
    from .judge.results import (
        FixtureResult,
        JudgeVerdict,
        RunResult,
        StateCheck,
        Status,
        Summary,
        TraceCall,
        TrialResult,
    )
    from .plan.shards import Shard
    from .providers import Provider
    from .recording.modes import RecordMode
    from .recording.serializer import ReadableSerializer
    from .run.simulator import OPENING
    from .run.suite import Outcome, Plan, PlannedRun, RunRequest, execute, prepare
    from .tools.base import Tool, ToolContext, ToolFailure
    from .tools.function import tool
    from .tools.toolset import ToolSet

#: Each public name -> the internal module that owns it.
_SOURCES: dict[str, str] = {
    "AgentError": ".errors",
    "BFCL_CATEGORIES": ".fixtures.bfcl.convert",
    "BenchmarkError": ".errors",
    "Case": ".fixtures.cases",
    "CassetteError": ".errors",
    "ConfigError": ".errors",
    "Fixture": ".fixtures.model",
    "FixtureError": ".errors",
    "FixtureResult": ".judge.results",
    "GoldenError": ".errors",
    "Judge": ".fixtures.model",
    "JudgeVerdict": ".judge.results",
    "MULTI_TURN_CATEGORIES": ".fixtures.bfcl.multi_turn",
    "McpError": ".errors",
    "Outcome": ".run.suite",
    "Plan": ".run.suite",
    "PlannedRun": ".run.suite",
    "Provider": ".providers",
    "ProviderAuthError": ".errors",
    "ProviderConnectError": ".errors",
    "ProviderError": ".errors",
    "ProviderHTTPError": ".errors",
    "ContextFullError": ".errors",
    "ProviderResponseError": ".errors",
    "ReadableSerializer": ".recording.serializer",
    "RecordMode": ".recording.modes",
    "ReplioError": ".errors",
    "RunRequest": ".run.suite",
    "RunResult": ".judge.results",
    "Shard": ".plan.shards",
    "StateCheck": ".judge.results",
    "Status": ".judge.results",
    "Summary": ".judge.results",
    "Tool": ".tools.base",
    "ToolContext": ".tools.base",
    "ToolFailure": ".tools.base",
    "ToolSet": ".tools.toolset",
    "ToolSetError": ".errors",
    "TraceCall": ".judge.results",
    "TrialResult": ".judge.results",
    "Truncated": ".agents.protocol",
    "UnknownFixtureError": ".errors",
    "UnknownProviderError": ".errors",
    "UsageError": ".errors",
    "UserCodeError": ".errors",
    "Verifier": ".fixtures.model",
    "agent_messages": ".agents.protocol",
    "call_tool": ".agents.tools",
    "decode_name": ".fixtures.bfcl.names",
    "execute": ".run.suite",
    "fixture_tools": ".agents.tools",
    "hookimpl": ".fixtures.hookspecs",
    "load_fixture": ".fixtures.model",
    "tau2_fixture_id": ".fixtures.tau2.convert",
    "OPENING": ".run.simulator",
    "open_bfcl": ".fixtures.bfcl.source",
    "prepare": ".run.suite",
    "reply": ".agents.protocol",
    "tool": ".tools.function",
}

__all__ = [
    "AgentError",
    "BFCL_CATEGORIES",
    "BenchmarkError",
    "Case",
    "CassetteError",
    "ConfigError",
    "ContextFullError",
    "Fixture",
    "FixtureError",
    "FixtureResult",
    "GoldenError",
    "Judge",
    "JudgeVerdict",
    "MULTI_TURN_CATEGORIES",
    "McpError",
    "OPENING",
    "Outcome",
    "Plan",
    "PlannedRun",
    "Provider",
    "ProviderAuthError",
    "ProviderConnectError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "ReadableSerializer",
    "RecordMode",
    "ReplioError",
    "RunRequest",
    "RunResult",
    "Shard",
    "StateCheck",
    "Status",
    "Summary",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "ToolSet",
    "ToolSetError",
    "TraceCall",
    "TrialResult",
    "Truncated",
    "UnknownFixtureError",
    "UnknownProviderError",
    "UsageError",
    "UserCodeError",
    "Verifier",
    "agent_messages",
    "call_tool",
    "decode_name",
    "execute",
    "fixture_tools",
    "hookimpl",
    "load_fixture",
    "open_bfcl",
    "prepare",
    "reply",
    "tau2_fixture_id",
    "tool",
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
