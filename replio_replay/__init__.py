"""replio-replay: measure how well an LLM uses an agent's tools, and make it reproducible."""

from .engine import Limits, Transcript, run_loop
from .errors import (
    CassetteError,
    ConfigError,
    FixtureError,
    GoldenError,
    ProviderError,
    ReplioError,
    UnknownFixtureError,
    UnknownProviderError,
    UsageError,
)
from .fixtures import Fixture, Verifier, discover, load_fixture
from .hookspecs import hookimpl
from .providers import ChatRequest, ChatResponse, Message, Provider, ToolCall, Usage
from .results import FixtureResult, RunResult, Status, Summary, TraceCall
from .runner import RunOptions, run_fixture, run_suite
from .verifier import verify

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
    "ToolCall",
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
    "verify",
]
