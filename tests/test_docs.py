"""The documents a user copies from work as written: the CI workflow installs and runs like the README."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "docs" / "github-actions.yml"


def _steps() -> dict[str, str]:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    (job,) = jobs.values()
    return {step["name"]: step["run"] for step in job["steps"] if "run" in step}


def test_the_workflow_installs_the_way_the_readme_does() -> None:
    install = _steps()["Install"]
    readme_first = next(line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("pip "))
    assert readme_first.startswith(install.strip() + " ")  # `pip install -e .`, a path, not an index name


def test_the_workflow_replay_step_runs_as_written(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    replio = str(Path(sys.executable).with_name("replio"))
    args = shlex.split(_steps()["Replay the fixtures"])
    assert args[0] == "replio"
    env = {**os.environ, "CI": "true"}
    done = subprocess.run([replio, *args[1:]], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ET.parse(project / "replio-junit.xml").getroot().get("failures") == "0"
    assert (project / "replio.json").is_file()
