"""The agent's process: what it is given, its answers, and every way it can end, bounded."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from replio_replay._runtime.deadline import Interrupted
from replio_replay.agents.decl import AgentSpec
from replio_replay.agents.process import PLACEHOLDER_KEY, STDOUT_CAP, AgentProcess, Answer
from replio_replay.errors import AgentError
from tests.support.processes import ended, host_pid


def spec(tmp_path: Path, code: str, *, timeout: float = 20.0, env: dict[str, str] | None = None) -> AgentSpec:
    script = tmp_path / "agent.py"
    script.write_text(code)
    return AgentSpec((sys.executable, str(script)), timeout, tuple((env or {}).items()), "python agent.py", "x",
                     "test")


def start(tmp_path: Path, code: str, task: str | None = "the task", **kw: object) -> AgentProcess:
    worktree = tmp_path / "wt"
    worktree.mkdir(exist_ok=True)
    return AgentProcess(spec(tmp_path, code, **kw), cwd=worktree, base_url="http://127.0.0.1:9/tok",  # type: ignore[arg-type]
                        task=task)


ECHO_ENV = """
import json, os, sys
task = sys.stdin.read()
keys = {k: os.environ.get(k) for k in ("REPLIO_TASK", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
        "HOME", "REPLIO_BASE_URL", "MINE", "SECRET_FROM_PARENT")}
print(json.dumps({"stdin": task, "cwd": os.getcwd(), **keys}))
"""


def test_one_task_on_stdin_and_in_the_environment_answer_on_stdout(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_FROM_PARENT", "sk-live-0123456789abcdef")
    with start(tmp_path, ECHO_ENV, env={"MINE": "yes"}) as agent:
        seen = json.loads(agent.answer().text)
        home = Path(seen["HOME"])
        assert home.is_dir()
    assert not home.exists()  # the throwaway HOME goes with the agent
    assert seen["stdin"] == seen["REPLIO_TASK"] == "the task"
    assert seen["cwd"] == str((tmp_path / "wt").resolve())
    assert seen["OPENAI_BASE_URL"] == "http://127.0.0.1:9/tok/v1"
    assert seen["ANTHROPIC_BASE_URL"] == seen["REPLIO_BASE_URL"] == "http://127.0.0.1:9/tok"
    assert seen["OPENAI_API_KEY"] == PLACEHOLDER_KEY
    assert seen["MINE"] == "yes" and seen["SECRET_FROM_PARENT"] is None


def test_a_conversation_answers_each_message_and_skips_noise(tmp_path: Path) -> None:
    code = """
import json, sys
print("starting up (noise)", flush=True)
for line in sys.stdin:
    said = json.loads(line)["user"]
    print(json.dumps({"log": "noise"}), flush=True)
    print(json.dumps({"answer": said[::-1]}), flush=True)
"""
    with start(tmp_path, code, task=None) as agent:
        assert agent.ask("abc") == Answer("cba")
        assert agent.ask("xyz") == Answer("zyx")
        agent.end()


def test_an_agent_cut_short_at_its_own_step_limit_says_so_in_its_answer(tmp_path: Path) -> None:
    code = """
from replio_replay import agent_messages, reply
for said in agent_messages():
    reply("as far as I got", truncated=said == "long")
"""
    with start(tmp_path, code, task=None) as agent:
        assert agent.ask("short") == Answer("as far as I got")
        assert agent.ask("long") == Answer("as far as I got", truncated=True)
    with start(tmp_path, code, task="long") as agent:
        assert agent.answer() == Answer("as far as I got", truncated=True)
    with start(tmp_path, code, task="short") as agent:
        assert agent.answer() == Answer("as far as I got")


@pytest.mark.parametrize(("code", "said"), [
    ("import sys\nprint('boom: bad config', file=sys.stderr)\nsys.exit(3)", "agent exited 3: boom: bad config"),
    ("import os\nos.kill(os.getpid(), 9)", "agent was killed by signal 9 (nothing on standard error)"),
])
def test_a_failing_agent_is_named_with_its_status_and_last_stderr_line(tmp_path: Path, code: str, said: str) -> None:
    with start(tmp_path, code) as agent, pytest.raises(AgentError) as info:
        agent.answer()
    assert str(info.value) == said


def test_an_agent_that_ends_before_answering_is_an_error(tmp_path: Path) -> None:
    with start(tmp_path, "import sys\nsys.stdin.readline()\nprint('bye', file=sys.stderr)", task=None) as agent, \
            pytest.raises(AgentError, match="exited 0 and ended its standard output before answering: bye"):
        agent.ask("hello")


def test_a_slow_agent_is_stopped_at_its_timeout_with_all_it_started(tmp_path: Path) -> None:
    code = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True, env={})
open("child.pid", "w").write(f"{os.readlink('/proc/self/ns/pid')} {child.pid}")
time.sleep(60)
"""
    found: list[int | None] = []

    def find_it() -> None:  # while it runs: confined, its pid is its PID namespace's
        said = tmp_path / "wt" / "child.pid"
        while not (said.exists() and said.read_text()):
            time.sleep(0.02)
        found.append(host_pid(said.read_text()))

    finder = threading.Thread(target=find_it, daemon=True)
    finder.start()
    began = time.monotonic()
    with start(tmp_path, code, timeout=5) as agent, pytest.raises(AgentError, match="took longer than 5 s"):
        agent.answer()
    assert time.monotonic() - began < 15
    finder.join(timeout=5)
    assert found and found[0] is not None, "the agent's child was never seen running"
    assert ended(found[0], within=2)  # it left the group (setsid) and emptied its environment


def test_output_past_the_cap_stops_the_agent(tmp_path: Path) -> None:
    code = f"import sys\nsys.stdout.write('x' * {STDOUT_CAP + 10})\nsys.stdout.flush()\nimport time; time.sleep(30)"
    with start(tmp_path, code) as agent, pytest.raises(AgentError, match="more than 1024 KiB"):
        agent.answer()


def test_cancel_ends_the_agent_within_a_moment(tmp_path: Path) -> None:
    cancel = threading.Event()
    worktree = tmp_path / "wt"
    worktree.mkdir()
    agent = AgentProcess(spec(tmp_path, "import time\ntime.sleep(60)"), cwd=worktree, base_url="http://x/t",
                         task="t", cancel=cancel)
    threading.Timer(0.3, cancel.set).start()
    began = time.monotonic()
    with agent, pytest.raises(Interrupted):
        agent.answer()
    assert time.monotonic() - began < 5


def test_stderr_keeps_its_end(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(5000):\n    print(f'line {i}', file=sys.stderr)\n"
    with start(tmp_path, code) as agent:
        agent.answer()
    end = agent.close()
    assert end.returncode == 0 and end.stderr.endswith("line 4999\n") and "line 0\n" not in end.stderr


def test_a_program_that_cannot_start_is_named(tmp_path: Path) -> None:
    missing = AgentSpec((str(tmp_path / "nope"),), 5, (), "./nope", "x", "test")
    with pytest.raises(AgentError, match="agent './nope' could not start"):
        AgentProcess(missing, cwd=tmp_path, base_url="http://x/t", task="t")
