"""Throwaway worktrees: one temp folder per fixture, provisioned, always removed afterwards."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .fixtures.model import Fixture

__all__ = ["TEMP_PREFIX", "worktree"]

TEMP_PREFIX = "replio-wt-"


@contextmanager
def worktree(fixture: Fixture, settings: Mapping[str, Any]) -> Iterator[Path]:
    """A fresh folder holding the fixture's files and `.replio/config.json` with `settings`.

    The folder is removed on exit, also on error and on KeyboardInterrupt.
    """
    root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    try:
        for rel, content in fixture.files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        config = root / ".replio" / "config.json"
        config.parent.mkdir(exist_ok=True)
        config.write_text(json.dumps(dict(settings), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
