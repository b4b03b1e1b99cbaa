"""The whole path: `replio eval run` against loopback servers speaking each wire format.

The agent loop runs a real tool in a real worktree, the provider talks HTTP over a socket,
and the result is the CLI's JSON or table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import gemini_agent, responses_agent
from tests.support.llm_server import Reply, Seen

FIXTURE = {
    "id": "x",
    "task": "What port does config/server.toml set? Answer with the number.",
    "files": {"config/server.toml": "[server]\nport = 8743\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"], "max_calls": 2},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".replio" / "eval").mkdir(parents=True)
    (tmp_path / ".replio" / "eval" / "x.json").write_text(json.dumps(FIXTURE))
    return tmp_path


def run(
    project: Path, *args: str, env: dict[str, str] | None = None, only: tuple[str, ...] = ("x",)
):
    select = [arg for fixture_id in only for arg in ("--fixture", fixture_id)]
    result = CliRunner().invoke(
        main, ["eval", "--path", str(project), "run", *select, *args], env=env
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def openai_agent(arguments: str = '{"path": "config/server.toml"}'):
    """Asks for file_read until it sees a tool result, then answers with what the tool returned."""

    def handle(seen: Seen) -> Reply:
        messages = seen.json()["messages"]
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            message = {
                "role": "assistant",
                "content": "Reading it.",
                "tool_calls": [
                    {
                        "id": "call_r1",
                        "type": "function",
                        "function": {"name": "file_read", "arguments": arguments},
                    }
                ],
            }
        else:
            message = {
                "role": "assistant",
                "content": "Port: " + results[-1]["content"].strip()[-40:],
            }
        return Reply(
            json={
                "choices": [{"index": 0, "message": message}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
        )

    return handle


def ollama_silent(seen: Seen) -> Reply:
    """Answers without tools: the fixture fails its verifier."""
    return Reply(
        json={
            "message": {"role": "assistant", "content": "Probably 8080."},
            "done": True,
            "prompt_eval_count": 80,
            "eval_count": 4,
        }
    )


def test_run_executes_the_tool_through_the_real_http_path(project, llm_server):
    llm_server.handler = openai_agent()
    result = run(
        project,
        "--provider",
        "openai:test-model",
        "--base-url",
        llm_server.url + "/v1",
        "--output",
        "json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["provider"], data["model"]) == ("openai", "test-model")
    fx = data["fixtures"][0]
    assert fx["status"] == "ok"
    assert fx["trace"] == [{"name": "file_read", "arguments": {"path": "config/server.toml"},
                            "result": "     1  [server]\n     2  port = 8743"}]
    assert fx["pass"] is True and fx["accuracy"] == 1.0
    assert fx["tokens"] == 220
    assert "port = 8743" in fx["answer"]
    # What went over the wire: the tool ran in the worktree and its result came back with the call id.
    first, second = (s.json() for s in llm_server.requests)
    assert first["model"] == "test-model" and first["stream"] is False
    assert "file_read" in [t["function"]["name"] for t in first["tools"]]
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_r1"
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["tool_call_id"] == "call_r1"
    assert "port = 8743" in second["messages"][-1]["content"]


def test_malformed_arguments_are_traced_raw_answered_with_an_error_and_the_run_goes_on(
    project, llm_server
):
    llm_server.handler = openai_agent(arguments='{"path": "config/server.toml"')
    result = run(
        project,
        "--provider",
        "openai:test-model",
        "--base-url",
        llm_server.url + "/v1",
        "--output",
        "json",
    )
    assert result.exit_code == 0, result.output
    fx = json.loads(result.stdout)["fixtures"][0]
    assert fx["trace"] == [{"name": "file_read", "arguments": '{"path": "config/server.toml"',
                            "result": 'Error: arguments for file_read are not valid JSON: {"path": "config/server.toml"'}]
    assert fx["errors"] == 1 and fx["status"] == "ok"
    sent = llm_server.requests[1].json()["messages"]
    # sent back as a JSON string of the model's text, which servers parsing the history accept
    assert json.loads(sent[-2]["tool_calls"][0]["function"]["arguments"]) == '{"path": "config/server.toml"'
    assert sent[-1]["content"].startswith("Error: arguments for file_read are not valid JSON")


def test_a_provider_failure_ends_the_fixture_in_error_with_one_line(project, llm_server):
    llm_server.handler = lambda seen: Reply(
        401, json={"error": {"message": "Incorrect API key provided"}}
    )
    result = run(project, "--provider", "openai:test-model", "--base-url", llm_server.url + "/v1")
    assert result.exit_code == 1
    assert "  x: error: openai: authentication failed (HTTP 401" in result.output
    assert "set OPENAI_API_KEY to the API key (it is not set)" in result.output


def test_compare_runs_each_provider_against_its_own_server(project, llm_server, second_server):
    # A second fixture both providers pass: it sorts first by id but is listed after the one that differs.
    same = {**FIXTURE, "id": "a-same", "expected": None, "verifier": {"avoid": ["run_command"]}}
    (project / ".replio" / "eval" / "a-same.json").write_text(json.dumps(same))
    llm_server.handler = openai_agent()
    second_server.handler = ollama_silent
    env = {
        "OPENAI_BASE_URL": llm_server.url + "/v1",
        "OLLAMA_HOST": second_server.url.removeprefix("http://"),
    }
    result = run(
        project, "--compare", "openai:model-a,ollama:model-b", env=env, only=("x", "a-same")
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "summary"
    assert lines[1].split() == ["metric", "openai:model-a", "ollama:model-b"]
    assert lines[4].split() == ["pass", "rate", "1.00", "[0.34,", "1.00]", "0.50", "[0.09,", "0.91]"]
    assert lines[5].split() == ["calls", "2", "0"]
    assert lines[8].split() == ["tokens", "440", "168"]
    legend = lines.index(next(line for line in lines if line.startswith("each cell: verdict")))
    no_golden = ["no", "golden"]
    assert lines[legend - 2].split() == ["*", "x", "pass", "ok", "1.00", "1c", *no_golden,
                                         "FAIL", "ok", "0.00", "0c", *no_golden]
    assert lines[legend - 1].split() == ["a-same", "pass", "ok", "-", "1c", *no_golden, "pass", "ok", "-", "0c",
                                         *no_golden]
    # under the tables, why, grouped by run: only ollama's run has something to say
    assert lines[legend + 1:] == [
        "ollama:model-b vs openai:model-a: pass rate -0.50 [-0.91, +0.27], p = 1, no detectable difference "
        "(too few fixtures to detect any difference, ±7.04 at the least; about 18 fixtures for ±0.50)",
        "ollama:model-b vs openai:model-a: accuracy -1.00 [-1.00, +1.00], p = 1, no detectable difference "
        "(too few fixtures to detect any difference, ±1.00 at the least)",
        "", "ollama:model-b", "  x: must_include: file_read was not called"]
    assert {s.json()["model"] for s in llm_server.requests} == {"model-a"}
    assert {s.path for s in second_server.requests} == {"/api/chat"}
    assert {s.json()["model"] for s in second_server.requests} == {"model-b"}


def test_compare_json_has_one_run_per_provider(project, llm_server, second_server):
    llm_server.handler = openai_agent()
    second_server.handler = openai_agent()
    env = {
        "OPENAI_BASE_URL": llm_server.url + "/v1",
        "LLAMACPP_BASE_URL": second_server.url + "/v1",
    }
    result = run(project, "--compare", "openai:model-a,llamacpp", "--output", "json", env=env)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [(r["provider"], r["model"]) for r in runs] == [
        ("openai", "model-a"),
        ("llamacpp", "default"),
    ]
    assert [r["fixtures"][0]["pass"] for r in runs] == [True, True]
    assert len(llm_server.requests) == 2 and len(second_server.requests) == 2


def test_an_unreachable_server_names_its_url_and_the_suite_still_reports(project, closed_port):
    port = closed_port
    result = run(
        project, "--provider", "ollama:m", "--base-url", f"127.0.0.1:{port}", "--output", "json"
    )
    assert result.exit_code == 1
    fx = json.loads(result.stdout)["fixtures"][0]
    assert fx["status"] == "error"
    assert fx["error"].startswith(
        f"ollama: cannot connect to http://127.0.0.1:{port} (connection refused)"
    )


def test_a_bad_base_url_exits_2_before_running(project):
    result = run(project, "--provider", "openai:m", "--base-url", "localhost:8080/v1")
    assert result.exit_code == 2
    assert (
        "replio: error: openai: base URL 'localhost:8080/v1' must start with http:// or https://"
        in result.output
    )


def test_compare_runs_the_responses_api_against_gemini(project, llm_server, second_server):
    plan = {"config/server.toml": [[("file_read", {"path": "config/server.toml"})], "Port: 8743"]}
    llm_server.handler = responses_agent(plan, model="model-a")
    second_server.handler = gemini_agent(plan, model="model-b")
    env = {"OPENAI_BASE_URL": llm_server.url + "/v1", "GEMINI_BASE_URL": second_server.url + "/v1beta",
           "GEMINI_API_KEY": "AIzaSy-compare-0123456789"}
    result = run(project, "--compare", "openai-responses:model-a,gemini:model-b", "--output", "json", env=env)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [(r["provider"], r["model"]) for r in runs] == [("openai-responses", "model-a"), ("gemini", "model-b")]
    assert [r["fixtures"][0]["pass"] for r in runs] == [True, True]
    assert [r["fixtures"][0]["tokens"] for r in runs] == [130 + 131, 150 + 151]
    assert {s.path for s in llm_server.requests} == {"/v1/responses"}
    assert {s.path for s in second_server.requests} == {"/v1beta/models/model-b:generateContent"}
