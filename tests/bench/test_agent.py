"""bench/run.py's agent budgets (6 and 7): the your-agent example's copy and its scripted model, the
bare server playing recorded responses, the agent run alone as replio would run it, and the tiny
agent of the --jobs budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import agent_servers  # noqa: E402
import run  # noqa: E402
from server import BenchServer  # noqa: E402


def post(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(f"{url}/chat/completions", data=b'{"messages": []}',
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_copy_holds_the_examples_one_task_fixtures_and_the_first_again(tmp_path: Path) -> None:
    example = [json.loads(p.read_text()) for p in sorted((run.YOUR_AGENT / ".replio" / "eval").glob("*.json"))]
    one_task = [f["id"] for f in example if not f.get("turns") and not f.get("user")]
    assert 0 < len(one_task) < len(example)  # the conversation is left out
    project = run.agent_copy(tmp_path / "agent")
    assert [f["id"] for f in run.agent_fixtures(project)] == sorted([*one_task, one_task[0] + run.AGAIN])
    config = json.loads((project / ".replio" / "config.json").read_text())
    assert config["provider"] == "openai:bench" and "providers" not in config  # nothing reaches a local model
    assert config["agent"] == json.loads((run.YOUR_AGENT / ".replio" / "config.json").read_text())["agent"]
    assert not (project / "cassettes").exists() and not (project / ".replio" / "tools").exists()
    argv = run.agent_argv(project)
    assert argv[0] == sys.executable and Path(argv[1]) == project / "agents" / "openai_agent.py"


def test_the_scripted_model_has_a_plan_for_every_one_task_fixture(tmp_path: Path) -> None:
    tasks = {f["task"] for f in run.agent_fixtures(run.agent_copy(tmp_path / "agent"))}
    assert tasks == set(agent_servers.SHOP_PLANS)


def test_the_bare_server_plays_each_fixtures_bodies_in_order_until_rewound() -> None:
    playback = agent_servers.Playback({"a": [b'{"n": 1}', b'{"n": 2}'], "b": [b'{"n": 3}']})
    try:
        assert post(playback.base_url("a")) == (200, b'{"n": 1}')
        assert post(playback.base_url("b")) == (200, b'{"n": 3}')
        assert post(playback.base_url("a")) == (200, b'{"n": 2}')
        assert post(playback.base_url("a"))[0] == 400
        playback.rewind()
        assert post(playback.base_url("a")) == (200, b'{"n": 1}')
    finally:
        playback.close()


def test_the_agent_alone_plays_the_recording_and_answers_as_the_replay_does(tmp_path: Path) -> None:
    project = run.agent_copy(tmp_path / "agent")
    for fixture in run.agent_fixtures(project):  # one fixture: one import of the SDK per run
        if fixture["id"] != "lookup-then-convert":
            (project / ".replio" / "eval" / f"{fixture['id']}.json").unlink()
    upstream = agent_servers.ShopUpstream()
    try:
        _, output = run.replio_run(project, "run", "--provider", "openai:bench", "--base-url", upstream.url,
                                   "--record-mode", "once", "--output", "json", env=run.BENCH_KEY)
    finally:
        upstream.close()
    recorded = run.answers(output, 1, "recording")
    cassette = project / "cassettes" / "openai" / "bench" / "lookup-then-convert.yaml"
    bodies = agent_servers.recorded_bodies(cassette)
    assert len(bodies) == 3  # a lookup, a conversion, the answer
    assert json.loads(bodies[0])["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup_order"
    playback = agent_servers.Playback({"lookup-then-convert": bodies})
    try:
        _, alone = run.run_direct(project, playback, tmp_path)
    finally:
        playback.close()
    _, output = run.replio_run(project, "run", "--record-mode", "none", "--provider", "openai:bench",
                               "--output", "json", env=run.BENCH_KEY)
    assert run.answers(output, 1, "replay") == alone == recorded
    assert "103.20 GBP" in alone["lookup-then-convert"]


@pytest.mark.parametrize("sdk", [False, True], ids=["urllib", "openai-sdk"])
def test_the_tiny_agent_follows_the_bench_servers_plan(tmp_path: Path, sdk: bool) -> None:
    (tmp_path / "notes.txt").write_text("hay\nneedle\nhay\n")
    server = BenchServer(0.0, requests=3)
    try:
        done = subprocess.run([sys.executable, str(REPO / "bench" / "tiny_agent.py"), *(["--sdk"] if sdk else [])],
                              input=b"find the needle", capture_output=True, cwd=tmp_path, timeout=120,
                              env={**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "bench",
                                   "REPLIO_TASK": ""})
    finally:
        server.close()
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "The needle is on line 2."


def test_the_jobs_project_runs_the_tiny_agent_on_budget_4s_fixtures(tmp_path: Path) -> None:
    project = run.agent_jobs_project(tmp_path / "jobs", 3, sdk=True)
    assert len(run.agent_fixtures(project)) == 3
    assert (project / "tiny_agent.py").read_text() == (REPO / "bench" / "tiny_agent.py").read_text()
    assert json.loads((project / ".replio" / "config.json").read_text())["agent"]["command"] == [
        "python", "tiny_agent.py", "--sdk"]
