"""Record and replay for the Responses API and Gemini: reasoning items and thought signatures go
back over real HTTP as received, replays match without drift, and no key reaches a cassette."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import gemini_agent, reasoning_item, responses_agent
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import PLANS, run_args, write_project

KEY = "AIzaSy-test-0123456789abcdefghijklmnop"
Agent = Callable[[Mapping[str, Sequence[Any]]], Callable[[Seen], Reply]]
FORMATS = [("openai-responses", responses_agent, "/v1"), ("gemini", gemini_agent, "/v1beta")]


def _run(project: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    result = CliRunner().invoke(main, run_args(project, *extra), env=env, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _comparable(run: dict) -> list[dict]:
    keys = ("id", "trace", "names", "pass", "calls", "tokens", "status", "answer")
    return [{k: f[k] for k in keys} for f in run["fixtures"]]


@pytest.mark.parametrize(("provider", "agent", "prefix"), FORMATS)
def test_record_then_replay_carries_the_provider_items_with_no_drift(
    tmp_path: Path, llm_server: LLMServer, provider: str, agent: Agent, prefix: str
) -> None:
    project = write_project(tmp_path / "proj", provider=f"{provider}:test-model")
    llm_server.handler = agent(PLANS)
    code, recorded = _run(project, "--base-url", llm_server.url + prefix, "--record-mode", "once", "--update-golden")
    assert code == 0, recorded
    # the agent answers 400 to any request that dropped or changed what it sent before
    assert [f["names"] for f in recorded["fixtures"]] == [["file_read"], ["list_dir", "glob"]]
    assert [f["pass"] for f in recorded["fixtures"]] == [True, True]
    totals = [130, 131] if provider == "openai-responses" else [150, 151]
    assert [f["tokens"] for f in recorded["fixtures"]] == [sum(totals)] * 2
    sent = len(llm_server.requests)
    llm_server.close()

    code, replayed = _run(project, "--record-mode", "none", "--strict")
    assert code == 0, json.dumps(replayed)[:3000]
    assert _comparable(replayed) == _comparable(recorded)
    assert [f["request_drift"] for f in replayed["fixtures"]] == [[], []]
    assert len(llm_server.requests) == sent

    assert sorted(p.name for p in (project / "golden" / provider / "test-model").iterdir()) == [
        "alpha.json", "beta.json"]
    cassette = yaml.safe_load((project / "cassettes" / provider / "test-model" / "beta.yaml").read_text())
    second = cassette["interactions"][1]["request"]["body"]["json"]
    if provider == "openai-responses":
        assert second["input"][1] == reasoning_item(0)
        assert [i.get("type") for i in second["input"][1:]] == [
            "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"]
    else:
        model_turn, answers = second["contents"][1:]
        assert model_turn["parts"][0]["thoughtSignature"] == "c2ln-call-0"
        assert [p["functionResponse"]["name"] for p in answers["parts"]] == ["list_dir", "glob"]


def test_the_gemini_key_header_never_reaches_a_cassette(tmp_path: Path, llm_server: LLMServer) -> None:
    project = write_project(tmp_path / "proj", provider="gemini:test-model")
    llm_server.handler = gemini_agent(PLANS)
    code, out = _run(project, "--base-url", llm_server.url + "/v1beta", "--record-mode", "once",
                     env={"GEMINI_API_KEY": KEY})
    assert code == 0, out
    assert {s.headers["x-goog-api-key"] for s in llm_server.requests} == {KEY}
    assert all("key=" not in s.path for s in llm_server.requests)
    text = "".join(p.read_text() for p in (project / "cassettes").rglob("*.yaml"))
    assert KEY not in text and "x-goog-api-key" not in text.lower()
    assert KEY not in json.dumps(out)


def test_a_key_in_the_base_url_query_is_redacted_in_the_cassette_and_the_report(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    project = write_project(tmp_path / "proj", provider="gemini:test-model")
    llm_server.handler = gemini_agent(PLANS)
    code, out = _run(project, "--base-url", f"{llm_server.url}/v1beta?key={KEY}", "--record-mode", "once")
    assert code == 0, out
    assert all(s.path.endswith(f":generateContent?key={KEY}") for s in llm_server.requests)
    text = "".join(p.read_text() for p in (project / "cassettes").rglob("*.yaml"))
    assert KEY not in text
    assert "models/test-model:generateContent?key=REDACTED" in text
    assert KEY not in json.dumps(out)
