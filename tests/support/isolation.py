"""What every test runs under (an isolated config home and cache, no provider keys, no terminal
width), and the same for a fixture of a wider scope that records a project once for its module."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The variables no test may read from the machine that runs it.
UNSET = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "CI",
         "COLUMNS")


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No replio run reads the developer's ~/.config/replio, real provider keys or terminal width.

    The config home and cache are made by `tempfile.mkdtemp` in a folder of the session's
    temporary one, not by `tmp_path_factory.mktemp`: pytest numbers a folder by reading every
    name in the session's folder for the highest number, so two more numbered folders a test
    made each later `mktemp` (each `tmp_path` too) read thousands of names, a cost growing with
    the square of a worker's tests (at 4,000 names, about 4 ms a folder, measured)."""
    homes = tmp_path_factory.getbasetemp() / "isolated-homes"
    homes.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="xdg-", dir=homes))
    monkeypatch.setenv("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="cache-", dir=homes))
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
