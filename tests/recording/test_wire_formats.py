"""Record and replay for the Anthropic and Ollama wire formats: the same cassette layout, no drift."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer, Reply, Seen

READ = {"path": "notes.txt"}


def anthropic_agent(seen: Seen) -> Reply:
    messages = seen.json()["messages"]
    answered = any(isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
                   for m in messages)
    content = ([{"type": "text", "text": "It says hello."}] if answered
               else [{"type": "tool_use", "id": "toolu_01", "name": "file_read", "input": READ}])
    return Reply(json={"id": "msg_01", "type": "message", "role": "assistant", "content": content,
                       "stop_reason": "end_turn" if answered else "tool_use",
                       "usage": {"input_tokens": 50, "output_tokens": 5}})


def ollama_agent(seen: Seen) -> Reply:
    answered = any(m["role"] == "tool" for m in seen.json()["messages"])
    message = ({"role": "assistant", "content": "It says hello."} if answered else
               {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "file_read", "arguments": READ}}]})
    return Reply(json={"message": message, "done": True, "prompt_eval_count": 50, "eval_count": 5})


def _run(project: Path, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--output", "json", *args])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(("spec", "agent"), [("anthropic:claude-test", anthropic_agent),
                                             ("ollama:llama-test", ollama_agent)])
def test_record_then_replay_with_no_drift(tmp_path: Path, llm_server: LLMServer, spec: str,
                                          agent: Callable[[Seen], Reply]) -> None:
    (tmp_path / ".replio" / "eval").mkdir(parents=True)
    (tmp_path / ".replio" / "eval" / "hello.json").write_text(json.dumps(
        {"task": "What does notes.txt say?", "files": {"notes.txt": "hello\n"}, "expected": ["file_read"]}))
    llm_server.handler = agent
    base = llm_server.url + ("/v1" if spec.startswith("anthropic") else "")
    code, recorded = _run(tmp_path, "--fixture", "hello", "--provider", spec, "--base-url", base,
                          "--record-mode", "once", "--update-golden")
    assert code == 0, recorded
    llm_server.close()

    code, replayed = _run(tmp_path, "--fixture", "hello", "--provider", spec, "--record-mode", "none", "--strict")
    assert code == 0, replayed
    (fx,) = replayed["fixtures"]
    assert (fx["status"], fx["names"], fx["request_drift"]) == ("ok", ["file_read"], [])
    assert fx["trace"] == recorded["fixtures"][0]["trace"]

    provider, model = spec.split(":")
    text = (tmp_path / "cassettes" / provider / model / "hello.yaml").read_text()
    assert "\ntools: &id001\n" in text and text.count("tools: *id001") == 2
    data = yaml.safe_load(text)  # any safe loader reads it, aliases resolved
    assert all(i["request"]["body"]["json"]["tools"] == data["tools"] for i in data["interactions"])
