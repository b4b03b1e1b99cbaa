"""The code stays lint-clean (ruff) and type-clean (mypy with pydantic's plugin)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    done = _run("ruff", "check", "replio_replay", "tests", "bench")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean() -> None:
    done = _run("mypy", "replio_replay", "--cache-dir", str(REPO / ".mypy_cache"))
    assert done.returncode == 0, done.stdout + done.stderr
