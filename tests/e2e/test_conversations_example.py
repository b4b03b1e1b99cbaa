"""The committed conversations example (examples/conversations): a shop environment, scripted
turns, simulated users and end-state checks, recorded against both local models (each playing
the agent and the simulated user), replayed offline, deterministically, under --strict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.example_replays import SharedReplays, replay

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "conversations"
MODELS = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"
#: The replay docs/examples.md shows, both models side by side.
ARGS = ("--compare", MODELS)


def test_the_conversations_example_replays_offline_without_drift(tmp_path: Path, example_replay: SharedReplays) -> None:
    # run once for this test and the docs' (tests/support/example_replays.py), offline, under --strict
    first = example_replay("conversations", *ARGS)
    assert first.returncode == 0, first.stderr[-3000:]
    report = first.report
    assert sorted(f"{p.parent.name}:{p.name}" for p in (EXAMPLE / "golden").glob("*/*")) == sorted(MODELS.split(","))
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
    # Replayed again, a scripted and a simulated conversation, each judged, report the very same result.
    again = replay("conversations", [*ARGS, *AGAIN], tmp_path / "again").report
    assert [_entries(run) for run in again["runs"]] == [_entries(run) for run in report["runs"]]
    assert all(len(_entries(run)) == 2 for run in again["runs"])


#: The fixtures replayed a second time.
AGAIN = ("--fixture", "return-not-cancel", "--fixture", "sim-return-headphones")


def _entries(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in run["fixtures"] if f["id"] in AGAIN[1::2]]
