"""MCP servers in whole runs through the CLI: recorded into the cassette, replayed with no server and
no network, replayed live and compared, tuned with `override`, confined in time and process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import openai_agent
from tests.support.isolation import copy_of, isolated
from tests.support.llm_server import LLMServer
from tests.tools.mcp.conftest import SERVER, pids, wait_until_dead

# One xdist worker runs the module (--dist loadgroup): its recordings, made once for the module,
# are made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("mcp-runs")

SECRET = "mcp-secret-value-0123456789"
PLANS = {
    "NOTE": [[("note", {})], "The note says milk."],
    "PICTURE": [[("picture", {}), ("echo", {"text": "hi"})], "A picture and an echo."],
    "SPAWN": [[("spawn", {})], "Started."],
    "DAEMON": [[("daemon", {})], "Started."],
    "CRASH": [[("crash", {}), ("echo", {"text": "after"})], "It crashed."],
    "TOKEN": [[("token", {})], "I have the token."],
    "SLOW": [[("slow", {"seconds": 60})], "Slept."],
    "BLOCKS": [[("blocks", {"count": 40, "size": 50_000})], "Many blocks."],
}


def _project(root: Path, *, server: dict[str, Any] | None = None, fixtures: tuple[str, ...] = ("NOTE", "PICTURE"),
             **config: Any) -> Path:
    """A project whose config names the test server `t` and whose fixtures call its tools."""
    folder = root / ".replio" / "eval"
    folder.mkdir(parents=True)
    for key in fixtures:
        (folder / f"{key.lower()}.json").write_text(json.dumps({
            "task": f"{key}: use the tools.", "files": {"note.txt": "milk"},
            "expected": [name for name, _ in PLANS[key][0]], "tool_permission": {"mcp": "allow"},
        }))
    copy = root / "server.py"  # a copy, so a test can take the server away
    shutil.copy(SERVER, copy)
    env = {"PIDFILE": str(root / "pids"), "TOKEN": {"from_env": "T_TOKEN"}, "NOTE_DESCRIPTION": "Echo the text back."}
    server = server or {"command": "{python}", "args": ["{project}/server.py", "stdio"], "env": env,
                        "writable": ["{project}"]}  # confined, it writes its PIDFILE there only so
    (root / ".replio" / "config.json").write_text(json.dumps({
        "provider": "openai:test-model", "mcp_servers": {"t": server}, **config}))
    return root


def _only_ours(project: Path) -> list[str]:
    """--fixture for each of the project's own fixtures (not the bundled catalog's)."""
    return [a for p in sorted((project / ".replio" / "eval").glob("*.json")) for a in ("--fixture", p.stem)]


def _run(project: Path, *args: str, env: dict[str, str | None] | None = None) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--output", "json",
                                       *_only_ours(project), *args],
                                env={"T_TOKEN": SECRET, **(env or {})}, catch_exceptions=False)
    try:
        data = json.loads(result.stdout)
    except ValueError:
        data = {}
    return result.exit_code, data, result.stdout + result.stderr


def _record(project: Path, server: LLMServer, *args: str) -> dict[str, Any]:
    code, data, out = _run(project, "--base-url", f"{server.url}/v1", "--record-mode", "once", *args)
    assert code == 0, out
    return data


def _cassette(project: Path, fixture: str) -> dict[str, Any]:
    return yaml.safe_load((project / "cassettes" / "openai" / "test-model" / f"{fixture}.yaml").read_text())


def _results(run: dict[str, Any]) -> list[tuple]:
    return [(f["id"], f["trace"], f["status"], f["pass"], f["answer"]) for f in run["fixtures"]]


@pytest.fixture
def agent(llm_server: LLMServer) -> LLMServer:
    llm_server.handler = openai_agent(PLANS)
    return llm_server


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The default project (NOTE, PICTURE) recorded once for the module, and the recording run's
    result; its LLM server is closed once it recorded. A test that changes the project works on a
    copy (`_copy`)."""
    with isolated(tmp_path_factory), LLMServer() as server:
        server.handler = openai_agent(PLANS)
        project = _project(tmp_path_factory.mktemp("recorded") / "p")
        return project, _record(project, server)


def _copy(project: Path, tmp_path: Path) -> Path:
    """The test's own copy of the recorded `project`, its server noting its processes in the copy."""
    to = copy_of(project, tmp_path)
    config = json.loads((to / ".replio" / "config.json").read_text())
    config["mcp_servers"]["t"]["env"]["PIDFILE"] = str(to / "pids")
    (to / ".replio" / "config.json").write_text(json.dumps(config))
    return to


def test_a_recording_holds_what_the_server_said_and_replays_with_no_server(
        tmp_path: Path, recorded: tuple[Path, dict[str, Any]]) -> None:
    project, recorded_run = _copy(recorded[0], tmp_path), recorded[1]
    assert [f["status"] for f in recorded_run["fixtures"]] == ["ok", "ok"]
    section = _cassette(project, "note")["mcp"]["t"]
    assert section["server"] == {"name": "test-server", "version": "1.2.3"}
    assert "echo" in [t["name"] for t in section["tools"]]
    assert section["calls"] == [{"tool": "note", "arguments": {},
                                 "result": {"content": [{"type": "text", "text": "milk"}],
                                            "isError": False, "resultType": "complete",
                                            "structuredContent": {"result": "milk"}}}]
    started = pids(project / "pids")
    (project / "server.py").unlink()  # no server to start, the LLM server is closed, the network is blocked
    code, replayed, out = _run(project, "--record-mode", "none", env={"T_TOKEN": None})  # no key either
    assert code == 0, out
    assert _results(replayed) == _results(recorded_run)
    assert [f["request_drift"] for f in replayed["fixtures"]] == [[], []]
    assert pids(project / "pids") == started  # nothing was started


def test_a_second_replay_is_byte_identical(recorded: tuple[Path, dict[str, Any]]) -> None:
    project, _ = recorded
    first = _run(project, "--record-mode", "none")[2]
    assert first == _run(project, "--record-mode", "none")[2]


def test_a_result_of_many_big_blocks_is_recorded_as_the_model_saw_it_and_replays_so(
        tmp_path: Path, agent: LLMServer) -> None:
    from replio_replay.tools.toolbox import RESULT_CAP

    project = _project(tmp_path / "p", fixtures=("BLOCKS",))
    recorded = _record(project, agent)  # 2 MB of text in 40 blocks, and again as structured content
    (call,) = _cassette(project, "blocks")["mcp"]["t"]["calls"]
    assert [len(b["text"]) for b in call["result"]["content"]] == [RESULT_CAP + 1]
    assert "structuredContent" not in call["result"]
    told = next(m["content"] for m in json.loads(agent.requests[-1].body)["messages"] if m["role"] == "tool")
    assert told.endswith(f"(output cut at {RESULT_CAP} characters)") and len(told) < RESULT_CAP + 100
    size = (project / "cassettes" / "openai" / "test-model" / "blocks.yaml").stat().st_size
    assert size < 3 * RESULT_CAP  # what the model saw, in the MCP section and in the next request
    agent.close()
    code, replayed, out = _run(project, "--record-mode", "none")
    assert code == 0, out
    assert _results(replayed) == _results(recorded) and replayed["fixtures"][0]["request_drift"] == []


def test_secrets_given_to_a_server_never_reach_the_disk(recorded: tuple[Path, dict[str, Any]]) -> None:
    project, _ = recorded
    for path in project.rglob("*"):
        if path.is_file() and path.name != "pids":
            assert SECRET not in path.read_text(errors="replace"), path


def test_a_server_that_hands_the_model_a_secret_is_not_recorded(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("TOKEN",))
    code, data, out = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once")
    assert code == 1
    (fixture,) = data["fixtures"]
    assert fixture["status"] == "error" and "was not written: it would contain the live value of a secret" in \
        fixture["error"] and "mcp.t.calls[0].result.content[0].text" in fixture["error"]
    assert SECRET not in out
    assert not (project / "cassettes" / "openai" / "test-model" / "token.yaml").exists()


def _live_replay_setup(tmp_path: Path, recorded: tuple[Path, dict[str, Any]], **server_more: Any) -> Path:
    project = _copy(recorded[0], tmp_path)
    config = json.loads((project / ".replio" / "config.json").read_text())
    config["mcp_servers"]["t"]["env"].update(NOTE_DESCRIPTION="Say the text again.", NOTE_SUFFIX=" and eggs")
    config["mcp_servers"]["t"].update(server_more)
    (project / ".replio" / "config.json").write_text(json.dumps(config))
    return project


def _drift(run: dict[str, Any], fixture: str) -> list[str]:
    found = next(f for f in run["fixtures"] if f["id"] == fixture)["request_drift"]
    return [d["path"] + " " + d["kind"] for d in found]


def test_a_live_replay_names_a_changed_description_and_a_changed_result(tmp_path: Path,
                                                                        recorded: tuple[Path, dict[str, Any]]) -> None:
    project = _live_replay_setup(tmp_path, recorded)
    code, quiet, out = _run(project, "--record-mode", "none")  # from the cassette: nothing to see
    assert code == 0 and _drift(quiet, "note") == [], out
    code, live, out = _run(project, "--record-mode", "none", "--mcp", "live")
    assert code == 0, out  # request drift is reported, and fails a run only under --strict (below)
    note = _drift(live, "note")
    assert "mcp t: tools[echo].description changed" in note
    assert "mcp t: call 1 note result changed" in note
    assert "tools[echo].description changed" in note  # what the model is offered changed too
    assert "mcp t: tools[echo].description changed" in _drift(live, "picture")


@pytest.fixture(scope="module")
def marked_live(recorded: tuple[Path, dict[str, Any]],
                tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    """The recorded project, its server since changed (`_live_replay_setup`) and marked `"replay":
    "live"`, replayed once for the tests that check it, under --strict, printing the table and
    saving the result: the exit code, the saved result and what it printed."""
    with isolated(tmp_path_factory):
        project = _live_replay_setup(tmp_path_factory.mktemp("marked-live"), recorded, replay="live")
        saved = project.parent / "result.json"
        result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--record-mode", "none", "--strict",
                                           "--output-file", str(saved), *_only_ours(project)],
                                    env={"T_TOKEN": SECRET}, catch_exceptions=False)
        return result.exit_code, json.loads(saved.read_text()), result.stdout + result.stderr


def test_a_server_marked_live_is_compared_without_the_flag(marked_live: tuple[int, dict[str, Any], str]) -> None:
    code, live, out = marked_live
    assert "mcp t: call 1 note result changed" in _drift(live, "note"), out
    assert code == 1, out  # --strict: request drift fails the run


def test_the_table_shows_mcp_drift(marked_live: tuple[int, dict[str, Any], str]) -> None:
    assert 'mcp t: call 1 note result changed: "milk" -> "milk and eggs"' in marked_live[2]


def test_a_live_replay_of_an_http_server_reaches_it_through_the_blocked_network(
        tmp_path: Path, agent: LLMServer, http_server: str) -> None:
    server = {"url": http_server, "headers": {"Authorization": {"from_env": "DOCS_AUTH"}}}
    project = _project(tmp_path / "p", server=server, fixtures=("PICTURE",))
    auth = {"DOCS_AUTH": "Bearer http-secret-token-4242"}
    code, recorded, out = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once", env=auth)
    assert code == 0, out
    agent.close()
    code, replayed, out = _run(project, "--record-mode", "none", "--mcp", "live", env=auth)
    assert code == 0, out
    assert _results(replayed) == _results(recorded) and _drift(replayed, "picture") == []
    assert "http-secret-token-4242" not in (project / "cassettes" / "openai" / "test-model" / "picture.yaml").read_text()


def test_the_token_of_an_http_servers_bearer_header_is_a_secret(
        tmp_path: Path, agent: LLMServer, http_server: str) -> None:
    server = {"url": http_server, "headers": {"Authorization": {"from_env": "DOCS_AUTH"}}}
    project = _project(tmp_path / "p", server=server, fixtures=("TOKEN",))
    auth = {"DOCS_AUTH": "Bearer http-secret-token-4242"}  # the `token` tool answers the bare token
    report = tmp_path / "report.html"
    code, recorded, out = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once",
                               "--html", str(report), env=auth)
    (fixture,) = recorded["fixtures"]
    assert code == 1 and fixture["status"] == "error" and "was not written" in fixture["error"]
    assert not list(project.rglob("*.yaml"))
    code, live, more = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes", env=auth)
    assert live["fixtures"][0]["trace"][0]["result"] == "[REDACTED]"
    assert "http-secret-token-4242" not in out + more + report.read_text()


def _error(run: dict[str, Any], fixture: str) -> str:
    return next(f for f in run["fixtures"] if f["id"] == fixture)["error"]


def test_a_replay_the_cassette_cannot_serve_says_how_to_record_it(tmp_path: Path,
                                                                  recorded: tuple[Path, dict[str, Any]]) -> None:
    project = _copy(recorded[0], tmp_path)
    cassette = project / "cassettes" / "openai" / "test-model" / "note.yaml"
    data = yaml.safe_load(cassette.read_text())
    data["mcp"]["t"]["calls"] = []
    cassette.write_text(yaml.safe_dump(data))
    code, run, out = _run(project, "--record-mode", "none")
    assert code == 1
    error = _error(run, "note")
    assert "the call note {} to MCP server 't' has no recording in" in error and "--record-mode all" in error
    del data["mcp"]
    cassette.write_text(yaml.safe_dump(data))
    error = _error(_run(project, "--record-mode", "none")[1], "note")
    assert "holds no recording of MCP server 't'" in error


def test_override_tunes_a_servers_description_and_tool_sets_compare(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("PICTURE",))
    variants = project / ".replio" / "tools"
    variants.mkdir()
    (variants / "tuned.json").write_text(json.dumps({"override": {"echo": {"description": "Repeat the text."}},
                                                     "disable": ["crash"]}))
    code, data, out = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once",
                           "--tools", "default,tuned")
    assert code == 0, out
    offered = {}
    for seen in agent.requests:
        tools = {t["function"]["name"]: t["function"]["description"] for t in seen.json()["tools"]}
        offered[tools["echo"]] = set(tools)
    assert set(offered) == {"Echo the text back.", "Repeat the text."}
    assert "crash" in offered["Echo the text back."] and "crash" not in offered["Repeat the text."]
    assert [r["tools"] for r in data["runs"]] == ["default", "tuned"]


def test_an_override_naming_no_tool_is_a_fixture_error_naming_the_file(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("NOTE",))
    (project / ".replio" / "tools.json").write_text(json.dumps({"override": {"ecko": {"description": "x"}}}))
    code, data, _ = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once")
    error = data["fixtures"][0]["error"]
    assert code == 1 and "tools.json: override.ecko: no tool named 'ecko'; did you mean 'echo'?" in error


def test_a_name_clash_with_another_tool_names_both(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("NOTE",))
    (project / ".replio" / "tools.json").write_text(json.dumps({"tools": {"echo": {
        "description": "A stub echo.", "result": "echo"}}}))
    code, data, _ = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once")
    error = data["fixtures"][0]["error"]
    assert code == 1 and "tool 'echo' is defined twice: by" in error and "tools.json" in error
    assert "MCP server 't'" in error and '"prefix"' in error


def test_a_prefix_keeps_names_apart(tmp_path: Path, agent: LLMServer) -> None:
    agent.handler = openai_agent({"NOTE": [[("t_note", {})], "milk"]})
    project = _project(tmp_path / "p", fixtures=("NOTE",))
    config = json.loads((project / ".replio" / "config.json").read_text())
    config["mcp_servers"]["t"]["prefix"] = "t_"
    (project / ".replio" / "config.json").write_text(json.dumps(config))
    (project / ".replio" / "eval" / "note.json").write_text(json.dumps({
        "task": "NOTE: read it", "files": {"note.txt": "milk"}, "expected": ["t_note"],
        "tool_permission": {"mcp": "allow"}}))
    code, data, out = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes")
    assert code == 0, out
    assert data["fixtures"][0]["trace"][0]["result"] == "milk"


def test_mcp_tools_are_denied_unless_the_fixture_allows_them(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("NOTE",))
    fixture = project / ".replio" / "eval" / "note.json"
    data = json.loads(fixture.read_text())
    del data["tool_permission"]
    fixture.write_text(json.dumps(data))
    code, run, _ = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes")
    assert run["fixtures"][0]["trace"][0]["result"] == "Error: permission denied: note (mcp) is not allowed in this run"


def test_a_fixture_chooses_servers_by_name_and_a_wrong_name_is_a_problem(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("NOTE",))
    fixture = project / ".replio" / "eval" / "note.json"
    data = json.loads(fixture.read_text())
    fixture.write_text(json.dumps({**data, "mcp_servers": ["nope"]}))
    code, run, out = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes")
    assert code == 1
    assert "in tool set 'default': mcp_servers: the tool set has no MCP server named 'nope' (it has: t)" in out


def test_no_server_outlives_its_fixture(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("SPAWN", "DAEMON", "NOTE"))
    code, _, out = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes")
    assert code == 0, out
    started = pids(project / "pids")
    assert len(started) == 5  # three servers, a child and a daemon (forked twice, in a session of its own)
    assert wait_until_dead(started, 0.5) == []


def test_a_server_that_crashes_mid_run_ends_the_fixture_in_error(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", fixtures=("CRASH", "NOTE"))
    code, run, _ = _run(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once")
    crash, note = run["fixtures"]
    assert code == 1 and crash["status"] == "error" and note["status"] == "ok"
    assert "mcp server t ({python} " in crash["error"] and "crashing on purpose" in crash["error"]
    assert [t["result"][:6] for t in crash["trace"]] == ["Error:", "Error:"]
    assert not (project / "cassettes" / "openai" / "test-model" / "crash.yaml").exists()
    assert wait_until_dead(pids(project / "pids")) == []


def test_a_server_that_cannot_start_is_one_fixtures_error(tmp_path: Path, agent: LLMServer) -> None:
    project = _project(tmp_path / "p", server={"command": "no-such-mcp-server-xyz"}, fixtures=("NOTE",))
    code, run, _ = _run(project, "--base-url", f"{agent.url}/v1", "--no-cassettes")
    assert code == 1
    assert run["fixtures"][0]["error"] == ("mcp server t (no-such-mcp-server-xyz): its command "
                                           "'no-such-mcp-server-xyz' does not exist")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_call_in_flight_when_the_run_is_interrupted_ends_cancelled_within_seconds_and_no_server_outlives_it(
        tmp_path: Path, agent: LLMServer, sig: int) -> None:
    project = _project(tmp_path / "p", fixtures=("SLOW",))
    env = {**os.environ, "T_TOKEN": SECRET, "TMPDIR": str(tmp_path)}
    env.pop("CI", None)
    proc = subprocess.Popen([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), "run",
                             "--base-url", f"{agent.url}/v1", "--no-cassettes", "--output", "json",
                             *_only_ours(project)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while len(agent.requests) < 1 or not pids(project / "pids"):
            assert time.monotonic() < deadline and proc.poll() is None, "the server never started"
            time.sleep(0.05)
        time.sleep(0.5)  # the slow call is in flight
        interrupted = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
        took = time.monotonic() - interrupted
    finally:
        proc.kill()
    assert proc.returncode == 130 and took < 6, (took, err)
    (fixture,) = json.loads(out)["fixtures"]
    assert (fixture["status"], fixture["error"]) == ("cancelled", "the run was interrupted"), fixture
    assert wait_until_dead(pids(project / "pids")) == []
