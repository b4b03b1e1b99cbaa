"""No sockets during a replay: while blocked, any attempt to connect fails with a clear message.

The one exception is an address the replay must reach: an MCP server replayed live
(`"replay": "live"`, `--mcp live`) over HTTP.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

__all__ = ["NetworkBlocked", "network_blocked"]

_lock = threading.Lock()
_depth = 0
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_allowed: set[tuple[str, int]] = set()


class NetworkBlocked(OSError):
    """A connection was attempted while replaying with record mode `none`."""


def _refuse(sock: socket.socket, address: Any, *args: Any) -> Any:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return _real_connect(sock, address)
    if isinstance(address, tuple) and tuple(address[:2]) in _allowed:
        return _real_connect(sock, address)
    raise NetworkBlocked(
        f"network blocked during replay (record mode none): a connection to {address!r} was attempted; "
        "record with --record-mode once to allow it"
    )


def _addresses(urls: Iterable[str]) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for url in urls:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            continue  # the connection will fail on its own, with the server named
        found.update((str(info[4][0]), int(info[4][1])) for info in infos)
    return found


@contextmanager
def network_blocked(allow: Iterable[str] = ()) -> Iterator[None]:
    """Refuse every TCP/UDP connect in this process until the block ends (re-entrant), but to the
    hosts and ports of the URLs in `allow`."""
    global _depth
    addresses = _addresses(allow)
    with _lock:
        _allowed.update(addresses)
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
                _allowed.clear()
                socket.socket.connect = _real_connect  # type: ignore[method-assign, assignment]
                socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign, assignment]
