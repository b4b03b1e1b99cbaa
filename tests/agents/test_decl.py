"""The `agent` declaration: resolved paths, what is refused before anything runs, the fingerprint."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from replio_replay.agents.decl import AgentDecl, agent_from_flag, resolve_agent
from replio_replay.errors import ToolSetError, UsageError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_command_runs_files_beside_its_declaration_by_absolute_path(tmp_path: Path) -> None:
    agent = write(tmp_path / "agents" / "a.py", "print('hi')\n")
    spec = resolve_agent(AgentDecl(command=["python", "agents/a.py", "--fast"]), tmp_path, "cfg: agent")
    assert spec.argv == (sys.executable, str(agent.resolve()), "--fast")
    assert spec.shown == "python agents/a.py --fast"


def test_python_means_the_interpreter_replio_runs_under(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "")
    assert resolve_agent(AgentDecl(command=["python3", "a.py"]), tmp_path, "x").argv[0] == sys.executable


@pytest.mark.parametrize("command", [["python", "missing.py"], ["node", "./dist/agent.js"]])
def test_a_missing_file_is_refused_naming_the_field_and_the_folder(tmp_path: Path, command: list[str]) -> None:
    with pytest.raises(ToolSetError) as info:
        resolve_agent(AgentDecl(command=command), tmp_path, "tools.json: agent")
    assert str(info.value).startswith("tools.json: agent.command: ")
    assert "does not exist" in str(info.value) and str(tmp_path) in str(info.value)


def test_a_program_not_on_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolSetError, match="'no-such-agent-program' is not on PATH"):
        resolve_agent(AgentDecl(command=["no-such-agent-program"]), tmp_path, "x: agent")


def test_a_program_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "agent.sh", "#!/bin/sh\necho hi\n")
    with pytest.raises(ToolSetError, match="is not executable"):
        resolve_agent(AgentDecl(command=["./agent.sh"]), tmp_path, "x: agent")
    os.chmod(tmp_path / "agent.sh", 0o755)
    assert resolve_agent(AgentDecl(command=["./agent.sh"]), tmp_path, "x: agent").argv[0].endswith("agent.sh")


def test_a_python_function_is_checked_without_running_the_file(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", "raise SystemExit('never run')\ndef run(task):\n    return task\n")
    spec = resolve_agent(AgentDecl(python="agent.py:run"), tmp_path, "x: agent")
    assert spec.argv[1:3] == ("-m", "replio_replay.agents.pychild") and spec.argv[-1] == "run"
    with pytest.raises(ToolSetError, match="defines no function 'main'; it defines run: name one of them"):
        resolve_agent(AgentDecl(python="agent.py:main"), tmp_path, "x: agent")
    with pytest.raises(ToolSetError, match=r"defines no function 'runn'; did you mean agent\.py:run\?$"):
        resolve_agent(AgentDecl(python="agent.py:runn"), tmp_path, "x: agent")  # never `def runn(...)`
    write(tmp_path / "empty.py", "TASKS = []\n")
    with pytest.raises(ToolSetError, match=r"defines no function 'run'; define `def run\(task: str\) -> str` at the"):
        resolve_agent(AgentDecl(python="empty.py:run"), tmp_path, "x: agent")
    with pytest.raises(ToolSetError, match="'nope.py'.*does not exist"):
        resolve_agent(AgentDecl(python="nope.py:run"), tmp_path, "x: agent")
    with pytest.raises(ToolSetError, match="is not PATH.py:function"):
        resolve_agent(AgentDecl(python="agent.py"), tmp_path, "x: agent")


def test_a_python_file_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", "def run(:\n")
    with pytest.raises(ToolSetError, match="cannot be read as Python"):
        resolve_agent(AgentDecl(python="agent.py:run"), tmp_path, "x: agent")


@pytest.mark.parametrize("data", [{}, {"command": ["a"], "python": "a.py:run"}, {"command": []},
                                  {"command": ["a"], "timeout": 0}, {"command": ["a"], "unknown": 1}])
def test_bad_declarations_are_refused_by_the_model(data: dict) -> None:
    with pytest.raises(ValidationError):
        AgentDecl.model_validate(data)


def test_the_fingerprint_follows_the_code_not_the_machine(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        write(root / "agent.py", "def run(task):\n    return 'a'\n")
        write(root / "lib" / "tools.py", "X = 1\n")
    decl = AgentDecl(command=["python", "agent.py"], sources=["lib/*.py"])
    first = resolve_agent(decl, one, "x")
    assert first.fingerprint == resolve_agent(decl, two, "x").fingerprint
    assert first.to_json() == resolve_agent(decl, two, "x").to_json()  # no machine path in the digest
    write(two / "lib" / "tools.py", "X = 2\n")
    assert resolve_agent(decl, two, "x").fingerprint != first.fingerprint


def test_sources_that_match_nothing_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", "")
    with pytest.raises(ToolSetError, match="agent.sources: 'src/\\*\\*/\\*.py' matches no file"):
        resolve_agent(AgentDecl(command=["python", "agent.py"], sources=["src/**/*.py"]), tmp_path, "x: agent")


def test_the_flag_is_split_as_a_shell_would_relative_to_the_current_folder(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "my agent.py", "")
    monkeypatch.chdir(tmp_path)
    spec = agent_from_flag("python 'my agent.py' --name 'a b'")
    assert spec.argv == (sys.executable, str((tmp_path / "my agent.py").resolve()), "--name", "a b")
    assert spec.where == "--agent"
    with pytest.raises(UsageError, match="--agent"):
        agent_from_flag("python 'unclosed")
    with pytest.raises(UsageError, match="does not exist"):
        agent_from_flag("python nothere.py")
