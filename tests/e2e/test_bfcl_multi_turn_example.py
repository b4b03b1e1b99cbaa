"""The BFCL multi-turn example (examples/bfcl-multi-turn): BFCL's cases imported as conversations
over its own classes, the recorded ones replayed offline under --strict for each local model without
drift from the committed goldens (which hold each case's turns, answer and the classes' end state, so
every replay is pinned to the recording); one case per model is replayed again and reports the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.example_replays import SharedReplays

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "bfcl-multi-turn"
MODELS = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"


def _recorded() -> dict[str, list[str]]:
    """Model -> the fixtures recorded for it (the example is recorded case by case)."""
    return {d.name: sorted(p.stem for p in d.glob("*.yaml")) for d in (EXAMPLE / "cassettes" / "llamacpp").iterdir()}


def _replay(model: str, ids: list[str], tmp_path: Path) -> dict[str, Any]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}  # any request not answered from a cassette fails
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(EXAMPLE), "run",
            "--provider", f"llamacpp:{model}", "--strict", "--output", "json", *[a for i in ids for a in ("--fixture", i)]]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_recorded_multi_turn_cases_replay_offline_without_drift(tmp_path: Path, example_replay: SharedReplays) -> None:
    recorded = _recorded()
    assert set(recorded) == {"qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"}
    # the replay of both models docs/examples.md shows, run once for both tests (tests/support/example_replays.py)
    both = example_replay("bfcl-multi-turn", "--compare", MODELS, "--output", "json")
    assert both.returncode == 0, both.stderr[-3000:]
    assert [f'llamacpp:{r["model"]}' for r in both.report["runs"]] == MODELS.split(",")
    for report in both.report["runs"]:
        model, ids = report["model"], recorded[report["model"]]
        assert ids, model
        assert sorted(f["id"] for f in report["fixtures"]) == ids
        for fixture in report["fixtures"]:
            assert fixture["drift"] == [] and fixture["request_drift"] == [], (model, fixture["id"])
            assert fixture["status"] in ("ok", "truncated"), (model, fixture["id"], fixture["error"])
            assert fixture["state"] and fixture["conversation"][0]["role"] == "user", (model, fixture["id"])
        # the goldens pin what drift compares; the rest of the report (metrics, requests) is deterministic too
        again = tmp_path / model
        again.mkdir()
        (same,) = _replay(model, ids[:1], again)["fixtures"]
        assert same == next(f for f in report["fixtures"] if f["id"] == ids[0]), (model, ids[0])
