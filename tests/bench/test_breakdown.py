"""bench/breakdown.py's steps: each runs, and each imports what the one before it did and one layer more."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import breakdown  # noqa: E402


def loaded(code: str) -> set[str]:
    """The modules a process running `code` ends with (not those marked absent)."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\n"
                           "print(json.dumps([n for n, m in sys.modules.items() if m is not None]))"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_each_step_imports_all_the_one_before_it_did_and_more() -> None:
    steps = [loaded(code) for _, code in breakdown.STEPS]
    assert {"click", "pydantic", "httpx", "yaml", "httpx._main"} <= steps[1]
    assert "httpx._main" not in steps[2]  # as replio imports httpx
    for before, step in zip(steps[2:], steps[3:]):
        assert before < step
    assert {"vcr.cassette", "replio_replay.run.suite", "replio_replay.recording.session"} <= steps[-1]
