"""The documents a user copies from work as written: the CI workflows install and run like the README."""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

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


SHARDS = REPO / "docs" / "github-actions-shards.yml"


def _job(name: str) -> dict[str, Any]:
    return yaml.safe_load(SHARDS.read_text())["jobs"][name]


def _run(job: dict[str, Any], step: str) -> str:
    return next(s["run"] for s in job["steps"] if s.get("name") == step)


def _uses(job: dict[str, Any], action: str) -> dict[str, Any]:
    return next(s["with"] for s in job["steps"] if s.get("uses", "").startswith(action))


def test_the_sharded_workflow_installs_and_replays_like_the_single_one() -> None:
    replay, merge = _job("replay"), _job("merge")
    assert _run(replay, "Install") == _run(merge, "Install") == _steps()["Install"]
    assert merge["needs"] == "replay" and replay["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    single = _steps()["Replay the fixtures"].split("--junit-xml")[0].split()
    assert _run(replay, "Replay one shard").split()[:len(single)] == single  # the same replay, then its shard


def test_the_sharded_workflow_runs_as_written_and_merges_into_the_single_run(tmp_path: Path) -> None:
    """Each shard job in turn in one clone, its artifact moved where the download step puts it; then
    the merge and the report steps: bash runs each `run` as written, with `replio` first on PATH."""
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    env = {**os.environ, "CI": "true", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def bash(command: str) -> subprocess.CompletedProcess[str]:
        assert "${{" not in command, command
        return subprocess.run(["bash", "-ec", command], cwd=project, capture_output=True, text=True, env=env,
                              timeout=120)

    replay, merge = _job("replay"), _job("merge")
    upload, download = _uses(replay, "actions/upload-artifact"), _uses(merge, "actions/download-artifact")
    for shard in replay["strategy"]["matrix"]["shard"]:
        done = bash(_run(replay, "Replay one shard").replace("${{ matrix.shard }}", str(shard)))
        assert done.returncode == 0, done.stdout + done.stderr
        artifact = project / download["path"] / upload["name"].replace("${{ matrix.shard }}", str(shard))
        assert fnmatch.fnmatch(artifact.name, download["pattern"])
        artifact.mkdir(parents=True)
        (project / upload["path"]).rename(artifact / upload["path"])
    for step in ("Merge the shards", "Build the HTML report"):
        done = bash(_run(merge, step))
        assert done.returncode == 0, done.stdout + done.stderr
    whole = bash("replio eval --path . run --record-mode none --strict --output json")
    assert whole.returncode == 0, whole.stderr
    merged, single = json.loads((project / "replio.json").read_text()), json.loads(whole.stdout)
    assert merged["fixtures"] == single["fixtures"] and merged["summary"] == single["summary"]
    assert ET.parse(project / "replio-junit.xml").getroot().get("tests") == str(len(single["fixtures"]))
    assert all(f'data-fixture="{f["id"]}"' in (project / "replio.html").read_text() for f in single["fixtures"])


def _python_api_example() -> str:
    """The code block of the README's "Python API" section."""
    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_python_api_example_runs_as_written_and_agrees_with_the_cli(tmp_path: Path) -> None:
    """The README's example, run in a clone of the repository, prints what `run --output json` holds."""
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    example = tmp_path / "example.py"
    example.write_text(_python_api_example(), encoding="utf-8")
    done = subprocess.run([sys.executable, str(example)], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    replio = str(Path(sys.executable).with_name("replio"))
    cli = subprocess.run([replio, "eval", "--path", ".", "run", "--record-mode", "none", "--output", "json"],
                         cwd=project, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    data = json.loads(cli.stdout)
    expected = [f"{r['provider']}:{r['model']} tools={r['tools']}: {sum(f['pass'] for f in r['fixtures'])} of "
                f"{len(r['fixtures'])} passed" for r in data.get("runs", [data])]
    assert done.stdout.splitlines() == expected


def test_the_performance_how_tos_python_example_runs_as_written_and_agrees_with_the_cli(tmp_path: Path) -> None:
    """docs/how-to/measure-performance.md's script, run in a clone of the repository with CI set, prints
    the fixtures and exit code of `run --output json`, and its process did freeze what it made."""
    page = (REPO / "docs" / "how-to" / "measure-performance.md").read_text(encoding="utf-8")
    script = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert "gc.freeze()" in script
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    (tmp_path / "replay.py").write_text(script + "\nimport gc, sys\nprint(gc.get_freeze_count() > 0, file=sys.stderr)\n",
                                        encoding="utf-8")
    env = {**os.environ, "CI": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(tmp_path / "replay.py")], cwd=project, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.splitlines()[-1] == "True"
    replio = str(Path(sys.executable).with_name("replio"))
    cli = subprocess.run([replio, "eval", "--path", ".", "run", "--output", "json"], cwd=project,
                         capture_output=True, text=True, timeout=120, env=env)
    data = json.loads(cli.stdout)
    fixtures = sum(len(r["fixtures"]) for r in data.get("runs", [data]))
    assert done.stdout.splitlines() == [f"{fixtures} fixtures, exit code {cli.returncode}"]
