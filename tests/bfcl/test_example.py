"""The BFCL example project: its 400 fixtures load, and its recordings replay offline with the
verdicts that were approved, for both recorded models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "bfcl"
CATEGORIES = ("simple_python", "multiple", "parallel", "irrelevance")

#: Runs the CLI with every socket refused: a replay that tried the network would fail loudly.
NO_NETWORK = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network blocked by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
from replio_replay.cli import entry
entry()
"""


def recorded() -> list[str]:
    """The provider specs recorded under examples/bfcl/cassettes."""
    return sorted(f"{p.parent.name}:{p.name}" for p in (EXAMPLE / "cassettes").glob("*/*") if p.is_dir())


def replio(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp), "XDG_CACHE_HOME": str(tmp), "TMPDIR": str(tmp)}
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLAMACPP_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-c", NO_NETWORK, "eval", "--path", str(EXAMPLE), *args],
                          capture_output=True, text=True, env=env, cwd=tmp, timeout=600)


def test_the_example_holds_100_fixtures_of_each_category(tmp_path: Path) -> None:
    done = replio("list", "--output", "json", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["problems"] == []
    assert Counter(f["tags"][1] for f in listed["fixtures"]) == {c: 100 for c in CATEGORIES}


def test_the_example_replays_offline_with_the_approved_verdicts_of_two_models(tmp_path: Path) -> None:
    providers = recorded()
    assert len(providers) == 2, (
        f"examples/bfcl/cassettes should hold recordings of two models, not {providers}; record them as the "
        "README's BFCL section says")
    done = replio("run", "--compare", ",".join(providers), "--strict", "--output", "json", tmp=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout)["runs"]
    assert sorted(f"{r['provider']}:{r['model']}" for r in runs) == providers
    for run in runs:
        golden = EXAMPLE / "golden" / run["provider"] / run["model"]
        assert len(run["fixtures"]) == 400
        for result in run["fixtures"]:
            approved = json.loads((golden / f"{result['id']}.json").read_text())
            assert result["status"] == "ok", result
            assert result["pass"] is approved["pass"], result["id"]
            assert result["accuracy"] == (1.0 if result["pass"] else 0.0), result["id"]
