"""The one exception tree of replio-replay; every message is written for the user.

    ReplioError                  anything replio-replay raises on purpose
    ├── UsageError               a bad flag, spec or name: the CLI exits 2
    │   ├── UnknownFixtureError  a --fixture id that no source defines
    │   └── UnknownProviderError a provider name that is not registered, or none named
    ├── ConfigError              .replio/config.json does not parse or validate: exit 2
    │   └── ToolSetError         a tool-set file, or the tools it resolves to, is broken
    ├── FixtureError             one fixture file or plugin entry is broken: reported, skipped
    ├── BenchmarkError           one case of a benchmark (BFCL) cannot become a fixture: reported, skipped
    ├── ProviderError            the provider failed for one fixture: the fixture ends in `error`
    │   ├── ProviderAuthError    401/403
    │   ├── ProviderHTTPError    an HTTP status that retries did not cure
    │   │   └── ContextFullError the conversation no longer fits the model's context: `truncated`
    │   ├── ProviderConnectError connection refused, timeouts, dropped connections
    │   └── ProviderResponseError a body that is not JSON, or JSON of the wrong shape
    ├── McpError                 an MCP server did not start, answer in time, or stay up: the fixture errs
    ├── AgentError               the user's own agent failed, timed out or never asked the model: the fixture errs
    ├── UserCodeError            the project's Python (an environment, a Python tool) overran, ended or stopped: the fixture errs
    ├── CassetteError            a cassette is missing, broken, exhausted or would leak a secret
    └── GoldenError              a golden file is broken or may not be written

Tool failures are *not* exceptions: a tool answers the model with a result starting
``Error:`` and the run goes on (see ``replio_replay.tools``).
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "BenchmarkError",
    "CassetteError",
    "ConfigError",
    "ContextFullError",
    "FixtureError",
    "GoldenError",
    "McpError",
    "ProviderAuthError",
    "ProviderConnectError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "ReplioError",
    "ToolSetError",
    "UnknownFixtureError",
    "UnknownProviderError",
    "UsageError",
    "UserCodeError",
]


class ReplioError(Exception):
    """Base of every error replio-replay raises on purpose."""


class UsageError(ReplioError):
    """A bad flag, provider spec or name; the CLI exits with status 2."""


class UnknownFixtureError(UsageError):
    """A fixture id was asked for that no source defines."""


class UnknownProviderError(UsageError):
    """A provider name is not registered, or no provider was named at all."""


class ConfigError(ReplioError):
    """The project's configuration file does not parse or validate."""


class ToolSetError(ConfigError):
    """A tool-set file does not parse or validate, or its tools cannot be resolved."""


class FixtureError(ReplioError):
    """One fixture file or plugin entry is broken; it is reported and skipped."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class BenchmarkError(ReplioError):
    """One case of an imported benchmark cannot be converted to a fixture; it is reported and skipped."""

    def __init__(self, case_id: str, message: str) -> None:
        super().__init__(f"case {case_id}: {message}")
        self.case_id = case_id
        self.message = message


class ProviderError(ReplioError):
    """The provider failed for one fixture; that fixture ends in ``error``."""


class ProviderAuthError(ProviderError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class ProviderHTTPError(ProviderError):
    """The provider answered with an HTTP error that retries did not cure."""


class ContextFullError(ProviderHTTPError):
    """The server refused the request because the conversation no longer fits the model's context
    window. The model's own doing (it wrote or read that much), so the fixture ends `truncated`,
    as at a turn limit, and is judged on what it did; not an `error`."""


class ProviderConnectError(ProviderError):
    """The provider could not be reached: refused, timed out or dropped."""


class ProviderResponseError(ProviderError):
    """The provider's body is not JSON, or not the shape its wire format promises."""


class McpError(ReplioError):
    """An MCP server could not be started, did not answer in time, or went away (named, with its stderr)."""


class AgentError(ReplioError):
    """The user's own agent could not start, exited non-zero, timed out, broke the protocol or never
    sent the model a request; its fixture ends in ``error`` naming which."""


class UserCodeError(ReplioError):
    """The project's Python (an environment's constructor, method or state, a Python tool by path)
    took longer than `tool_timeout`, ended the child process it runs in or stopped answering: the
    child is killed with all it started, and its fixture ends in ``error`` naming the class or
    function, the method and what happened."""


class CassetteError(ReplioError):
    """A cassette is missing, broken, exhausted, or would write a secret to disk."""


class GoldenError(ReplioError):
    """A golden file is broken or may not be written."""
