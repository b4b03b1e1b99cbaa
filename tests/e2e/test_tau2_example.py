"""The committed τ²-bench example (examples/tau2): mock's 10 tasks and retail's first, imported from a
tau2-bench checkout with τ²'s limits and recorded against the local 1.5B as agent, simulated user and judge;
replayed offline under --strict without drift from the committed goldens (turns, answer, pass and τ²'s
end state), τ²'s copied code answering the calls again; a task of each domain replayed a second time
is judged identically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.example_replays import SharedReplays

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "tau2"


def _replay(tmp_path: Path, *fixtures: str) -> dict[str, Any]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}  # nothing may be sent on
    done = subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(EXAMPLE), "run",
                           "--strict", "--output", "json", *[a for f in fixtures for a in ("--fixture", f)]],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]  # a task that fails is a measurement, not a failure of the run
    assert "drift" not in done.stderr and "no golden" not in done.stderr, done.stderr[-2000:]
    return dict(json.loads(done.stdout))


def _what_was_judged(report: dict[str, Any]) -> list[Any]:
    return [(f["id"], f["pass"], f["status"], f["trace"], f.get("user_trace"), f.get("state"), f.get("conversation"),
             f.get("judge"), f["reasons"]) for f in report["fixtures"]]


def test_the_example_replays_offline_and_again_identically(tmp_path: Path, example_replay: SharedReplays) -> None:
    # the replay docs/examples.md shows, run once for both tests (tests/support/example_replays.py)
    shared = example_replay("tau2", "--output", "json")
    assert shared.returncode == 0, shared.stderr[-3000:]
    assert "drift" not in shared.stderr and "no golden" not in shared.stderr, shared.stderr[-2000:]
    first = shared.report
    files = sorted(p.stem for p in (EXAMPLE / ".replio" / "eval" / "tau2").glob("*/*.json"))
    assert sorted(f["id"] for f in first["fixtures"]) == files
    assert sum(f.startswith("tau2-mock-") for f in files) == 10 and sum(f.startswith("tau2-retail-") for f in files) == 1
    for path in (EXAMPLE / ".replio" / "eval" / "tau2").glob("*/*.json"):  # imported with τ²'s run limits
        limits = json.loads(path.read_text(encoding="utf-8"))
        assert (limits["max_steps"], limits["max_tool_errors"]) == (200, 10), path.name
    for fixture in first["fixtures"]:
        assert fixture["status"] != "error", (fixture["id"], fixture["error"])
        assert fixture["drift"] == [] and fixture["request_drift"] == [], fixture["id"]
    # the goldens pin the trace, pass and end state; the user's trace, conversation and judge are pinned here
    again = [next(f for f in files if f.startswith(f"tau2-{domain}-")) for domain in ("mock", "retail")]
    second = _replay(tmp_path, *again)
    assert sorted(_what_was_judged(second), key=str) == sorted(
        [w for w in _what_was_judged(first) if w[0] in again], key=str)
    # every retail task's end state is judged against its reference actions (τ²'s DB check)
    retail = [f for f in first["fixtures"] if f["id"].startswith("tau2-retail-")]
    assert all("retail" in (f["state"] or {}) for f in retail)
