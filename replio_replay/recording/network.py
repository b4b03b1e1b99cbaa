"""No sockets during a replay: while blocked, any attempt to connect fails with a clear message."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["NetworkBlocked", "network_blocked"]

_lock = threading.Lock()
_depth = 0
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkBlocked(OSError):
    """A connection was attempted while replaying with record mode `none`."""


def _refuse(sock: socket.socket, address: Any, *args: Any) -> Any:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return _real_connect(sock, address)
    raise NetworkBlocked(
        f"network blocked during replay (record mode none): a connection to {address!r} was attempted; "
        "record with --record-mode once to allow it"
    )


@contextmanager
def network_blocked() -> Iterator[None]:
    """Refuse every TCP/UDP connect in this process until the block ends (re-entrant)."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            socket.socket.connect = _refuse  # type: ignore[method-assign, assignment]
            socket.socket.connect_ex = _refuse  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                socket.socket.connect = _real_connect  # type: ignore[method-assign, assignment]
                socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign, assignment]
