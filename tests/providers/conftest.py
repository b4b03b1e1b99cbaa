"""Provider test fixtures: a fast, reset-per-test loopback server and tiny retry backoff.

`llm_server` here overrides the one in tests/conftest.py with the same `LLMServer`, but
started once per session and cleared before each test: stopping a server costs 0.5 s
(`serve_forever` polls for shutdown twice a second), which would dominate this suite.
Its handler also sends without Nagle's delay: the server writes headers and body
separately, so every request on a kept-alive connection otherwise stalls ~40 ms.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from replio_replay.providers import retry
from tests.support.llm_server import LLMServer


def _fast(server: LLMServer) -> LLMServer:
    server._httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    return server


def _reset(server: LLMServer) -> LLMServer:
    with server._lock:
        server.replies.clear()
        server.handler = None
        server.requests.clear()
    return server


@pytest.fixture(scope="session")
def _shared_servers() -> Iterator[tuple[LLMServer, LLMServer]]:
    servers = (_fast(LLMServer()), _fast(LLMServer()))
    yield servers
    closing = [threading.Thread(target=s.close) for s in servers]  # each close waits up to 0.5 s
    for t in closing:
        t.start()
    for t in closing:
        t.join()


@pytest.fixture
def llm_server(_shared_servers: tuple[LLMServer, LLMServer]) -> Iterator[LLMServer]:
    """A scripted HTTP server on 127.0.0.1, empty at the start of every test."""
    yield _reset(_shared_servers[0])
    _reset(_shared_servers[0])


@pytest.fixture
def second_server(_shared_servers: tuple[LLMServer, LLMServer]) -> Iterator[LLMServer]:
    """Another one, for comparing two providers side by side."""
    yield _reset(_shared_servers[1])
    _reset(_shared_servers[1])


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries wait milliseconds, not seconds."""
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.01)
