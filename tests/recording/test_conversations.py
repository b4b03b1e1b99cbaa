"""A simulated-user conversation over loopback HTTP: agent and user requests recorded in one
cassette (the user's marked `role: user`), replayed with the server gone and the network blocked,
drift naming the user when its instructions change, trials each their own recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer, Reply, Seen, chat_completion

INSTRUCTIONS = "You are Ana. Ask what notes.txt says. Once told, thank the agent and write ###STOP###."
USER_SAYS = ["What does notes.txt say?", "Thanks! ###STOP### (not forwarded)"]


def handle(seen: Seen) -> Reply:
    """The simulator's requests carry no tools: it plays Ana; the agent reads the file, then answers."""
    body = seen.json()
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if "tools" not in body:
        return chat_completion(USER_SAYS[min(n, len(USER_SAYS) - 1)], body["model"], n)
    last = body["messages"][-1]
    if last["role"] == "user" and "notes" in last["content"]:
        call = {"id": f"call_{n}", "type": "function",
                "function": {"name": "file_read", "arguments": json.dumps({"path": "notes.txt"})}}
        return chat_completion(None, body["model"], n, [call])
    if last["role"] == "tool":
        return chat_completion("It says hello.", body["model"], n)
    return chat_completion("You are welcome.", body["model"], n)


def write(project: Path, **user: Any) -> Path:
    fixtures = project / ".replio" / "eval"
    fixtures.mkdir(parents=True, exist_ok=True)
    (fixtures / "talk.json").write_text(json.dumps({
        "files": {"notes.txt": "hello\n"},
        "user": {"instructions": INSTRUCTIONS, **user},
        "verifier": {"must_include": ["file_read"], "answer": {"$contains": "welcome"}},
    }))
    (project / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:test-model"}))
    return project


def run(project: Path, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--fixture", "talk", "--output",
                                       "json", *extra], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def recorded(tmp_path: Path, llm_server: LLMServer) -> Path:
    llm_server.handler = handle
    project = write(tmp_path / "proj")
    code, out, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--update-golden")
    assert code == 0, (out, err)
    fixture = json.loads(out)["fixtures"][0]
    assert fixture["pass"] and fixture["status"] == "ok", fixture
    assert [m["content"] for m in fixture["conversation"] if m["role"] == "user"] == [
        "What does notes.txt say?", "Thanks!"]
    assert set(fixture["tokens_by_role"]) == {"agent", "user"}
    assert all(INSTRUCTIONS not in s.body.decode() for s in llm_server.requests if b'"tools"' in s.body)
    llm_server.close()
    return project


def cassette(project: Path, name: str = "talk") -> dict[str, Any]:
    return yaml.safe_load((project / "cassettes" / "openai" / "test-model" / f"{name}.yaml").read_text())


def test_one_cassette_holds_both_streams_in_order(recorded: Path) -> None:
    data = cassette(recorded)
    roles = [item["request"].get("role", "agent") for item in data["interactions"]]
    assert roles == ["user", "agent", "agent", "user", "agent"]
    assert data["replio"]["user"] == {"provider": "openai", "model": "test-model"}


def test_a_replay_makes_no_provider_call_and_gives_the_same_result(recorded: Path) -> None:
    first = json.loads(run(recorded, "--record-mode", "none")[1])["fixtures"][0]
    code, out, err = run(recorded, "--record-mode", "none", "--strict")
    assert code == 0, (out, err)
    again = json.loads(out)["fixtures"][0]
    assert again["request_drift"] == [] and again["pass"]
    assert again == first and again["conversation"] == first["conversation"]


def test_changed_instructions_are_drift_named_by_the_user(recorded: Path) -> None:
    write(recorded, instructions=INSTRUCTIONS.replace("Ana", "Bea"))
    code, out, _ = run(recorded, "--record-mode", "none", "--strict")
    assert code == 1
    drift = json.loads(out)["fixtures"][0]["request_drift"]
    assert drift and {d["role"] for d in drift} == {"user"}
    assert "Bea" in drift[0]["new"]
    diff = CliRunner().invoke(main, ["eval", "--path", str(recorded), "diff", "--fixture", "talk"])
    assert "request (user): messages[0].content changed" in diff.stdout
    status = CliRunner().invoke(main, ["eval", "--path", str(recorded), "status"])
    assert "fixture changed" in status.stdout


def test_trials_record_each_their_own_conversation_and_replay_for_pass_hat_k(tmp_path: Path,
                                                                            llm_server: LLMServer) -> None:
    llm_server.handler = handle
    project = write(tmp_path / "proj")
    code, out, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once", "--trials", "2")
    assert code == 0, (out, err)
    assert len(llm_server.requests) == 10  # five requests per trial
    assert cassette(project, "talk.t2")["replio"]["trial"] == 2
    llm_server.close()
    code, out, err = run(project, "--record-mode", "none", "--trials", "2")
    assert code == 0, (out, err)
    data = json.loads(out)
    assert data["fixtures"][0]["passes"] == 2 and data["summary"]["pass_hat_k"] == {"1": 1.0, "2": 1.0}


def test_a_user_provider_of_its_own_is_recorded_in_the_same_cassette(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = handle
    project = write(tmp_path / "proj", provider="openai:sim-model")
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({"provider": "openai:test-model",
                                  "providers": {"openai": {"base_url": f"{llm_server.url}/v1"}}}))
    code, out, err = run(project, "--record-mode", "once", "--update-golden")
    assert code == 0, (out, err)
    models = [s.json()["model"] for s in llm_server.requests]
    assert models == ["sim-model", "test-model", "test-model", "sim-model", "test-model"]
    assert cassette(project)["replio"]["user"] == {"provider": "openai", "model": "sim-model"}
    llm_server.close()
    code, out, err = run(project, "--record-mode", "none", "--strict")
    assert code == 0, (out, err)


def test_a_user_added_after_recording_is_named_on_replay(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = handle
    project = write(tmp_path / "proj")
    talk = project / ".replio" / "eval" / "talk.json"
    scripted = {"files": {"notes.txt": "hello\n"}, "task": "What does notes.txt say?"}
    talk.write_text(json.dumps(scripted))
    code, out, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once")
    assert code == 0, (out, err)
    llm_server.close()
    talk.write_text(json.dumps({**scripted, "user": {"instructions": INSTRUCTIONS}}))
    code, out, _ = run(project, "--record-mode", "none")
    assert code == 1
    fixture = json.loads(out)["fixtures"][0]
    cassette_path = project / "cassettes" / "openai" / "test-model" / "talk.yaml"
    assert fixture["status"] == "error" and fixture["error"] == (
        f"fixture 'talk': request #3 of the user (POST /v1/chat/completions) has no recording in {cassette_path}; "
        "the cassette holds no request of the user: it was recorded before the fixture had one. Re-record it "
        "with --record-mode all --fixture talk")
