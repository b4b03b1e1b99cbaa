"""The environment is read once, into an `Env` snapshot, and the folders it names come from it."""

from __future__ import annotations

import ast
import os
import pwd
from pathlib import Path

import pytest

import replio_replay
from replio_replay._runtime.env import Env
from replio_replay.plan import lastfailed
from replio_replay.plan.settings import resolve_settings
from replio_replay.run.suite import Outcome, Plan, RunRequest, remember

PACKAGE = Path(replio_replay.__file__).parent

#: Where a child process's environment is built from a few of the process's own variables.
CHILD_ENVIRONMENTS = ["agents/process.py", "run/gitrepo.py", "tools/child.py", "tools/process.py"]
#: Runs in the user's agent, not in replio: it reads what replio gave the agent.
AGENT_SIDE = ["agents/protocol.py", "agents/tools.py"]
#: Reads `REPLIO_CONFINE` (a cap the tests set) where the first program starts, below every layer the snapshot reaches.
CONFINEMENT = ["_runtime/confine.py"]
#: Runs in a fork-server child as it walls itself off: it sets that child's own TMPDIR, read by the user's code.
CHILD_SIDE = ["_runtime/nested.py"]


def test_the_folders_come_from_the_snapshot_not_the_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "process"))
    monkeypatch.setenv("HOME", str(tmp_path / "process-home"))
    env = Env({"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert env.cache_dir == tmp_path / "cache" / "replio"
    assert env.global_fixture_dir == tmp_path / "config" / "replio" / "eval"
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert Env({}).cache_dir == account / ".cache" / "replio"  # no HOME in the snapshot: not the process's


def test_a_run_remembers_its_failures_in_the_cache_folder_it_was_handed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "process"))
    project = tmp_path / "project"
    project.mkdir()
    settings = resolve_settings(project, env=Env({"XDG_CACHE_HOME": str(tmp_path / "handed")}))
    remember(Plan(RunRequest(project=project), settings, runs=[]), Outcome())
    assert lastfailed.load(tmp_path / "handed" / "replio", project) == set()
    assert not (tmp_path / "process").exists()


def test_only_env_reads_the_process_environment() -> None:
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "environb"}
                    and isinstance(node.value, ast.Name) and node.value.id == "os"):
                readers.append(str(path.relative_to(PACKAGE)))
    assert sorted(set(readers)) == sorted(["_runtime/env.py", *CHILD_ENVIRONMENTS, *AGENT_SIDE, *CONFINEMENT, *CHILD_SIDE])
