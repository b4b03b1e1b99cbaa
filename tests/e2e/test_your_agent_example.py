"""The committed your-agent example (examples/your-agent): a support desk written twice, on the
`openai` SDK and as a pydantic-ai Agent, recorded through the relay against both local models,
replayed offline (the agents started for real, answered from the cassettes) under --strict."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import replio_in_process
from tests.support.example_replays import SharedReplays

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "your-agent"
MODELS = "llamacpp:qwen2.5-coder-1.5b-instruct,llamacpp:qwen2.5-coder-0.5b-instruct"


def _replay(project: Path, tmp_path: Path, *extra: str, models: str = MODELS) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}  # nothing may be sent on
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        env.pop(var, None)
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), "run", "--compare", models,
            "--tools", "default,pydantic-ai", "--output", "json", "--jobs", "4", *extra]
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_example_replays_offline_without_drift(example_replay: SharedReplays) -> None:
    """The replay docs/examples.md shows, run once for both tests (tests/support/example_replays.py)."""
    first = example_replay("your-agent", "--compare", MODELS, "--tools", "default,pydantic-ai")
    assert first.report, first.stderr[-3000:]
    report = first.report
    fixtures = sorted(p.stem for p in (EXAMPLE / ".replio" / "eval").glob("*.json"))
    assert len(fixtures) >= 6
    assert [(r["model"], r["tools"]) for r in report["runs"]] == [
        (m, t) for m in ("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct") for t in ("default", "pydantic-ai")]
    for run in report["runs"]:
        assert sorted(f["id"] for f in run["fixtures"]) == fixtures
        for fixture in run["fixtures"]:
            where = (run["model"], run["tools"], fixture["id"])
            assert fixture["status"] != "error", (where, fixture["error"])
            assert fixture["drift"] == [] and fixture["request_drift"] == [], where
            assert fixture["tokens"] > 0, where
    assert first.returncode == 0  # a verifier's FAIL is a measurement, not a failure of the run (exit-codes.md)
    assert "drift" not in first.stderr and "no golden" not in first.stderr, first.stderr[-2000:]


def test_a_description_edited_in_the_agents_code_is_a_reviewed_diff(tmp_path: Path) -> None:
    project = tmp_path / "copy"
    shutil.copytree(EXAMPLE, project)
    source = project / "agents" / "openai_agent.py"
    old = '"description": "Look up one order by its id (like A-1001): its status, items, total and currency."'
    assert old in source.read_text()
    source.write_text(source.read_text().replace(old, '"description": "Find an order."'))
    done = _replay(project, tmp_path, "--strict", "--fixture", "order-status", "--fixture", "lookup-then-refund",
                   models=MODELS.split(",")[0])
    assert done.returncode == 1
    for run in _report(done)["runs"]:
        for fixture in run["fixtures"]:
            drift = [(d["path"], d.get("new")) for d in fixture["request_drift"]]
            # Only the openai-SDK agent changed; the pydantic-ai one describes its tools itself.
            expected = [("tools[lookup_order].description", "Find an order.")] if run["tools"] == "default" else []
            assert drift == expected, (run["model"], run["tools"], fixture["id"])
    status = replio_in_process("eval", "--path", project, "status")  # it only reads the project: in this process
    assert "tool set 'default' changed" in status.stdout, status.stdout[-2000:]
