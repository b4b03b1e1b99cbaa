"""Choosing what runs: --fixture globs, --tag, --no-bundled and the config's `bundled`,
--last-failed, the one-time note about the bundled catalog, and the nearest names offered for a
typo. Each family has a test through the installed `replio` in a subprocess (an exit 2's one line,
the note after a live run over loopback HTTP); the others run the same command line in this
process through click's CliRunner, as nothing about the process matters to what is chosen."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replio_replay._runtime.env import Env
from tests.helpers import bundled_ids, call, replio_in_process, turn, write_json
from tests.support.llm_server import LLMServer
from tests.support.project import write_project

BUNDLED = sorted(bundled_ids())
LOCAL = ["find-local", "grep-local", "other"]
NOTE = ("replio: note: the bundled catalog's fixtures run along with this project's own; leave them out with "
        "--no-bundled, or \"bundled\": false in .replio/config.json (said once per project)\n")


@pytest.fixture
def mock_project(tmp_path: Path) -> Path:
    """Three local fixtures played by the mock provider: `grep-local` fails its verifier, the others pass."""
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", {"find-local": [turn(call("glob", pattern="*.txt")), turn(text="a.txt")],
                                      "*": [turn(text="Done.")]})
    fixtures = root / ".replio" / "eval"
    write_json(fixtures / "find-local.json", {"task": "Find the text files.", "files": {"a.txt": "a"},
                                              "tags": ["find", "slow"], "expected": ["glob"]})
    write_json(fixtures / "grep-local.json", {"task": "Grep.", "tags": ["grep"],
                                              "verifier": {"must_include": ["grep"]}})
    write_json(fixtures / "other.json", {"task": "Say hi."})
    return root


def replio_process(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`replio eval --path PROJECT ARGS...` in a subprocess (the environment is the test's, isolated)."""
    return subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env,
                          cwd=project.parent)


def replio(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`replio eval --path PROJECT ARGS...` in this process (CliRunner)."""
    return replio_in_process("eval", "--path", project, *args)


def ran(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The fixture ids a `run --output json` ran."""
    assert done.returncode in (0, 1), done.stderr
    return [f["id"] for f in json.loads(done.stdout)["fixtures"]]


def listed(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [f["id"] for f in json.loads(done.stdout)["fixtures"]]


def error(done: subprocess.CompletedProcess[str]) -> str:
    """The one-line error of a usage error (exit 2)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("replio: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr.removeprefix("replio: error: ").strip()


# --fixture globs and --tag ---------------------------------------------------------------------------


def test_fixture_globs_select_the_union_with_exact_ids(mock_project: Path) -> None:
    found = listed(replio(mock_project, "list", "--output", "json", "--fixture", "find-*", "--fixture", "other"))
    assert found == sorted([*fnmatch.filter(BUNDLED, "find-*"), "find-local", "other"])
    assert ran(replio(mock_project, "run", "--output", "json", "--fixture", "*-local")) == ["find-local", "grep-local"]


def test_a_glob_matching_nothing_is_exit_2_naming_it_and_the_nearest_id(mock_project: Path) -> None:
    message = error(replio_process(mock_project, "run", "--fixture", "find-*", "--fixture", "grep-locl*"))
    assert message.startswith("no fixture matches --fixture 'grep-locl*'; did you mean 'grep-local'? known fixtures: ")
    assert error(replio_process(mock_project, "list", "--fixture", "grep-symbl")).startswith(
        "unknown fixture 'grep-symbl'; did you mean 'grep-symbol'? ")


def test_tags_select_fixtures_with_any_of_them_and_narrow_a_glob(mock_project: Path) -> None:
    data = json.loads(replio(mock_project, "list", "--output", "json", "--tag", "find", "--tag", "grep").stdout)
    assert data["fixtures"] == [
        {"id": "find-local", "source": "local", "description": "", "tags": ["find", "slow"]},
        {"id": "grep-local", "source": "local", "description": "", "tags": ["grep"]},
    ]
    assert ran(replio(mock_project, "run", "--output", "json", "--tag", "slow")) == ["find-local"]
    assert ran(replio(mock_project, "run", "--output", "json", "--tag", "slow", "--fixture", "*-local")) == ["find-local"]
    table = replio(mock_project, "list", "--fixture", "*-local").stdout.splitlines()
    assert table[0].split() == ["id", "source", "tags", "description"]
    assert table[2].split() == ["find-local", "local", "find,slow"]


def test_an_unknown_tag_lists_the_known_ones(mock_project: Path) -> None:
    assert error(replio(mock_project, "run", "--tag", "slwo")) == (
        "--tag 'slwo': no fixture has this tag; did you mean 'slow'? known tags: builtin, find, git, grep, mcp, slow, stub")
    assert error(replio(mock_project, "status", "--tag", "grep", "--fixture", "find-*")).startswith(
        "no fixture both matches --fixture 'find-*' and has --tag 'grep'")


# the bundled catalog -----------------------------------------------------------------------------------


def test_no_bundled_leaves_the_catalog_out_of_list_run_status_and_goldens(mock_project: Path) -> None:
    assert listed(replio(mock_project, "list", "--output", "json", "--no-bundled")) == LOCAL
    done = replio(mock_project, "run", "--output", "json", "--fixture", "grep-symbol", "--update-golden")
    assert ran(done) == ["grep-symbol"]
    bundled_golden = mock_project / "golden" / "mock" / "scripted" / "grep-symbol.json"
    assert bundled_golden.is_file()

    done = replio(mock_project, "run", "--output", "json", "--no-bundled", "--update-golden")
    assert ran(done) == LOCAL
    goldens = sorted(p.stem for p in (mock_project / "golden" / "mock" / "scripted").glob("*.json"))
    assert goldens == sorted([*LOCAL, "grep-symbol"])

    status = json.loads(replio(mock_project, "status", "--output", "json", "--no-bundled").stdout)
    assert sorted({e["fixture"] for e in status["entries"]}) == LOCAL
    assert status["orphans"] == []  # the bundled fixture's golden is left out, not orphaned
    status = json.loads(replio(mock_project, "status", "--output", "json", "--fixture", "find-*").stdout)
    assert "grep-symbol" not in {e["fixture"] for e in status["entries"]} and status["orphans"] == []
    status = json.loads(replio(mock_project, "status", "--output", "json").stdout)
    assert "grep-symbol" in {e["fixture"] for e in status["entries"]}
    assert replio(mock_project, "status", "--no-bundled", "--prune").stderr == ""
    assert bundled_golden.is_file()
    assert "unknown fixture 'grep-symbol'" in error(replio(mock_project, "run", "--no-bundled", "--fixture", "grep-symbol"))


def test_the_config_can_leave_the_bundled_catalog_out(mock_project: Path) -> None:
    config = mock_project / ".replio" / "config.json"
    data = json.loads(config.read_text())
    write_json(config, {**data, "bundled": False})
    assert listed(replio(mock_project, "list", "--output", "json")) == LOCAL
    assert ran(replio(mock_project, "run", "--output", "json", "--update-golden")) == LOCAL
    status = json.loads(replio(mock_project, "status", "--output", "json").stdout)
    assert sorted({e["fixture"] for e in status["entries"]}) == LOCAL
    write_json(config, {**data, "bundled": True})
    assert listed(replio(mock_project, "list", "--output", "json")) == sorted([*BUNDLED, *LOCAL])
    write_json(config, {**data, "bundled": "no"})
    assert "bundled: Input should be a valid boolean" in error(replio(mock_project, "run"))


# the one-time note -------------------------------------------------------------------------------------


def _live_env(server: LLMServer) -> dict[str, Any]:
    return {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1"}


def test_the_first_live_run_with_bundled_fixtures_says_how_to_leave_them_out_once(
        tmp_path: Path, agent: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write_project(tmp_path / "proj")
    env = _live_env(agent)
    monkeypatch.setenv("OPENAI_BASE_URL", env["OPENAI_BASE_URL"])  # the runs that say nothing: in this process
    only_local = replio(project, "run", "--fixture", "alpha")
    replay = replio(project, "run", "--fixture", "alpha", "--fixture", "list-directory", "--record-mode", "none")
    without = replio(project, "run", "--fixture", "beta", "--fixture", "grep-symbol", "--no-bundled")
    assert NOTE not in only_local.stderr + replay.stderr  # nothing bundled sent, nothing sent at all
    assert "unknown fixture 'grep-symbol'" in error(without)

    first = replio_process(project, "run", "--fixture", "alpha", "--fixture", "list-directory", "--no-cassettes", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("replio: running 2 fixtures, 2 at a time\n" + NOTE)
    again = replio_process(project, "run", "--fixture", "beta", "--fixture", "grep-symbol", "--no-cassettes", env=env)
    assert again.returncode == 0, again.stderr
    assert "running 2 fixtures" in again.stderr and NOTE not in again.stderr
    assert list(Env.current().cache_dir.glob("told-bundled-*.json"))


def test_a_project_without_fixtures_of_its_own_is_not_told(tmp_path: Path, agent: LLMServer) -> None:
    project = tmp_path / "bare"
    write_json(project / ".replio" / "config.json", {"provider": "openai:test-model"})
    done = replio_process(project, "run", "--fixture", "list-directory", "--no-cassettes", env=_live_env(agent))
    assert done.returncode == 0, done.stderr
    assert "running 1 fixture" in done.stderr and NOTE not in done.stderr


# --last-failed -----------------------------------------------------------------------------------------


def test_last_failed_reruns_what_did_not_pass(mock_project: Path) -> None:
    first = replio(mock_project, "run", "--output", "json", "--last-failed", "--no-bundled")
    assert ran(first) == LOCAL
    assert "replio: --last-failed: no previous run of this project is recorded; running the 3 fixtures selected\n" \
        in first.stderr
    again = replio(mock_project, "run", "--output", "json", "--last-failed", "--no-bundled")
    assert ran(again) == ["grep-local"]
    assert "replio: --last-failed: running the 1 fixture that did not pass last time (grep-local)\n" in again.stderr

    write_json(mock_project / "script.json", {"grep-local": [turn(call("grep", pattern="x")), turn(text="none")],
                                              "*": [turn(text="Done.")]})
    assert ran(replio(mock_project, "run", "--output", "json", "--last-failed", "--no-bundled")) == ["grep-local"]
    fixed = replio(mock_project, "run", "--output", "json", "--last-failed", "--no-bundled")
    assert ran(fixed) == LOCAL
    assert "no fixture failed in the previous run; running the 3 fixtures selected" in fixed.stderr


def test_last_failed_in_diff_and_with_a_selection(mock_project: Path) -> None:
    assert ran(replio(mock_project, "run", "--output", "json", "--no-bundled")) == LOCAL
    done = replio(mock_project, "diff", "--last-failed", "--no-bundled")
    assert "running the 1 fixture that did not pass last time (grep-local)" in done.stderr
    assert "grep-local" in done.stdout and "find-local" not in done.stdout
    done = replio(mock_project, "run", "--output", "json", "--last-failed", "--tag", "find")
    assert ran(done) == ["find-local"]
    assert "the 1 fixture that did not pass last time is not selected; running the 1 fixture selected" in done.stderr


# nearest names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "words"), [
    (["--provider", "olama:qwen2.5"], "unknown provider 'olama'; did you mean 'ollama'? known providers: "),
    (["--compare", "mock,opnai:gpt-4o"], "unknown provider 'opnai'; did you mean 'openai'? "),
    (["--tools", "defualt"], "; did you mean 'default'? known tool sets: default"),
])
def test_a_mistyped_provider_or_tool_set_suggests_the_nearest(mock_project: Path, args: list[str], words: str) -> None:
    assert words in error(replio(mock_project, "run", "--fixture", "other", *args))
