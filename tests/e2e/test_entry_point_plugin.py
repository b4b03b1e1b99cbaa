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
                                    "description": "the team's grep-symbol"}
    assert by_id["team-check"]["source"] == "local"
    assert by_id["read-file-lines"]["source"] == "replio-core-eval"
