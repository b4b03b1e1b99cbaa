"""A provider's final error is recorded and replayed like any answer; recorded retries replay at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import run_args

OVERFLOW = {"error": {"message": "request (17307 tokens) exceeds the available context size (16384 tokens)"}}
REFUSED = {"error": {"message": "tools[0].function.parameters: unsupported schema"}}


def _run(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _comparable(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: f[k] for k in ("id", "status", "error", "names", "trace", "tokens", "accuracy")}
            for f in report["fixtures"]]


@pytest.mark.parametrize(("body", "status", "code", "said"), [
    (REFUSED, "error", 1, "unsupported schema"),
    # the model's doing, as at a turn limit: judged as it stands, and saying why it stopped
    (OVERFLOW, "truncated", 0, "no longer fits the model's context window"),
])
def test_a_final_error_is_recorded_and_replayed_identically(
    project: Path, llm_server: LLMServer, body: dict[str, Any], status: str, code: int, said: str,
) -> None:
    agent = openai_agent({"ALPHA": [[("file_read", {"path": "notes.txt"})], "done"], "BETA": ["none"]})

    def failing(seen: Seen) -> Reply:
        if any(m["role"] == "tool" for m in seen.json()["messages"]):
            return Reply(400, json=body)
        return agent(seen)

    llm_server.handler = failing
    exit_code, recorded = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once"))
    assert exit_code == code
    alpha = recorded["fixtures"][0]
    assert alpha["status"] == status and said in alpha["error"] and alpha["names"] == ["file_read"]
    cassette = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    assert cassette.is_file(), "the error response was not recorded"
    sent = len(llm_server.requests)
    llm_server.close()

    exit_code, replayed = _run(*run_args(project, "--record-mode", "none"))
    assert exit_code == code
    assert _comparable(replayed) == _comparable(recorded)
    assert replayed["fixtures"][0]["request_drift"] == []
    assert len(llm_server.requests) == sent


def test_no_answer_at_all_leaves_no_cassette(project: Path, llm_server: LLMServer) -> None:
    agent = openai_agent({"ALPHA": [[("file_read", {"path": "notes.txt"})], "done"], "BETA": ["none"]})

    def dropping(seen: Seen) -> Reply:
        body = seen.json()
        if any(m["role"] == "tool" for m in body["messages"]):
            return Reply(drop=True)
        return agent(seen)

    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "providers": {"openai": {"retries": 0}}}))
    llm_server.handler = dropping
    code, recorded = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once"))
    assert recorded["fixtures"][0]["status"] == "error"
    assert not (project / "cassettes" / "openai" / "test-model" / "alpha.yaml").exists()
    assert (project / "cassettes" / "openai" / "test-model" / "beta.yaml").exists()


def test_recorded_retries_replay_without_waiting(project: Path, llm_server: LLMServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})
    failed: set[str] = set()

    def busy_once(seen: Seen) -> Reply:
        task = seen.json()["messages"][1]["content"][:5]
        if task not in failed:
            failed.add(task)
            return Reply(503, json={"error": "busy"}, headers={"retry-after": "0.3"})
        return agent(seen)

    llm_server.handler = busy_once
    code, recorded = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once"))
    assert code == 0
    cassette = (project / "cassettes" / "openai" / "test-model" / "alpha.yaml").read_text()
    assert cassette.count("code: 503") == 1
    llm_server.close()

    waits: list[float] = []
    monkeypatch.setattr("time.sleep", waits.append)
    code, replayed = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0
    assert [f["answer"] for f in replayed["fixtures"]] == ["done", "done"]
    assert [w for w in waits if w > 0] == [], "a replay waited before retrying"
