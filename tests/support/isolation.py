"""What every test runs under (an isolated config home and cache, no provider keys, no terminal
width), and the same for a fixture of a wider scope that records a project once for its module."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The variables no test may read from the machine that runs it.
UNSET = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "CI",
         "COLUMNS")


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No replio run reads the developer's ~/.config/replio, real provider keys or terminal width."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    for var in UNSET:
        monkeypatch.delenv(var, raising=False)


@contextmanager
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """`isolate` for a module- or session-scoped fixture, undone when it ends."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, tmp_path_factory)
        yield


def copy_of(template: Path, tmp_path: Path) -> Path:
    """A test's own copy of a project recorded once for its module, at `tmp_path/proj` (where the
    `project` fixture writes one), to change as it likes."""
    return Path(shutil.copytree(template, tmp_path / "proj", symlinks=True))
