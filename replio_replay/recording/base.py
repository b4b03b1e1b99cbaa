"""A fixture's HTTP session as the runner sees it: the transport to send through, and extras after.

The plain session sends straight through the provider's shared, pooled transport; recording
subclasses it (`recording.session`). This module imports no vcrpy, so the runner can hold
the interface without loading recording.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..results import Status

if TYPE_CHECKING:
    import httpx

    from ..cases import Case
    from ..providers.base import Provider

__all__ = ["FixtureSession", "SessionFactory", "live_session"]


class FixtureSession:
    """One fixture's HTTP: the transport to send through, and result keys it adds when done."""

    def __init__(self, transport: httpx.BaseTransport | None) -> None:
        self.transport = transport
        self.extras: dict[str, Any] = {}

    def finish(self, status: Status) -> None:
        """Called once the loop ended; may raise ReplioError to turn the fixture into an error."""


#: (case, provider, the run's cancel event) -> the fixture's session.
SessionFactory = Callable[["Case", "Provider", "threading.Event | None"], FixtureSession]


def live_session(case: Case, provider: Provider, cancel: threading.Event | None = None) -> FixtureSession:
    """No recording: send straight through the provider's shared, pooled transport."""
    return FixtureSession(provider.transport(cancel))
