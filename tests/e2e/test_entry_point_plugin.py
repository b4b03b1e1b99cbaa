"""A third-party plugin installed with an entry point in the `replio` group is used by a project that names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.plugins import install_plugin

PLUGIN = '''
from replio_replay import hookimpl

@hookimpl
def register_fixtures(fixtures):
    """Add one fixture and override a bundled one."""
    fixtures["team-check"] = {"task": "Which port?", "description": "from the team plugin"}
    fixtures["grep-symbol"] = {"task": "Find it.", "description": "the team's grep-symbol"}
'''


def _env(tmp_path: Path) -> dict[str, str]:
    """The plugins under tmp_path/site importable, before the replio under test."""
    path = os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "XDG_CACHE_HOME": str(tmp_path / "cache")}


def _config(project: Path, data: dict[str, object]) -> None:
    (project / ".replio").mkdir(parents=True, exist_ok=True)
    (project / ".replio" / "config.json").write_text(json.dumps(data))


def test_entry_point_plugin_is_listed_and_wins_over_the_bundled_catalog(tmp_path: Path) -> None:
    install_plugin(tmp_path / "site", "team_evals", PLUGIN)
    project = tmp_path / "project"
    (project / ".replio" / "eval").mkdir(parents=True)
    (project / ".replio" / "eval" / "team-check.json").write_text(json.dumps({"task": "Local wins."}))
    _config(project, {"plugins": ["team-evals"]})
    env = _env(tmp_path)
    replio = str(Path(sys.executable).with_name("replio"))
    done = subprocess.run([replio, "eval", "--path", str(project), "list", "--output", "json"],
                          capture_output=True, text=True, env=env, check=True)
    by_id = {f["id"]: f for f in json.loads(done.stdout)["fixtures"]}
    assert by_id["grep-symbol"] == {"id": "grep-symbol", "source": "team-evals",
                                    "description": "the team's grep-symbol", "tags": []}
    assert by_id["team-check"]["source"] == "local"
    assert by_id["read-file-lines"]["source"] == "replio-core-eval"


TOOL_PLUGIN = '''
from typing import Annotated

from pydantic import Field

from replio_replay import ToolContext, ToolFailure, hookimpl, tool


@tool(category="read")
def word_count(path: Annotated[str, Field(description="A file in the project.")], ctx: ToolContext) -> str:
    """Count the words of a file in the project."""
    real = ctx.path(path)
    if not real.is_file():
        raise ToolFailure(f"no file {path}")
    return str(len(real.read_text().split()))


@hookimpl
def register_tools(tools):
    """Offer the team's word counter."""
    tools["word_count"] = word_count
'''


def test_entry_point_plugin_tools_are_offered_and_run_in_the_sandbox(tmp_path: Path) -> None:
    install_plugin(tmp_path / "site", "team_tools", TOOL_PLUGIN)
    project = tmp_path / "project"
    (project / ".replio" / "eval").mkdir(parents=True)
    (project / ".replio" / "eval" / "count.json").write_text(json.dumps({
        "task": "How many words are in notes.txt?", "files": {"notes.txt": "one two three\n"},
        "expected": ["word_count", "word_count"], "verifier": {"args": {"word_count": {"path": "notes.txt"}}},
    }))
    script = {"count": [{"tool_calls": [{"name": "word_count", "arguments": {"path": "notes.txt"}},
                                        {"name": "word_count", "arguments": {"path": "../outside.txt"}}]},
                        {"text": "Three."}]}
    (project / "script.json").write_text(json.dumps(script))
    _config(project, {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "plugins": ["team-tools"]})
    env = _env(tmp_path)
    replio = str(Path(sys.executable).with_name("replio"))
    done = subprocess.run([replio, "eval", "--path", str(project), "run", "--fixture", "count", "--output", "json"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    (fixture,) = json.loads(done.stdout)["fixtures"]
    assert [c["result"] for c in fixture["trace"]] == [
        "3", "Error: path '../outside.txt' is outside the project; use a path relative to the project root",
    ]
    assert fixture["pass"] is True and fixture["accuracy"] == 1.0
    assert done.stderr == ""


REPO = Path(__file__).resolve().parents[2]


def _replio(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    replio = str(Path(sys.executable).with_name("replio"))
    return subprocess.run([replio, "eval", "--path", str(project), *args], capture_output=True, text=True, env=env,
                          cwd=project.parent, timeout=300)


def test_an_installed_plugin_a_project_does_not_name_changes_none_of_its_requests(tmp_path: Path) -> None:
    """Installed beside replio, a tool plugin used to be offered in every project: the repository's
    own replay drifted (`+ tools[word_count] added`). Unnamed, it is left out, and said so."""
    install_plugin(tmp_path / "site", "team_tools", TOOL_PLUGIN)
    env = {**_env(tmp_path), "CI": "true"}
    done = _replio(REPO, "run", "--strict", "--output", "json", env=env)
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]
    assert all(f["request_drift"] == [] for f in json.loads(done.stdout)["fixtures"])
    notice = ('replio: installed plugins not used by this project: team-tools; to use them, name them '
              'in .replio/config.json as "plugins": ["team-tools"] ("plugins": [] says none)')
    assert done.stderr == notice + "\n"
    tests = subprocess.run([sys.executable, "-m", "pytest", "--replio-path", str(REPO), "--replio-tools", "default",
                            "--replio-strict", "-p", "no:cacheprovider", "-q"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert notice in tests.stdout.splitlines()


def test_list_and_status_say_which_plugins_are_active(tmp_path: Path) -> None:
    install_plugin(tmp_path / "site", "team_tools", TOOL_PLUGIN)
    install_plugin(tmp_path / "site", "team_evals", PLUGIN)
    env = _env(tmp_path)
    project = tmp_path / "project"
    _config(project, {"plugins": ["team-evals"]})
    both = {"active": ["team-evals"], "installed": ["team-evals", "team-tools"]}
    said = {}
    for command in ("list", "status"):
        table = _replio(project, command, env=env)
        assert (table.returncode, table.stderr) == (0, ""), table.stderr
        assert "plugins: team-evals (active), team-tools (installed, not used)\n" in table.stdout
        said[command] = json.loads(_replio(project, command, "--output", "json", env=env).stdout)
        assert said[command]["plugins"] == both
    assert "team-check" in {f["id"] for f in said["list"]["fixtures"]}
    _config(project, {})
    unnamed = _replio(project, "list", "--output", "json", env=env)
    assert json.loads(unnamed.stdout)["plugins"] == {"active": [], "installed": ["team-evals", "team-tools"]}
    assert "team-check" not in {f["id"] for f in json.loads(unnamed.stdout)["fixtures"]}
    assert unnamed.stderr.startswith("replio: installed plugins not used by this project: team-evals, team-tools;")
    _config(project, {"plugins": []})
    assert _replio(project, "list", env=env).stderr == ""


def test_a_plugin_name_that_is_not_installed_is_one_line_naming_the_installed_ones(tmp_path: Path) -> None:
    install_plugin(tmp_path / "site", "team_tools", TOOL_PLUGIN)
    project = tmp_path / "project"
    _config(project, {"provider": "mock", "plugins": ["team-tool"]})
    for command in ("list", "run", "status"):
        done = _replio(project, command, env=_env(tmp_path))
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr == (
            "replio: error: .replio/config.json: plugins: no installed plugin 'team-tool'; did you mean "
            "'team-tools'? installed: team-tools (entry points in the 'replio' group); install its package in "
            "this Python environment or remove the name\n"), command
