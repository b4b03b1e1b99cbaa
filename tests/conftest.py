"""Shared test fixtures: a scripted loopback LLM server and an isolated config home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_server import LLMServer


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A scripted HTTP server on 127.0.0.1 with a free port."""
    with LLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's ~/.config/replio or real provider keys."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL",
                "OLLAMA_HOST", "CI"):
        monkeypatch.delenv(var, raising=False)
