"""Shared test fixtures: a scripted loopback LLM server and an isolated config home."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agents import openai_agent
from tests.support.example_replays import SharedReplays
from tests.support.isolation import isolate
from tests.support.llm_server import LLMServer
from tests.support.project import PLANS, write_project

pytest_plugins = ["pytester"]


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A scripted HTTP server on 127.0.0.1 with a free port."""
    with LLMServer() as server:
        yield server


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound, never listening, and held for the test,
    so no server started meanwhile (by another xdist worker, say) can take it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's ~/.config/replio, real provider keys or terminal width."""
    isolate(monkeypatch, tmp_path_factory)


@pytest.fixture(scope="session")
def example_replay(tmp_path_factory: pytest.TempPathFactory) -> SharedReplays:
    """`example_replay(EXAMPLE, *ARGS)`: the committed example's replay, run once for the session
    (for all the xdist workers) and shared by the tests that check it (tests/support/example_replays.py)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    home = tmp_path_factory.mktemp("example-replays")
    return SharedReplays(home, tmp_path_factory.getbasetemp().parent if worker else None)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the local fixtures `alpha` and `beta` and `openai:test-model` as its provider."""
    return write_project(tmp_path / "proj")


@pytest.fixture
def agent(llm_server: LLMServer) -> LLMServer:
    """The loopback server playing an OpenAI-compatible agent that follows PLANS."""
    llm_server.handler = openai_agent(PLANS)
    return llm_server
