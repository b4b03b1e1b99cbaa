"""Fixtures run through the user's own agent, end to end through the CLI: recorded, replayed, and
every way an agent can fail ending only its own fixture, named."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from replio_replay.run.worktree import TEMP_PREFIX
from tests.helpers import replio_command, replio_in_process, write_json
from tests.support.agents import openai_agent
from tests.support.isolation import copy_of, isolated
from tests.support.llm_server import LLMServer

KEY = "sk-test-" + "5f3c9a1b7e2d4c6a" * 2

#: A small agent on the standard library alone: it asks the model, runs `lookup` for each call,
#: sends the result back, and prints the answer. `DESCRIPTION` is its tool's description.
AGENT = '''
import json, os, sys, urllib.request
DESCRIPTION = "Look up a word."
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": DESCRIPTION,
          "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}}]
def ask(messages):
    body = json.dumps({"model": "whatever", "messages": messages, "tools": TOOLS}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                 {"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(req) as r:
        return json.load(r)["choices"][0]["message"]
print("agent env key:", os.environ.get("OPENAI_API_KEY"), file=sys.stderr)
messages = [{"role": "user", "content": os.environ["REPLIO_TASK"]}]
for _ in range(5):
    m = ask(messages)
    messages.append(m)
    if not m.get("tool_calls"):
        print(m["content"])
        break
    for c in m["tool_calls"]:
        word = json.loads(c["function"]["arguments"]).get("word", "")
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": "meaning of " + word})
'''

#: An agent of a conversation on the standard library: each message asked of the model once.
CONVERSING = '''
import json, os, urllib.request
from replio_replay import agent_messages, reply
messages = []
for said in agent_messages():
    messages.append({"role": "user", "content": said})
    body = json.dumps({"model": "m", "messages": messages}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                 {"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        answer = json.load(r)["choices"][0]["message"]["content"]
    messages.append({"role": "assistant", "content": answer})
    reply(answer)
'''

PLANS = {"ALPHA": [[("lookup", {"word": "alpha"})], "Alpha means the first."],
         "BETA": [[("lookup", {"word": "beta"})], "Beta means the second."]}


def agent_project(root: Path, code: str = AGENT, **config: Any) -> Path:
    (root / "agent.py").parent.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(code)
    write_json(root / ".replio" / "eval" / "alpha.json",
               {"task": "ALPHA: what does alpha mean?", "expected": ["lookup"],
                "verifier": {"args": {"lookup": {"word": "alpha"}}, "answer": {"$contains": "first"}}})
    write_json(root / ".replio" / "eval" / "beta.json", {"task": "BETA: what does beta mean?", "expected": ["lookup"]})
    write_json(root / ".replio" / "config.json", {"provider": "openai:test-model", "bundled": False,
                                                  "agent": {"command": ["python", "agent.py"], "timeout": 20},
                                                  **config})
    return root


def replio(project: Path, *args: str, url: str = "http://127.0.0.1:9/v1", timeout: float = 120,
           **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": url, **env}
    return subprocess.run([replio_command(), "eval", "--path", str(project), *args], capture_output=True, text=True,
                          env=full, timeout=timeout)


def results(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose two fixtures were recorded through the agent against a loopback server
    (closed once it recorded), once for the tests that replay it (`SHARED`); each changes a copy."""
    with isolated(tmp_path_factory), LLMServer() as llm_server:
        llm_server.handler = openai_agent(PLANS)
        project = agent_project(tmp_path_factory.mktemp("recorded") / "proj")
        done = replio(project, "run", "--record-mode", "once", "--output", "json", url=f"{llm_server.url}/v1")
        assert done.returncode == 0, done.stderr
        found = results(done)
        assert found["alpha"]["pass"] and found["alpha"]["trace"] == [
            {"name": "lookup", "arguments": {"word": "alpha"}, "result": "meaning of alpha"}]
        assert found["alpha"]["answer"] == "Alpha means the first." and found["alpha"]["tokens"] == 221
        assert all(s.headers["authorization"] == f"Bearer {KEY}" for s in llm_server.requests)
        assert "agent env key: replio" in found["alpha"]["agent_stderr"]
    return project


#: The tests that replay the module's `recording` share one xdist worker, so it is made once.
SHARED = pytest.mark.xdist_group("run-agent-recording")


@pytest.fixture
def recorded(recording: Path, tmp_path: Path) -> Path:
    """The test's own copy of the module's recording."""
    return copy_of(recording, tmp_path)


@SHARED
def test_a_recording_replays_offline_identically_and_holds_no_key(recorded: Path) -> None:
    first = replio(recorded, "run", "--record-mode", "none", "--output", "json")
    second = replio(recorded, "run", "--record-mode", "none", "--output", "json")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert results(first)["alpha"]["request_drift"] == []
    encoded = base64.b64encode(KEY.encode()).decode()
    for path in [*recorded.rglob("*.yaml"), *recorded.rglob("*.json")]:
        text = path.read_text()
        assert KEY[:12] not in text and encoded[:16] not in text, path
    assert KEY[:12] not in first.stdout


@SHARED
def test_a_description_changed_in_the_agents_code_is_request_drift(recorded: Path) -> None:
    source = recorded / "agent.py"
    source.write_text(source.read_text().replace("Look up a word.", "Look a word up in the dictionary."))
    status = replio_in_process("eval", "--path", recorded, "status", "--output", "json")  # it only reads the project
    assert "tool set 'default' changed" in status.stdout
    done = replio(recorded, "run", "--record-mode", "none", "--output", "json", "--strict")
    drift = results(done)["alpha"]["request_drift"]
    assert [(d["path"], d["role"]) for d in drift] == [("tools[lookup].description", "agent")]
    assert drift[0]["new"] == "Look a word up in the dictionary."
    assert done.returncode == 1  # --strict: request drift fails the run


@SHARED
def test_a_request_the_cassette_does_not_hold_fails_its_fixture_named(recorded: Path) -> None:
    source = recorded / "agent.py"  # asks the model once more than when it was recorded
    source.write_text(source.read_text().replace('        print(m["content"])\n        break',
                                                 '        ask(messages)\n        print(m["content"])\n        break'))
    done = replio(recorded, "run", "--record-mode", "none", "--output", "json")
    alpha = results(done)["alpha"]
    assert done.returncode == 1 and alpha["status"] == "error"
    assert "request #3" in alpha["error"] and "has no recording" in alpha["error"]


def test_failing_agents_end_only_their_fixture_named(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent(PLANS)
    agent = AGENT.replace('messages = [{"role"', 'if "BETA" in os.environ["REPLIO_TASK"]:\n'
                          '    print("config missing", file=sys.stderr); sys.exit(3)\nmessages = [{"role"')
    project = agent_project(tmp_path / "p", agent)
    done = replio(project, "run", "--no-cassettes", "--output", "json", url=f"{llm_server.url}/v1")
    found = results(done)
    assert found["alpha"]["status"] == "ok" and found["alpha"]["pass"]
    assert found["beta"]["status"] == "error" and found["beta"]["error"] == "agent exited 3: config missing"
    assert done.returncode == 1


def test_an_agent_that_never_asks_the_model_is_an_error(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p", "print('I know this one')\n")
    found = results(replio(project, "run", "--no-cassettes", "--output", "json"))
    assert found["alpha"]["status"] == "error" and "never sent the model a request" in found["alpha"]["error"]


def test_an_agent_over_its_timeout_is_stopped(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p", "import time\ntime.sleep(60)\n",
                            agent={"command": ["python", "agent.py"], "timeout": 1})
    began = time.monotonic()
    found = results(replio(project, "run", "--no-cassettes", "--output", "json", "--fixture", "alpha"))
    assert found["alpha"]["error"] == "agent 'python agent.py' took longer than 1 s; stopped (raise its \"timeout\")"
    assert time.monotonic() - began < 20


#: Sends half a request's body to the relay, then waits to be stopped.
HALF_SENT = """
import os, socket, time
from urllib.parse import urlsplit
url = urlsplit(os.environ["OPENAI_BASE_URL"])
sock = socket.create_connection((url.hostname, url.port))
sock.sendall(("POST " + url.path + "/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n"
              + '{"model": ').encode())
time.sleep(60)
"""


def test_an_agent_stopped_while_sending_a_request_is_named_as_stopped_first(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p", HALF_SENT, agent={"command": ["python", "agent.py"], "timeout": 1})
    found = results(replio(project, "run", "--no-cassettes", "--output", "json", "--fixture", "alpha"))
    assert found["alpha"]["error"].startswith("agent 'python agent.py' took longer than 1 s; stopped"), found["alpha"]
    assert "not a JSON object" not in found["alpha"]["error"]


def test_the_flag_overrides_the_configs_agent(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent(PLANS)
    project = agent_project(tmp_path / "p", "import sys\nsys.exit(9)\n")
    (tmp_path / "other.py").write_text(AGENT)
    done = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--output", "json",
                           "--fixture", "alpha", "--agent", "python other.py"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{llm_server.url}/v1"},
                          timeout=60)
    assert results(done)["alpha"]["pass"], done.stderr


@pytest.mark.parametrize(("agent", "said"), [
    ({"command": ["python", "agnt.py"]}, "config.json: agent.command: 'agnt.py'"),
    ({"python": "agent.py:main"}, "config.json: agent.python: 'agent.py' defines no function 'main'"),
    ({"command": ["python", "agent.py"], "colour": "red"}, "agent.colour"),
])
def test_a_bad_agent_is_a_usage_error_before_anything_is_sent(tmp_path: Path, agent: dict[str, Any], said: str) -> None:
    project = agent_project(tmp_path / "p", agent=agent)
    done = replio(project, "run", "--no-cassettes")
    assert done.returncode == 2 and said in done.stderr, done.stderr


def test_sigterm_ends_a_run_whose_agent_hangs_within_seconds(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                            "open('started', 'w').close()\ntime.sleep(120)\n",
                            agent={"command": ["python", "agent.py"], "timeout": 300})
    proc = subprocess.Popen([replio_command(), "eval", "--path", str(project), "run", "--no-cassettes", "--fixture",
                             "alpha"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "OPENAI_API_KEY": KEY})
    deadline = time.monotonic() + 30  # the agent runs in the fixture's worktree, under the run's pid
    while not list(Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}{proc.pid}-*/started")):
        assert time.monotonic() < deadline and proc.poll() is None, "the agent never started"
        time.sleep(0.1)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=15)
    assert time.monotonic() - began < 5
    assert proc.returncode != 0


def test_an_agent_stopped_while_its_request_is_in_flight_records_nothing(tmp_path: Path, llm_server: LLMServer) -> None:
    slow = openai_agent(PLANS)
    llm_server.handler = lambda seen: dataclasses.replace(slow(seen), delay=4.0)
    project = agent_project(tmp_path / "p", agent={"command": ["python", "agent.py"], "timeout": 1})
    done = replio(project, "run", "--record-mode", "once", "--fixture", "alpha", "--output", "json",
                  url=f"{llm_server.url}/v1")
    alpha = results(done)["alpha"]
    assert alpha["status"] == "error" and "took longer than 1 s" in alpha["error"]
    assert "request #1 to the model was in flight" in alpha["error"]
    assert not list(project.rglob("alpha.yaml"))  # a replay could not reproduce it: no cassette


def test_a_simulated_user_acts_with_its_own_tools_beside_your_agent(tmp_path: Path, llm_server: LLMServer) -> None:
    from tests.support.environments import shop_decl, write_module
    from tests.support.llm_server import chat_completion

    def handle(seen: Any) -> Any:
        body = seen.json()
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if [t["function"]["name"] for t in body.get("tools", [])] == ["cancel_order"]:  # the user, on its side
            if n == 0:
                return chat_completion(None, body["model"], n, [{"id": "u1", "type": "function", "function": {
                    "name": "cancel_order", "arguments": json.dumps({"order_id": "A-1042"})}}])
            return chat_completion("ALPHA: I cancelled it myself." if n == 1 else "###STOP###", body["model"], n)
        return chat_completion("Noted: alpha is cancelled.", body["model"], n)  # your agent's model

    llm_server.handler = handle
    project = agent_project(tmp_path / "p")
    write_module(project / ".replio" / "envs" / "shop.py")
    write_json(project / ".replio" / "tools.json", {"environments": {"shop": shop_decl()}})
    write_json(project / ".replio" / "eval" / "alpha.json", {
        "user": {"instructions": "Cancel A-1042 yourself, tell the agent, then stop.", "tools": ["cancel_order"]},
        "verifier": {"state": {"shop.orders.A-1042.status": "cancelled"}}})
    (project / "agent.py").write_text(CONVERSING)
    done = replio(project, "run", "--no-cassettes", "--fixture", "alpha", "--output", "json",
                  url=f"{llm_server.url}/v1")
    alpha = results(done)["alpha"]
    assert alpha["status"] == "ok" and alpha["pass"], (alpha["error"], alpha.get("agent_stderr"))
    assert alpha["user_trace"] == [{"name": "cancel_order", "arguments": {"order_id": "A-1042"},
                                    "result": "Order A-1042 cancelled.", "at": 0}]
    assert alpha["state"]["shop"]["orders"]["A-1042"]["status"] == "cancelled"


#: An agent that offers its model the fixture's own tools and has replio run each call (`agents.tools`),
#: then answers with the model's text and every result it was given.
STUBBED = '''
import json, os, urllib.request
from replio_replay import call_tool, fixture_tools
TOOLS = [{"type": "function", "function": spec} for spec in fixture_tools()]
def ask(messages):
    body = json.dumps({"model": "m", "messages": messages, "tools": TOOLS}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                 {"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)["choices"][0]["message"]
messages, results = [{"role": "user", "content": os.environ["REPLIO_TASK"]}], []
for _ in range(5):
    m = ask(messages)
    messages.append(m)
    if not m.get("tool_calls"):
        break
    for c in m["tool_calls"]:
        results.append(call_tool(c["function"]["name"], json.loads(c["function"]["arguments"])))
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": results[-1]})
results.append(call_tool("lookup", {"word": "never asked"}))
results.append(call_tool("no_such_tool", {}))
print(m["content"], "|", " | ".join(results))
'''


def test_an_agent_can_have_the_fixtures_own_tools_run_by_replio_a_stub_answering_as_recorded(
        tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent(PLANS)
    project = agent_project(tmp_path / "p", code=STUBBED)
    write_json(project / ".replio" / "eval" / "alpha.json", {
        "task": "ALPHA: what does alpha mean?", "expected": ["lookup"],
        "tools": {"lookup": {"description": "Look up a word, as production did.",
                             "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
                             "results": [{"when": {"word": "alpha"}, "result": "alpha: the first letter (recorded)"}]}},
        "verifier": {"answer": {"$contains": "the first letter (recorded)"}}})
    done = replio(project, "run", "--no-cassettes", "--fixture", "alpha", "--output", "json",
                  url=f"{llm_server.url}/v1")
    alpha = results(done)["alpha"]
    assert alpha["status"] == "ok" and alpha["pass"], (alpha["error"], alpha.get("agent_stderr"))
    answer, recorded, unrecorded, unknown = alpha["answer"].split(" | ")
    assert (answer, recorded) == ("Alpha means the first.", "alpha: the first letter (recorded)")
    assert unrecorded.startswith('Error: no stubbed result for lookup with {"word":"never asked"}')
    assert unknown.startswith("Error: unknown tool 'no_such_tool'; available tools: ") and "lookup" in unknown
    assert alpha["trace"] == [{"name": "lookup", "arguments": {"word": "alpha"},
                               "result": "alpha: the first letter (recorded)"}]
    offered = {t["function"]["name"]: t["function"] for t in llm_server.requests[0].json()["tools"]}
    assert offered["lookup"] == {"name": "lookup", "description": "Look up a word, as production did.",
                                 "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}
    assert "file_read" in offered  # the tool set's too, as replio's own loop offers them


def test_outside_an_agent_replio_runs_the_fixtures_tools_are_not_there(monkeypatch: pytest.MonkeyPatch) -> None:
    from replio_replay import call_tool

    monkeypatch.delenv("REPLIO_TOOLS_URL", raising=False)
    with pytest.raises(RuntimeError, match="REPLIO_TOOLS_URL is not set: fixture_tools and call_tool work in an "
                                           "agent that replio runs"):
        call_tool("lookup", {})


def test_an_answer_holding_a_lone_surrogate_is_written_everywhere_as_u_fffd(tmp_path: Path,
                                                                            llm_server: LLMServer) -> None:
    from tests.support.llm_server import chat_completion

    llm_server.handler = lambda seen: chat_completion("noted \udcff", "m", 1)  # the model's answer holds one too
    project = agent_project(tmp_path / "p")
    # the answer line as json.dumps writes a file name that is not UTF-8: an escaped lone surrogate
    (project / "agent.py").write_text(CONVERSING.replace("    reply(answer)", '''\
    print(json.dumps({"answer": answer + " " + os.fsdecode(b"caf\\xe9.txt")}), flush=True)'''))
    write_json(project / ".replio" / "eval" / "alpha.json", {"turns": ["list the files"]})
    (project / ".replio" / "eval" / "beta.json").unlink()
    done = replio(project, "run", "--no-cassettes", "--update-golden", "--output", "json",
                  url=f"{llm_server.url}/v1")
    assert done.returncode == 0, done.stderr
    alpha = results(done)["alpha"]  # stdout is valid UTF-8 (`text=True` would have failed on it)
    assert alpha["status"] == "ok" and alpha["answer"] == "noted \ufffd caf\ufffd.txt"
    golden = json.loads((project / "golden" / "openai" / "test-model" / "alpha.json").read_bytes().decode("utf-8"))
    assert "noted \ufffd caf\ufffd.txt" in json.dumps(golden, ensure_ascii=False)
    again = replio(project, "run", "--no-cassettes", "--output", "json", url=f"{llm_server.url}/v1")
    assert not results(again)["alpha"]["drift"], again.stdout  # the same text, kept and compared alike


def test_an_agents_request_replio_cannot_send_on_ends_its_fixture_named(tmp_path: Path, llm_server: LLMServer) -> None:
    agent = AGENT.replace('body = json.dumps({"model": "whatever", "messages": messages, "tools": TOOLS}).encode()',
                          'body = json.dumps({"model": "w", "messages": messages, "temperature": float("nan")}).encode()')
    project = agent_project(tmp_path / "p", agent)
    done = replio(project, "run", "--no-cassettes", "--fixture", "alpha", "--output", "json",
                  url=f"{llm_server.url}/v1")
    alpha = results(done)["alpha"]
    assert done.returncode == 1 and alpha["status"] == "error" and not alpha["pass"]
    assert alpha["error"].startswith("the agent's OpenAI Chat Completions request (/v1/chat/completions) is not valid "
                                     "JSON: NaN is not a JSON number"), alpha["error"]
    assert llm_server.requests == []
