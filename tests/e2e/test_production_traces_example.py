"""The committed production-traces example (examples/production-traces): a support agent on the
`openai` SDK, traced by the official OpenTelemetry instrumentation, ran its day's conversations
against the local Qwen2.5-Coder 1.5B; its trace file was imported (`--redact-file redact.json`),
and a verifier written into each fixture. The replay sends nothing, follows each trace, and
fails exactly the conversations that went wrong."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.llm_server import LLMServer

# One xdist worker runs the module (--dist loadgroup): its replay, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("production-traces-example")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "production-traces"
FIXTURES = EXAMPLE / ".replio" / "eval" / "otel"
#: The conversations that went wrong in production, and so fail their verifiers on replay.
WENT_WRONG = {
    "Refund A-1001 please, I changed my mind.",  # refunded a shipped order, answered "Thank you for your order."
    "Please cancel order A-1004, I don't need it anymore.",  # cancelled it, but told the customer nothing of it
    "Where is order B-77?",  # called no tool and answered with a made-up <tool_response> blob
    "Hi! What can you help me with?",  # never said what it helps with
}
WENT_RIGHT = {
    "Where is my order A-1001?",
    "My order A-1003 arrived broken. Please refund it. You can reach me at customer@example.com if needed.",
    "Which of my orders are still pending?",
    "How much is 120 EUR in US dollars?",
    "What did I order in A-1002?",
}
#: Conversations the import writes without a cassette (the agent gave up after its 6 steps, so the last
#: call's result never reached the trace): they cannot replay offline and are not committed.
NOT_REPLAYABLE = {"trace-88e71adbba11edd2b4a293966e9135d4": "Cancel A-1001 please.",
                  "trace-3a8bf1dc9f233d5283f75e318d4c8dc7": "What is 50 GBP in Japanese yen?"}


def _replio(*args: str, tmp_path: Path, base_url: str | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(var, None)
    if base_url is not None:
        env["OPENAI_BASE_URL"] = f"{base_url}/v1"
    return subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", *args], capture_output=True,
                          text=True, env=env, cwd=cwd or tmp_path, timeout=300)


def _fixtures() -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))}


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """One offline replay of the example, against a witness server every request would reach."""
    tmp_path = tmp_path_factory.mktemp("replay")
    with LLMServer() as witness:
        done = _replio("--path", str(EXAMPLE), "run", "--record-mode", "none", "--strict", "--output", "json",
                       tmp_path=tmp_path, base_url=witness.url)
        return done, list(witness.requests)


def test_the_replay_sends_nothing_and_fails_exactly_the_conversations_that_went_wrong(
        replay: tuple[subprocess.CompletedProcess[str], list[Any]]) -> None:
    done, sent = replay
    assert sent == []
    assert done.returncode == 0, done.stderr[-3000:]
    results = {f["task"]: f for f in json.loads(done.stdout)["fixtures"]}
    assert set(results) == WENT_WRONG | WENT_RIGHT
    for task, result in results.items():
        assert result["status"] == "ok", (task, result["error"])
        assert result["synthesized"], task
        assert result["drift"] == [] and result["request_drift"] == [], task
        assert result["pass"] is (task in WENT_RIGHT), (task, result["reasons"])
    assert "avoid: refund_order was called" in results["Refund A-1001 please, I changed my mind."]["reasons"][0]


def test_the_committed_files_are_what_a_fresh_import_of_the_trace_file_writes_plus_the_verifiers(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".replio").mkdir(parents=True)
    (project / ".replio" / "config.json").write_text((EXAMPLE / ".replio" / "config.json").read_text())
    done = _replio("--path", str(project), "import", "otel", "traces", "--redact-file", "redact.json",
                   tmp_path=tmp_path, cwd=EXAMPLE)
    # The day's last conversation was cut off before its root span was exported: the import names it,
    # imports the rest and exits 1 for the problem.
    assert done.returncode == 1, done.stdout + done.stderr
    assert "skipped trace 81ea28d3770b4eb58d345ac82bcf41bd" in done.stderr
    assert re.search(r"redacted email: [1-9]", done.stdout), done.stdout
    without = set(re.findall(r"(trace-[0-9a-f]{32}): written without a cassette", done.stderr))
    assert without == set(NOT_REPLAYABLE)
    again = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (project / ".replio/eval/otel").glob("*.json")}
    committed = _fixtures()
    assert sorted(again) == sorted([*committed, *NOT_REPLAYABLE])
    assert {fid: again[fid]["task"] for fid in NOT_REPLAYABLE} == NOT_REPLAYABLE
    for fixture_id, fixture in committed.items():
        assert fixture.get("verifier"), f"{fixture_id} has no verifier written for it"
        assert {k: v for k, v in fixture.items() if k != "verifier"} == again[fixture_id]
    # The cassettes are the import's (but for the day their header names); the goldens differ only in the
    # verdicts the verifiers gave.
    cassettes = sorted((EXAMPLE / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == len(committed)
    for cassette in cassettes:
        mine, fresh = (yaml.safe_load(p.read_text(encoding="utf-8"))
                       for p in (cassette, project / cassette.relative_to(EXAMPLE)))
        del mine["replio"]["recorded"], fresh["replio"]["recorded"]
        assert mine == fresh, cassette.name
    goldens = sorted((EXAMPLE / "golden").rglob("*.json"))
    assert [g.relative_to(EXAMPLE) for g in goldens] == sorted(g.relative_to(project)
                                                                for g in (project / "golden").rglob("*.json"))
    for golden in goldens:
        mine, fresh = (json.loads(p.read_text(encoding="utf-8")) for p in (golden, project / golden.relative_to(EXAMPLE)))
        assert {k: v for k, v in mine.items() if k != "pass"} == {k: v for k, v in fresh.items() if k != "pass"}


def test_the_email_is_redacted_in_everything_the_import_wrote() -> None:
    written = [p for d in (".replio", "cassettes", "golden") for p in (EXAMPLE / d).rglob("*") if p.is_file()]
    assert len(written) > 2 * len(_fixtures())
    for path in written:
        assert "jane.doe" not in path.read_text(encoding="utf-8"), path
    assert "jane.doe@mail.example" in (EXAMPLE / "traces" / "shop-support.json").read_text(encoding="utf-8")
    assert "customer@example.com" in json.dumps(_fixtures())
