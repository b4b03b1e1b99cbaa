"""Real agents, written against the real SDKs, run by the real `replio` CLI: recorded through the
relay from a fake upstream on 127.0.0.1, then replayed offline.

Each agent (`tests/support/real_agents`) has tools of its own and loops until its model answers
without a tool call: the `openai` SDK's Chat Completions, plain and streamed, and its Responses
API; the `anthropic` SDK's Messages; a pydantic-ai `Agent` (declared as a Python function); a Node
script with nothing but `fetch`. Each is declared in its project's `.replio/config.json`; the
upstream (`tests/support/upstreams`) speaks that wire format and insists on the run's model and
replio's key, which the agent itself never sees.

Per agent, one test records a project (goldens approved on the way), replays it against a closed
port under `--strict` (the streamed agent twice, to show a replay prints the same every time; every
replay is checked against the recording and its goldens), and, for the plain OpenAI agent and the
Node one, again after a tool's description changed in the agent's source, checking each step.
The plain OpenAI agent's recording is kept for the module: the test of a replay that went another
way replays a copy of it (the two share an xdist group, so one worker records it once).
Every `replio eval run` is the installed `replio` in a process of its own; `status`, which only
reads the project, runs in the test's process.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import replio_in_process
from tests.support import upstreams
from tests.support.llm_server import LLMServer, Seen

AGENTS = Path(__file__).resolve().parents[1] / "support" / "real_agents"
REPLIO = str(Path(sys.executable).with_name("replio"))
#: replio's own key for the fake upstreams: "sk-test-" and 32 hex characters.
KEY = "sk-test-" + "7d1f0c9a4b2e8d3f6a5c0b9e1d4f7a2c"
#: What the tool answers for Paris (Python's json.dumps; Node's JSON.stringify has no spaces).
PARIS = '{"city": "Paris", "forecast": "sunny", "celsius": 21}'
OLD_DESCRIPTION = "Get today's weather forecast for a city."
NEW_DESCRIPTION = "Get the weather forecast for a city, for today only."
#: The keys of a fixture's result that a replay must reproduce exactly.
STABLE = ("id", "trace", "names", "answer", "pass", "calls", "tokens", "status", "error", "reasons", "accuracy")

WEATHER = {"id": "weather", "task": "What is the weather in Paris?", "expected": ["get_weather"],
           "verifier": {"args": {"get_weather": {"city": "Paris"}}, "answer": {"$contains": "sunny"}, "max_calls": 1}}
ADD = {"id": "add", "task": "What is 2 + 3?", "expected": ["add"],
       "verifier": {"args": {"add": {"a": 2, "b": 3}}, "answer": {"$contains": '"sum": 5'}, "max_calls": 1}}
TALK = {"id": "weather-talk", "task": "What is the weather in Paris?",
        "turns": [{"user": "and in London?", "verifier": {"answer": {"$contains": "rainy"}}}],
        "verifier": {"in_order": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                                  {"name": "get_weather", "arguments": {"city": "London"}}],
                     "exact": ["get_weather", "get_weather"]}}


@dataclass(frozen=True)
class Case:
    """One real agent: its files (copied into the project's `agent/`), how `.replio/config.json`
    declares it, the run's provider and the upstream that plays its model."""

    name: str
    files: tuple[str, ...]
    agent: dict[str, Any]
    upstream: Callable[[str], Callable[[Seen], Any]]
    fixtures: tuple[dict[str, Any], ...] = (WEATHER,)
    provider: str = "openai:test-model"
    #: The base URL's path after host and port: the provider's way of being given one.
    suffix: str = "/v1"
    #: The path the upstream sees for the agent's requests.
    path: str = "/v1/chat/completions"
    paris: str = PARIS
    #: The weather fixture's tokens: the two answers' usage, as the upstream counts it.
    tokens: int = 104
    #: The agent file whose tool description the drift check changes; None: not checked.
    drift: str | None = None
    #: Whether the model's answers are streamed (Server-Sent Events).
    streamed: bool = False
    #: How many times it is replayed: once is checked against the recording; a second time against
    #: the first, for one case, shows a replay's whole output is the same every time.
    replays: int = 1


PY = ["weather_tools.py"]
CASES = {case.name: case for case in (
    Case("openai-chat", ("openai_chat.py", *PY),
         {"command": ["python", "agent/openai_chat.py"], "sources": ["agent/weather_tools.py"]},
         upstreams.chat_completions, fixtures=(WEATHER, ADD, TALK), drift="openai_chat.py"),
    Case("openai-chat-stream", ("openai_chat_stream.py", *PY),
         {"command": ["python", "agent/openai_chat_stream.py"], "sources": ["agent/*.py"]},
         lambda key: upstreams.chat_completions(key, stream=True), streamed=True, replays=2),
    Case("openai-responses", ("openai_responses.py", *PY),
         {"command": ["python", "agent/openai_responses.py"], "sources": ["agent/weather_tools.py"]},
         upstreams.responses_api, path="/v1/responses", tokens=148),
    Case("anthropic", ("anthropic_messages.py", *PY),
         {"command": ["python", "agent/anthropic_messages.py"], "sources": ["agent/weather_tools.py"]},
         upstreams.anthropic_messages, provider="anthropic:claude-test", suffix="", path="/v1/messages",
         tokens=192),
    Case("pydantic-ai", ("pyd_agent.py", *PY),
         {"python": "agent/pyd_agent.py:run", "sources": ["agent/weather_tools.py"]}, upstreams.chat_completions),
    Case("node", ("agent.mjs",), {"command": ["node", "agent/agent.mjs"]}, upstreams.chat_completions,
         paris='{"city":"Paris","forecast":"sunny","celsius":21}', drift="agent.mjs"),
)}


@dataclass
class Outcome:
    """What one case left: each `replio` run, what the upstream saw, the cassettes and goldens, and
    the environments the agent's processes had."""

    project: Path
    record: subprocess.CompletedProcess[str]
    seen: list[Seen]
    #: A copy of the project as it was recorded, before any replay or edit.
    recorded: Path
    replays: list[subprocess.CompletedProcess[str]] = field(default_factory=list)
    drifted_strict: subprocess.CompletedProcess[str] | None = None
    drifted: subprocess.CompletedProcess[str] | None = None
    files: dict[str, str] = field(default_factory=dict)
    envs: list[dict[str, str]] = field(default_factory=list)

    @property
    def runs(self) -> list[subprocess.CompletedProcess[str]]:
        return [self.record, *self.replays, *(r for r in (self.drifted_strict, self.drifted) if r is not None)]


def _results(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """The fixtures of a run's JSON output, by id (the output explained when it is not JSON)."""
    try:
        report = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"exit {done.returncode}, not JSON:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}") from None
    return {f["id"]: f for f in report["fixtures"]}


def _write_project(case: Case, root: Path) -> Path:
    project = root / "proj"
    (project / ".replio" / "eval").mkdir(parents=True)
    (project / "agent").mkdir()
    for name in case.files:
        shutil.copy(AGENTS / name, project / "agent" / name)
    dumps = root / "env-dumps"
    dumps.mkdir()
    # confined, the agent writes only its worktree, its home and the folders declared writable
    agent = {**case.agent, "timeout": 120, "env": {"AGENT_ENV_DUMP": str(dumps)}, "writable": [str(dumps)]}
    (project / ".replio" / "config.json").write_text(json.dumps({"bundled": False, "agent": agent}, indent=2))
    for fixture in case.fixtures:
        (project / ".replio" / "eval" / f"{fixture['id']}.json").write_text(json.dumps(fixture, indent=2))
    return project


def _replio(case: Case, root: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL")) and k not in
           ("OLLAMA_HOST", "CI", "COLUMNS")}
    # replio's keys (both, whichever provider runs): only the upstream may see them.
    env.update(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, XDG_CONFIG_HOME=str(root / "xdg"),
               XDG_CACHE_HOME=str(root / "cache"))
    argv = [REPLIO, "eval", "--path", str(root / "proj"), "run", "--provider", case.provider,
            "--base-url", base_url + case.suffix, "--output", "json", *args]
    return subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, timeout=240)


def _exercise(case: Case, root: Path, closed: int) -> Outcome:
    """Record the case's project (approving its goldens), replay it offline under --strict,
    and, for a drift case, replay its `weather` fixture again after its tool's description changed."""
    project = _write_project(case, root)
    with LLMServer() as server:
        server.handler = case.upstream(KEY)
        record = _replio(case, root, server.url, "--record-mode", "once", "--update-golden")
        seen = list(server.requests)
    out = Outcome(project, record, seen, Path(shutil.copytree(project, root / "recorded", symlinks=True)))
    offline = f"http://127.0.0.1:{closed}"
    out.replays = [_replio(case, root, offline, "--record-mode", "none", "--strict") for _ in range(case.replays)]
    if case.drift is not None:
        source = project / "agent" / case.drift
        text = source.read_text()
        assert text.count(OLD_DESCRIPTION) == 1, case.drift
        source.write_text(text.replace(OLD_DESCRIPTION, NEW_DESCRIPTION))
        only = ("--record-mode", "none", "--fixture", "weather")
        out.drifted_strict = _replio(case, root, offline, *only, "--strict")
        out.drifted = _replio(case, root, offline, *only)
    out.files = {str(p.relative_to(project)): p.read_text() for folder in ("cassettes", "golden")
                 for p in sorted((project / folder).rglob("*")) if p.is_file()}
    out.envs = [json.loads(p.read_text()) for p in sorted((root / "env-dumps").iterdir())]
    return out


def _fixture_ids(name: str) -> list[str]:
    return [f["id"] for f in CASES[name].fixtures]


def _check_recording(name: str, outcome: Outcome) -> None:
    """A recording passes, with the trace read from the agent's requests."""
    case = CASES[name]
    assert outcome.record.returncode == 0, outcome.record.stderr[-3000:]
    results = _results(outcome.record)
    assert sorted(results) == sorted(_fixture_ids(name))
    for fixture in results.values():
        assert (fixture["status"], fixture["error"], fixture["pass"]) == ("ok", None, True), fixture
    weather = results["weather"]
    assert weather["trace"] == [{"name": "get_weather", "arguments": {"city": "Paris"}, "result": case.paris}]
    assert weather["names"] == ["get_weather"] and weather["calls"] == 1
    assert weather["answer"] == upstreams.final_text(case.paris)  # the model got the tool's result back
    assert weather["tokens"] == case.tokens
    assert "OPENAI_API_KEY=replio" in weather["agent_stderr"] and "[REDACTED]" not in weather["agent_stderr"]
    if "add" in results:
        assert results["add"]["trace"] == [{"name": "add", "arguments": {"a": 2, "b": 3}, "result": '{"sum": 5}'}]
        assert results["add"]["answer"] == upstreams.final_text('{"sum": 5}')
    # The upstream got every request at its path, for the run's model, with replio's real key.
    assert len(outcome.seen) == sum(len(f.get("turns", ())) + 1 for f in case.fixtures) * 2
    for seen in outcome.seen:
        assert seen.path == case.path
        assert seen.json()["model"] == case.provider.split(":")[1]
        assert seen.headers.get("authorization") == f"Bearer {KEY}" or seen.headers.get("x-api-key") == KEY
        assert seen.headers["user-agent"] == "replio-replay"  # the relay's, not the SDK's
    # The tool's result went back to the model, as the SDK sends it: a string in the request's JSON.
    assert any(json.dumps(case.paris)[1:-1] in json.dumps(seen.json()) for seen in outcome.seen)


def _check_keys(name: str, outcome: Outcome) -> None:
    """The agent never sees a key, and no output or file holds one."""
    assert len(outcome.envs) == sum(len(_results(run)) for run in outcome.runs)  # a process per fixture and run
    home = os.environ.get("HOME", "")
    for env in outcome.envs:
        assert env["OPENAI_API_KEY"] == env["ANTHROPIC_API_KEY"] == "replio"
        assert env["OPENAI_BASE_URL"] == env["REPLIO_BASE_URL"] + "/v1"
        assert env["ANTHROPIC_BASE_URL"] == env["REPLIO_BASE_URL"]
        assert env["REPLIO_BASE_URL"].startswith("http://127.0.0.1:")
        assert env["HOME"] != home and "replio-agent-home-" in env["HOME"]
        assert not any(KEY in value for value in env.values())
    shown = [r.stdout + r.stderr for r in outcome.runs] + list(outcome.files.values())
    assert any(name.startswith("cassettes/") for name in outcome.files)
    for text in shown:
        for form in _forms(KEY):
            assert form not in text


def _forms(secret: str) -> list[str]:
    """`secret` and its base64 at each of the three alignments it can have inside a longer
    encoding (the characters that depend on the secret's bits alone)."""
    forms = [secret]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + secret.encode()).decode()
        bits = 8 * (pad + len(secret.encode()))
        forms.append(encoded[(8 * pad + 5) // 6:bits // 6])
    return forms


def _check_replays(name: str, outcome: Outcome) -> None:
    """A replay offline is the recording, every time."""
    first, *again = outcome.replays
    assert len(again) == CASES[name].replays - 1
    assert first.returncode == 0, first.stderr[-3000:]
    for second in again:
        assert second.returncode == 0, second.stderr[-3000:]
        assert first.stdout == second.stdout
    recorded, replayed = _results(outcome.record), _results(first)
    for fid, fixture in replayed.items():
        assert {k: fixture.get(k) for k in STABLE} == {k: recorded[fid].get(k) for k in STABLE}
        assert fixture["request_drift"] == [] and fixture["drift"] == [], fixture
        assert fixture["agent_stderr"] == recorded[fid]["agent_stderr"]
    cassettes = [n for n in outcome.files if n.startswith("cassettes/")]
    provider, model = CASES[name].provider.split(":")
    assert sorted(cassettes) == sorted(f"cassettes/{provider}/{model}/{fid}.yaml" for fid in _fixture_ids(name))
    if CASES[name].streamed:
        # The streams are kept as the very bytes the upstream sent, and the agent read them again
        # on replay: its usage chunks too (it logs them).
        sent = [CASES[name].upstream(KEY)(seen).body.decode() for seen in outcome.seen]
        kept = yaml.safe_load(outcome.files[cassettes[0]])["interactions"]
        assert [i["response"]["body"]["string"] for i in kept] == sent
        assert sent[0].endswith("data: [DONE]\n\n") and '"usage"' in sent[0]
        assert "usage: 40+7\nusage: 50+7\n" in replayed["weather"]["agent_stderr"]


def _check_drift(name: str, outcome: Outcome) -> None:
    """A tool description changed in the agent's code is request drift."""
    strict, plain = outcome.drifted_strict, outcome.drifted
    assert strict is not None and plain is not None
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert strict.returncode == 1, strict.stderr[-3000:]
    assert strict.stderr.strip().splitlines()[-1] == (
        "replio: exit 1: 1 fixture with request drift (--strict; re-record with --record-mode stale): weather")
    assert strict.stdout == plain.stdout
    weather = _results(plain)["weather"]
    assert weather["request_drift"] == [{"path": "tools[get_weather].description", "kind": "changed", "role": "agent",
                                         "old": OLD_DESCRIPTION, "new": NEW_DESCRIPTION}]
    # The replay still answers from the recording: the same trace and answer, and no golden drift.
    assert {k: weather.get(k) for k in STABLE} == {k: _results(outcome.record)["weather"].get(k) for k in STABLE}
    assert weather["drift"] == []


def _check_conversation(name: str, outcome: Outcome) -> None:
    """A conversation runs through the helpers, turn after turn, in one process."""
    recorded = _results(outcome.record)["weather-talk"]
    london = '{"city": "London", "forecast": "rainy", "celsius": 14}'
    assert recorded["trace"] == [
        {"name": "get_weather", "arguments": {"city": "Paris"}, "result": PARIS},
        {"name": "get_weather", "arguments": {"city": "London"}, "result": london},
    ]
    assert recorded["pass"] is True and recorded["answer"] == upstreams.final_text(london)
    assert recorded["conversation"] == [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"role": "tool", "name": "get_weather", "content": PARIS},
        {"role": "assistant", "content": upstreams.final_text(PARIS)},
        {"role": "user", "content": "and in London?"},
        {"role": "assistant", "content": "", "calls": [{"name": "get_weather", "arguments": {"city": "London"}}]},
        {"role": "tool", "name": "get_weather", "content": london},
        {"role": "assistant", "content": upstreams.final_text(london)},
    ]
    # One process held the whole conversation: the second turn's requests carry the first turn.
    talk = [s.json()["messages"] for s in outcome.seen if "London" in s.body.decode()]
    assert len(talk) == 2 and all(m[1]["content"] == "What is the weather in Paris?" for m in talk)
    assert _results(outcome.replays[0])["weather-talk"]["trace"] == recorded["trace"]


#: The xdist group of the tests that share the plain OpenAI agent's recording.
OPENAI_CHAT = pytest.mark.xdist_group("agent-frameworks-openai-chat")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Outcome]:
    """`outcomes(NAME)`: what `_exercise` left for the case, made on first use and kept for the module."""
    done: dict[str, Outcome] = {}

    def get(name: str) -> Outcome:
        if name not in done:
            with socket.socket() as closed:  # bound, never listening: as `closed_port`
                closed.bind(("127.0.0.1", 0))
                done[name] = _exercise(CASES[name], tmp_path_factory.mktemp(name), closed.getsockname()[1])
        return done[name]
    return get


@pytest.mark.parametrize("name", [pytest.param(n, marks=OPENAI_CHAT) if n == "openai-chat" else n for n in CASES])
def test_a_real_agent_is_recorded_replayed_and_reviewed(name: str, outcomes: Callable[[str], Outcome]) -> None:
    outcome = outcomes(name)
    _check_recording(name, outcome)
    _check_keys(name, outcome)
    _check_replays(name, outcome)
    if CASES[name].drift is not None:
        _check_drift(name, outcome)
    if any(f.get("turns") for f in CASES[name].fixtures):
        _check_conversation(name, outcome)


KEEP = {"id": "keep", "task": "Keep checking the weather in Paris."}


@pytest.mark.parametrize(("name", "agent", "calls"), [
    ("openai-chat", {"command": ["python", "agent/openai_chat.py"]}, 5),  # its MAX_STEPS
    ("pydantic-ai", {"python": "agent/pyd_agent.py:run_limited"}, 3),  # request_limit=3
])
def test_an_agent_cut_short_at_its_own_step_limit_ends_truncated(name: str, agent: dict[str, Any], calls: int,
                                                                  tmp_path: Path, closed_port: int) -> None:
    """An agent whose model never stops calling tools stops at its own limit and says so (`reply(...,
    truncated=True)`, `raise Truncated`): the fixture is `truncated`, as replio's loop reports it, a
    golden of it is approved, and its replay agrees."""
    case = dataclasses.replace(CASES[name], agent={**agent, "sources": ["agent/weather_tools.py"]},
                               fixtures=(KEEP,))
    _write_project(case, tmp_path)
    with LLMServer() as server:
        server.handler = case.upstream(KEY)
        record = _replio(case, tmp_path, server.url, "--record-mode", "once", "--update-golden")
    assert record.returncode == 0, record.stderr[-3000:]
    recorded = _results(record)["keep"]
    assert (recorded["status"], recorded["error"]) == ("truncated", None), recorded
    assert recorded["names"] == ["get_weather"] * calls
    assert (tmp_path / "proj" / "golden").is_dir()
    replay = _replio(case, tmp_path, f"http://127.0.0.1:{closed_port}", "--record-mode", "none", "--strict")
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert {k: _results(replay)["keep"][k] for k in STABLE} == {k: recorded[k] for k in STABLE}


@OPENAI_CHAT
def test_a_replay_whose_conversation_went_another_way_ends_in_a_named_error(
        outcomes: Callable[[str], Outcome], tmp_path: Path, closed_port: int) -> None:
    """An agent that sends one request more on replay (a warm-up) would get every recorded answer
    one request late: the replay (of a copy of the plain OpenAI agent's recording) names the request
    whose conversation is not the recorded one, instead of passing with a trace the agent never ran."""
    case = CASES["openai-chat"]
    recorded = outcomes("openai-chat")
    assert recorded.record.returncode == 0, recorded.record.stderr[-3000:]
    project = Path(shutil.copytree(recorded.recorded, tmp_path / "proj", symlinks=True))
    dumps = tmp_path / "env-dumps"
    dumps.mkdir()
    config = json.loads((project / ".replio" / "config.json").read_text())
    config["agent"].update(env={"AGENT_ENV_DUMP": str(dumps), "WARM_UP": "1"}, writable=[str(dumps)])
    (project / ".replio" / "config.json").write_text(json.dumps(config))
    replay = _replio(case, tmp_path, f"http://127.0.0.1:{closed_port}", "--record-mode", "none",
                     "--fixture", "weather")
    assert replay.returncode == 1, replay.stderr[-3000:]
    weather = _results(replay)["weather"]
    assert weather["status"] == "error" and not weather["pass"]
    assert weather["error"].startswith("fixture 'weather': request #2 does not carry the conversation it was "
                                       "recorded with: it holds 1 message where the recording's held 3. The "
                                       "replay went another way"), weather["error"]


def _status(root: Path) -> str:
    """What `replio eval status` prints for the project, run in this process (no provider key set)."""
    done = replio_in_process("eval", "--path", root / "proj", "status")
    return done.stdout + done.stderr


def test_a_cassette_knows_the_agent_that_made_it(tmp_path: Path, closed_port: int) -> None:
    """A recording made with `--agent 'node …'` is not replayed with the project's declared agent when
    the flag is left out: the fixture names both; with the flag it replays. `status` names the agent
    that changed, and the source file of the declared agent that changed since its recording."""
    case = dataclasses.replace(CASES["openai-chat"], files=(*CASES["openai-chat"].files, "agent.mjs"),
                               fixtures=(WEATHER,))
    project = _write_project(case, tmp_path)
    node = ("--agent", "node proj/agent/agent.mjs")
    with LLMServer() as server:
        server.handler = case.upstream(KEY)
        record = _replio(case, tmp_path, server.url, "--record-mode", "once", *node)
    assert record.returncode == 0, record.stderr[-3000:]
    offline = f"http://127.0.0.1:{closed_port}"
    declared = _replio(case, tmp_path, offline, "--record-mode", "none")
    weather = _results(declared)["weather"]
    assert declared.returncode == 1 and weather["status"] == "error"
    assert weather["error"].startswith(
        "fixture 'weather': its cassette was recorded with the agent 'node proj/agent/agent.mjs', and this "
        "replay would run the agent 'python agent/openai_chat.py', which the recorded answers were not made "
        "for; replay it with that agent"), weather["error"]
    assert "agent_stderr" not in weather  # it never ran
    flagged = _replio(case, tmp_path, offline, "--record-mode", "none", *node)
    assert flagged.returncode == 0 and _results(flagged)["weather"]["pass"], flagged.stderr[-3000:]
    assert "recorded with the agent 'node proj/agent/agent.mjs', now 'python agent/openai_chat.py'" \
        in _status(tmp_path)
    with LLMServer() as server:  # the declared agent's own recording
        server.handler = case.upstream(KEY)
        again = _replio(case, tmp_path, server.url, "--record-mode", "all")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "changed" not in _status(tmp_path)
    tools = project / "agent" / "weather_tools.py"
    tools.write_text(tools.read_text() + "\n# edited\n")
    assert "tool set 'default' changed: the agent's agent/weather_tools.py changed" in _status(tmp_path)
