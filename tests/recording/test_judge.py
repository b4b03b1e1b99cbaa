"""An LLM judge over loopback HTTP: its requests recorded in the fixture's own cassette as role
`judge` (its verdict asked for as structured output), replayed with the server gone and the network blocked, a rubric change
being request drift naming the judge and making the cassette stale, `--rejudge` recording only the
judge again, a judge of another provider on its own server, and a judged replay through the CLI
in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.judge.llm import VERDICT
from tests.support.isolation import copy_of, isolated
from tests.support.llm_server import LLMServer, Reply, Seen, chat_completion

# One xdist worker runs the module (--dist loadgroup): its recording, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("recording-judge")

RUBRIC = "The answer says what notes.txt holds."
#: OpenAI's structured output, asked for the judge's verdict.
STRUCTURED = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT.schema, "strict": True}}
CASSETTE = Path("cassettes") / "openai" / "test-model" / "notes.yaml"


def chat(text: str | None, model: str, n: int, calls: list[dict[str, Any]] | None = None) -> Reply:
    return chat_completion(text, model, n, calls, prompt=40, completion=6)


def agent_or_judge(verdict: str) -> Any:
    """The agent reads notes.txt and says what it holds; the judge (no tools, the verdict's schema) answers `verdict`."""

    def handle(seen: Seen) -> Reply:
        body = seen.json()
        if "tools" not in body:
            assert body["response_format"] == STRUCTURED
            return chat(json.dumps({"verdict": verdict, "reason": f"judged {verdict}"}), body["model"], 0)
        last = body["messages"][-1]
        if last["role"] == "tool":
            return chat("It says hello.", body["model"], 2)
        call = {"id": "call_1", "type": "function",
                "function": {"name": "file_read", "arguments": json.dumps({"path": "notes.txt"})}}
        return chat(None, body["model"], 1, [call])

    return handle


def write(project: Path, rubric: Any = RUBRIC, **config: Any) -> Path:
    fixtures = project / ".replio" / "eval"
    fixtures.mkdir(parents=True, exist_ok=True)
    (fixtures / "notes.json").write_text(json.dumps({
        "task": "What does notes.txt say?",
        "files": {"notes.txt": "hello\n"},
        "verifier": {"must_include": ["file_read"], **({"judge": {"rubric": rubric}} if rubric else {})},
    }))
    (project / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:test-model", **config}))
    return project


def run(project: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--fixture", "notes", "--output",
                                       "json", *extra], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout) if result.stdout.startswith("{") else {}, result.stderr


def agent_part(text: str) -> str:
    """A cassette's text after its `replio` header, up to its first judge request."""
    after_header = re.search(r"^(?!replio:)\S", text, re.MULTILINE)
    assert after_header is not None
    return text[after_header.start(): text.index("- request:\n    role: judge")]


def interactions(project: Path) -> list[dict[str, Any]]:
    return yaml.safe_load((project / CASSETTE).read_text())["interactions"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judged fixture recorded once for the module, the server that answered it closed."""
    with isolated(tmp_path_factory), LLMServer() as llm_server:
        llm_server.handler = agent_or_judge("yes")
        project = write(tmp_path_factory.mktemp("recording") / "proj")
        code, data, err = run(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "once")
        requests = len(llm_server.requests)
    assert code == 0, (data, err)
    fixture = data["fixtures"][0]
    assert fixture["judge"] == {"rubric": RUBRIC, "verdict": "yes", "reason": "judged yes", "passed": True,
                                "raw": json.dumps({"verdict": "yes", "reason": "judged yes"})}
    assert fixture["pass"] and set(fixture["tokens_by_role"]) == {"agent", "judge"}
    assert fixture["tokens"] == 47 + 48  # the agent's two turns alone (their total_tokens)
    assert requests == 3
    return project


@pytest.fixture
def recorded(recording: Path, tmp_path: Path) -> Path:
    """The test's own copy of the recorded project."""
    return copy_of(recording, tmp_path)


def test_the_judges_request_is_in_the_fixtures_cassette_as_role_judge(recorded: Path) -> None:
    data = yaml.safe_load((recorded / CASSETTE).read_text())
    assert [i["request"].get("role", "agent") for i in data["interactions"]] == ["agent", "agent", "judge"]
    judge = data["interactions"][-1]["request"]["body"]["json"]
    assert judge["response_format"] == STRUCTURED
    prompt = judge["messages"][1]["content"]
    assert "What does notes.txt say?" in prompt and "file_read" in prompt and "hello" in prompt
    assert "It says hello." in prompt and prompt.index("It says hello.") < prompt.index(RUBRIC)
    assert data["replio"]["judge"] == {"provider": "openai", "model": "test-model"}
    assert len(data["replio"]["judge_hash"]) == 16


def test_a_replay_with_the_network_blocked_rejudges_nothing(recorded: Path) -> None:
    code, data, err = run(recorded, "--record-mode", "none", "--strict", "--update-golden")
    assert code == 0, (data, err)
    fixture = data["fixtures"][0]
    assert fixture["request_drift"] == [] and fixture["judge"]["verdict"] == "yes"
    assert fixture["tokens_by_role"]["judge"] == {"prompt": 40, "completion": 6}


def test_a_rubric_change_is_drift_naming_the_judge_and_makes_the_cassette_stale(recorded: Path) -> None:
    write(recorded, rubric="The answer says hello, politely.")
    code, data, _ = run(recorded, "--record-mode", "none", "--strict")
    assert code == 1
    drift = data["fixtures"][0]["request_drift"]
    junit = recorded / "junit.xml"
    CliRunner().invoke(main, ["eval", "--path", str(recorded), "run", "--fixture", "notes", "--record-mode", "none",
                              "--strict", "--junit-xml", str(junit)])
    failure = next(ET.parse(junit).iter("failure"))
    assert "request drift (1 change); re-judge with --rejudge --fixture notes" in (failure.text or "")
    assert drift and {d["role"] for d in drift} == {"judge"}
    assert any("politely" in str(d["new"]) for d in drift)
    diff = CliRunner().invoke(main, ["eval", "--path", str(recorded), "diff", "--fixture", "notes"])
    assert "request (judge): messages[1].content changed" in diff.stdout
    status = CliRunner().invoke(main, ["eval", "--path", str(recorded), "status"])
    assert "judge changed" in status.stdout and "fixture changed" not in status.stdout


def test_rejudge_records_only_the_judge_again_and_keeps_the_agents_part_byte_for_byte(recorded: Path) -> None:
    before = (recorded / CASSETTE).read_text()
    write(recorded, rubric=["The answer says what notes.txt holds.", "The answer is one sentence."])
    with LLMServer() as server:
        server.handler = agent_or_judge("no")
        config = {"providers": {"openai": {"base_url": f"{server.url}/v1"}}}
        write(recorded, rubric=[RUBRIC, "The answer is one sentence."], **config)
        code, data, err = run(recorded, "--rejudge")
        assert [bool(s.json().get("response_format")) for s in server.requests] == [True, True]  # judges only
    assert code == 0, err  # a failed verifier fails CI only when require_pass lists it
    assert "re-judging 1 fixture" in err
    verdicts = data["fixtures"][0]["judge"]
    assert [v["verdict"] for v in verdicts] == ["no", "no"]
    assert data["fixtures"][0]["reasons"][0] == f'judge[1] "{RUBRIC}": no: judged no'
    after = (recorded / CASSETTE).read_text()
    assert agent_part(after) == agent_part(before) and "role: judge" not in agent_part(before)
    assert after.count("role: judge") == 2 and "one sentence" in after
    roles = [i["request"].get("role", "agent") for i in interactions(recorded)]
    assert roles == ["agent", "agent", "judge", "judge"]
    status = CliRunner().invoke(main, ["eval", "--path", str(recorded), "status"])
    assert "changed" not in status.stdout, status.stdout
    code, data, err = run(recorded, "--record-mode", "none", "--strict")
    assert data["fixtures"][0]["request_drift"] == [] and [v["verdict"] for v in data["fixtures"][0]["judge"]] == [
        "no", "no"]


def test_a_judge_added_to_a_recorded_run_is_recorded_with_rejudge(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = agent_or_judge("yes")
    project = write(tmp_path / "proj", rubric=None, providers={"openai": {"base_url": f"{llm_server.url}/v1"}})
    assert run(project, "--record-mode", "once")[0] == 0
    before = (project / CASSETTE).read_text()
    write(project, providers={"openai": {"base_url": f"{llm_server.url}/v1"}})
    code, data, _ = run(project, "--record-mode", "none")
    assert code == 1 and data["fixtures"][0]["status"] == "error"
    assert data["fixtures"][0]["error"].endswith("the judge was added or asks more than when it was recorded. "
                                                 "Record its requests with --rejudge --fixture notes")
    code, data, err = run(project, "--rejudge")
    assert code == 0, err
    assert data["fixtures"][0]["judge"]["verdict"] == "yes"
    after = (project / CASSETTE).read_text()
    assert agent_part(after) == agent_part(before + "- request:\n    role: judge")  # before: no judge yet
    assert len(llm_server.requests) == 3  # two agent turns recorded first, then the judge alone


def test_rejudge_does_not_go_with_a_record_mode(recorded: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "--path", str(recorded), "run", "--rejudge", "--record-mode", "all"])
    assert result.exit_code == 2
    assert "--rejudge" in result.stderr and "--record-mode all" in result.stderr


def ollama_judge(seen: Seen) -> Reply:
    """Ollama's /api/chat, asked for the verdict's schema."""
    body = seen.json()
    assert body["format"] == VERDICT.schema and "tools" not in body
    answer = json.dumps({"verdict": "yes", "reason": "ollama judged"})
    return Reply(json={"model": body["model"], "message": {"role": "assistant", "content": answer},
                       "done": True, "prompt_eval_count": 90, "eval_count": 9})


def llamacpp_judge(seen: Seen) -> Reply:
    """llama.cpp's OpenAI-compatible server, asked for a JSON object (not the schema: the preset's
    recordings predate it); it answers in a fence."""
    body = seen.json()
    assert body["response_format"] == {"type": "json_object"} and "tools" not in body
    answer = "```json\n" + json.dumps({"verdict": "yes", "reason": "llamacpp judged"}) + "\n```"
    return Reply(json={"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}],
                       "usage": {"prompt_tokens": 90, "completion_tokens": 9, "total_tokens": 99}})


def anthropic_judge(seen: Seen) -> Reply:
    """Anthropic's Messages API, made to answer through the verdict's tool; the tool's input is the verdict."""
    body = seen.json()
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}
    (tool,) = body["tools"]
    assert (tool["name"], tool["input_schema"]) == ("verdict", VERDICT.schema)
    call = {"type": "tool_use", "id": "toolu_1", "name": "verdict",
            "input": {"verdict": "yes", "reason": "anthropic judged"}}
    return Reply(json={"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                       "content": [call], "stop_reason": "tool_use",
                       "usage": {"input_tokens": 90, "output_tokens": 9}})


def gemini_judge(seen: Seen) -> Reply:
    """Gemini's generateContent, asked for JSON of the verdict's schema in its own subset."""
    generation = seen.json()["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseSchema"] == {
        "type": "OBJECT", "properties": {"verdict": {"type": "STRING", "enum": ["yes", "no"]},
                                         "reason": {"type": "STRING"}}, "required": ["verdict", "reason"]}
    answer = json.dumps({"verdict": "yes", "reason": "gemini judged"})
    return Reply(json={"candidates": [{"content": {"role": "model", "parts": [{"text": answer}]},
                                       "finishReason": "STOP", "index": 0}],
                       "usageMetadata": {"promptTokenCount": 90, "candidatesTokenCount": 9, "totalTokenCount": 99}})


def responses_judge(seen: Seen) -> Reply:
    """OpenAI's Responses API, asked for the verdict's schema as its text format."""
    body = seen.json()
    assert body["text"] == {"format": {"type": "json_schema", "name": "verdict", "schema": VERDICT.schema,
                                       "strict": True}}
    answer = json.dumps({"verdict": "yes", "reason": "openai-responses judged"})
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": answer, "annotations": []}]}
    return Reply(json={"id": "resp_1", "object": "response", "status": "completed", "model": body["model"],
                       "output": [message], "usage": {"input_tokens": 90, "output_tokens": 9, "total_tokens": 99}})


@pytest.mark.parametrize(("name", "handler", "path", "base"), [
    ("ollama", ollama_judge, "/api/chat", ""), ("llamacpp", llamacpp_judge, "/v1/chat/completions", "/v1"),
    ("anthropic", anthropic_judge, "/v1/messages", ""),
    ("gemini", gemini_judge, "/v1beta/models/judge-model:generateContent", "/v1beta"),
    ("openai-responses", responses_judge, "/v1/responses", "/v1")])
def test_a_judge_of_another_provider_is_recorded_in_the_same_cassette(
        tmp_path: Path, llm_server: LLMServer, name: str, handler: Any, path: str, base: str) -> None:
    llm_server.handler = agent_or_judge("yes")
    with LLMServer() as local:
        local.handler = handler
        project = write(tmp_path / "proj", judge=f"{name}:judge-model",
                        providers={"openai": {"base_url": f"{llm_server.url}/v1"}, name: {"base_url": local.url + base}})
        code, data, err = run(project, "--record-mode", "once")
        assert code == 0, (data, err)
        assert [s.path for s in local.requests] == [path]
        assert len(llm_server.requests) == 2  # the agent's two turns; no judging there
    llm_server.close()
    cassette = yaml.safe_load((project / CASSETTE).read_text())
    assert [i["request"].get("role", "agent") for i in cassette["interactions"]] == ["agent", "agent", "judge"]
    assert cassette["interactions"][-1]["request"]["uri"] == local.url + path
    assert cassette["replio"]["judge"] == {"provider": name, "model": "judge-model"}
    assert data["fixtures"][0]["judge"]["reason"] == f"{name} judged"
    assert data["fixtures"][0]["tokens_by_role"]["judge"] == {"prompt": 90, "completion": 9}
    code, data, err = run(project, "--record-mode", "none", "--strict", "--update-golden")
    assert code == 0, (data, err)
    assert data["fixtures"][0]["judge"]["reason"] == f"{name} judged"


def test_a_judged_replay_through_the_installed_cli(recorded: Path) -> None:
    from tests.helpers import replio_command

    junit = recorded / "junit.xml"
    write(recorded, rubric="The answer says goodbye.")  # the recorded verdict stands; its drift is reported
    done = subprocess.run([replio_command(), "eval", "--path", str(recorded), "run", "--fixture", "notes",
                           "--record-mode", "none", "--output", "json", "--junit-xml", str(junit)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    fixture = json.loads(done.stdout)["fixtures"][0]
    assert fixture["judge"]["verdict"] == "yes" and fixture["judge"]["rubric"] == "The answer says goodbye."
    assert {d["role"] for d in fixture["request_drift"]} == {"judge"}
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert props["judge"] == "yes: judged yes"
