"""bench/multi_turn.py's own logic: the fixtures it replays per model, what it compares, how it pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import multi_turn  # noqa: E402


def test_it_replays_the_fixtures_recorded_for_the_model() -> None:
    example = multi_turn.ROOT / "examples" / multi_turn.EXAMPLES[0]  # the default: BFCL multi-turn
    ids = multi_turn.recorded(example, "qwen2.5-coder-1.5b-instruct")
    assert ids and all((example / ".replio" / "eval" / "bfcl" / f"{i}.json").is_file() for i in ids)


def test_the_sides_must_judge_alike_on_what_a_verdict_rests_on_not_on_timings() -> None:
    fixture = {"id": "a", "status": "ok", "pass": False, "drift": [], "request_drift": [], "state": {"x": 1},
               "seconds": 0.5}
    slower = {**fixture, "seconds": 0.9}
    assert multi_turn.judged(json.dumps({"fixtures": [fixture]})) == multi_turn.judged(json.dumps({"fixtures": [slower]}))
    assert multi_turn.judged(json.dumps({"fixtures": [fixture]})) != multi_turn.judged(
        json.dumps({"fixtures": [{**fixture, "state": {"x": 2}}]}))


def test_the_ratio_is_the_median_of_the_pairs() -> None:
    assert multi_turn.paired([2.0, 9.0, 3.0], [1.0, 3.0, 3.0]) == (3.0, 3.0, 2.0)
