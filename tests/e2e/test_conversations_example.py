"""The committed conversations example (examples/conversations): a shop environment, scripted
turns, simulated users and end-state checks, recorded against both local models (each playing
the agent and the simulated user), replayed offline, deterministically, under --strict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "conversations"


def _replay(tmp_path: Path) -> dict[str, Any]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           # Any request that is not answered from a cassette fails at once.
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        env.pop(var, None)
    specs = sorted({f"{p.parent.name}:{p.name}" for p in (EXAMPLE / "golden").glob("*/*")})
    assert len(specs) == 2, specs
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(EXAMPLE), "run",
            "--compare", ",".join(specs), "--output", "json", "--strict"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_conversations_example_replays_offline_without_drift(tmp_path: Path) -> None:
    report = _replay(tmp_path)
    files = {p.stem: json.loads(p.read_text()) for p in (EXAMPLE / ".replio" / "eval").glob("*.json")}
    tags = {fid: f["tags"] for fid, f in files.items()}
    fixtures = sorted(files)
    assert len(fixtures) >= 8
    for run in report["runs"]:
        assert sorted(f["id"] for f in run["fixtures"]) == fixtures
        for fixture in run["fixtures"]:
            assert fixture["drift"] == [] and fixture["request_drift"] == [], fixture["id"]
            assert set(fixture["state"]) == {"shop"}, fixture["id"]  # every fixture judges the shop's end state
            said = fixture.get("conversation")
            if "simulated" in tags[fixture["id"]]:
                # What the simulated user said is in the conversation, its tokens apart from the agent's.
                task = files[fixture["id"]].get("task")
                said_by_user = [m["content"] for m in said if m["role"] == "user"][1 if task else 0:]
                assert said[0]["role"] == "user" and (task is None or said[0]["content"] == task), fixture["id"]
                if said_by_user:
                    assert fixture["tokens_by_role"]["user"]["completion"] > 0, fixture["id"]
            elif "scripted" in tags[fixture["id"]]:  # the task opens; later turns follow as far as it got
                assert said[0] == {"role": "user", "content": files[fixture["id"]]["task"]}, fixture["id"]
            judged = "judge" in files[fixture["id"]]["verifier"]
            # The recorded judge's verdict and reason are replayed, never asked again.
            assert ("judge" in fixture) == judged and (not judged or fixture["judge"]["reason"]), fixture["id"]
    # A second replay reports the very same result.
    again = tmp_path / "again"
    again.mkdir()
    assert _replay(again) == report
