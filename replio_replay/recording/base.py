"""A fixture's session as the runner sees it: the transport to send through, its MCP servers, extras after.

The plain session sends straight through the provider's shared, pooled transport and starts
MCP servers live; recording subclasses it (`recording.session`) to record or replay both. Every
connection that goes out to a provider (never a cassette's answers) passes through the session's
`Watch` first: under --max-cost, the run's meter, which prices each answer as it arrives.
This module imports no vcrpy and no MCP SDK, so the runner can hold the interface cheaply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import McpError
from ..judge.results import Status

if TYPE_CHECKING:
    import httpx

    from ..fixtures.cases import Case
    from ..providers.base import Provider
    from ..tools.mcp.config import McpServer
    from ..tools.mcp.source import McpTools, Mode
    from ..tools.toolset import ToolSet

__all__ = ["FixtureSession", "SessionFactory", "Watch", "live_session", "unwatched"]

#: Wraps a provider's live connection for one fixture (`run.budget.Meter.watch`); None: it has none.
Watch = Callable[["Provider", "httpx.BaseTransport | None"], "httpx.BaseTransport | None"]


def unwatched(provider: Provider, transport: httpx.BaseTransport | None) -> httpx.BaseTransport | None:
    """The `Watch` that leaves a connection as it is."""
    return transport


class FixtureSession:
    """One fixture's HTTP and MCP: the transport to send through, the MCP servers' tools, and the
    result keys it adds when done. The runner sets `offered` to the tools the model was offered."""

    def __init__(self, transport: httpx.BaseTransport | None, cancel: threading.Event | None = None,
                 watch: Watch = unwatched) -> None:
        self.transport = transport
        self.cancel = cancel
        self.watch = watch
        self.extras: dict[str, Any] = {}
        self.mcp: McpTools | None = None
        self.offered: ToolSet | None = None

    def transport_for(self, role: str, provider: Provider) -> httpx.BaseTransport | None:
        """The transport the requests of `role` (a simulated user's, a judge's) sent by `provider`
        go through: here that provider's own (None for one without HTTP, the mock), watched."""
        return self.watch(provider, provider.transport(self.cancel))

    def recorded_agent(self) -> tuple[str | None] | None:
        """Who made the recording this fixture replays: (the user's agent as declared,), (None,) for
        replio's own loop; None when nothing replays, as here."""
        return None

    def discard(self) -> None:
        """Keep nothing of what this fixture recorded (its exchanges are not whole): here nothing is kept."""

    def request_changes(self) -> list[str]:
        """The replayed requests' changes from their recordings so far, each as `request (ROLE): PATH KIND`:
        none here, where nothing is replayed."""
        return []

    def mcp_modes(self, servers: Mapping[str, McpServer]) -> dict[str, Mode]:
        """How each server is met: here all started live, nothing recorded."""
        return dict.fromkeys(servers, "live")

    def mcp_tools(self, servers: Mapping[str, McpServer], *, root: Path, env: Mapping[str, str],
                  project: Path | None = None) -> McpTools:
        """The fixture's MCP servers, to `open` and `close`, each met as `mcp_modes` says."""
        from ..tools.mcp.source import McpTools

        self.mcp = McpTools(servers, self.mcp_modes(servers), root=root, env=env, project=project)
        return self.mcp

    def finish(self, status: Status) -> None:
        """Called once the loop ended; may raise ReplioError to turn the fixture into an error."""
        self.mcp_failed()

    def mcp_failed(self) -> None:
        """Raise McpError when an MCP server failed during the fixture (its calls got `Error:` results)."""
        if self.mcp is not None and self.mcp.failures:
            raise McpError("; ".join(self.mcp.failures))


#: (case, provider, the run's cancel event, what watches its live connections) -> the fixture's session.
SessionFactory = Callable[["Case", "Provider", "threading.Event | None", Watch], FixtureSession]


def live_session(case: Case, provider: Provider, cancel: threading.Event | None = None,
                 watch: Watch = unwatched) -> FixtureSession:
    """No recording: send straight through the provider's shared, pooled transport, watched."""
    return FixtureSession(watch(provider, provider.transport(cancel)), cancel, watch)
