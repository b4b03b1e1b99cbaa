"""A third-party plugin installed with an entry point in the `replio` group is found by the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PLUGIN = '''
from replio_replay import hookimpl

@hookimpl
def register_fixtures(fixtures):
    """Add one fixture and override a bundled one."""
    fixtures["team-check"] = {"task": "Which port?", "description": "from the team plugin"}
    fixtures["grep-symbol"] = {"task": "Find it.", "description": "the team's grep-symbol"}
'''


def _install_plugin(site: Path) -> None:
    """What pip leaves behind for a package with an entry point: a module and its dist-info."""
    (site / "team_evals.py").write_text(PLUGIN)
    info = site / "team_evals-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-evals\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[replio]\nteam-evals = team_evals\n")


def test_entry_point_plugin_is_listed_and_wins_over_the_bundled_catalog(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install_plugin(site)
    project = tmp_path / "project"
    (project / ".replio" / "eval").mkdir(parents=True)
    (project / ".replio" / "eval" / "team-check.json").write_text(json.dumps({"task": "Local wins."}))
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
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
    site = tmp_path / "site"
    site.mkdir()
    (site / "team_tools.py").write_text(TOOL_PLUGIN)
    info = site / "team_tools-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-tools\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[replio]\nteam-tools = team_tools\n")
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
    (project / ".replio" / "config.json").write_text(json.dumps(
        {"provider": "mock", "providers": {"mock": {"script": "script.json"}}}))
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
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
