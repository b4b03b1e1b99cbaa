"""status and --prune: odd files are named errors or ignored, and prune deletes only what replio wrote."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from replio_replay.cli import main
from tests.support.llm_server import LLMServer
from tests.support.project import run_args


def _status(project: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["eval", "--path", str(project), "status", *args])


def _recorded(project: Path, agent: LLMServer) -> Path:
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))
    assert result.exit_code == 0, result.output
    return project / "cassettes" / "openai" / "test-model"


def test_prune_leaves_files_replio_did_not_write(project: Path, agent: LLMServer) -> None:
    _recorded(project, agent)
    foreign = [
        project / "cassettes" / ".github" / "workflows" / "ci.yaml",
        project / "cassettes" / "node_modules" / "x" / "package.yaml",
        project / "golden" / "node_modules" / "x" / "package.json",
    ]
    for path in foreign:
        path.parent.mkdir(parents=True)
        path.write_text("name: not replio's\n" if path.suffix == ".yaml" else '{"name": "x"}\n')
    gone_cassette = project / "cassettes" / "openai" / "test-model" / "gone.yaml"
    gone_cassette.write_text((project / "cassettes" / "openai" / "test-model" / "alpha.yaml").read_text())
    result = _status(project, "--prune", "--output", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["orphans"] == [str(gone_cassette)]
    assert not gone_cassette.exists()
    assert all(path.exists() for path in foreign)


def test_prune_is_refused_while_a_fixture_file_is_broken(project: Path, agent: LLMServer) -> None:
    folder = _recorded(project, agent)
    (project / ".replio" / "eval" / "alpha.json").write_text('{"task": "trailing comma",}')
    result = _status(project, "--prune")
    assert result.exit_code == 2
    assert "not pruning: fixture files are broken" in result.stderr and "alpha.json" in result.stderr
    assert (folder / "alpha.yaml").exists()
    assert (project / "golden" / "openai" / "test-model" / "alpha.json").exists()


def test_odd_files_never_stop_status(project: Path, agent: LLMServer) -> None:
    folder = _recorded(project, agent)
    (folder / "looks-like.yaml").mkdir()  # a folder named like a cassette
    alpha = folder / "alpha.yaml"
    alpha.write_text(alpha.read_text().replace("recorded: '", "recorded: 'not-a-date-", 1))
    result = _status(project, "--output", "json")
    assert result.exit_code == 0, result.output
    entries = {e["fixture"]: e for e in json.loads(result.stdout)["entries"] if e["fixture"] in ("alpha", "beta")}
    assert entries["alpha"]["age_days"] is None and entries["beta"]["age_days"] == 0
    table = _status(project)
    assert table.exit_code == 0 and "alpha" in table.stdout


def test_models_with_similar_names_never_share_a_file(tmp_path: Path) -> None:
    from replio_replay.fixtures.layout import CASSETTE, RunKey

    paths = {RunKey("ollama", model).path(tmp_path, "fx", CASSETTE) for model in
             ("qwen2.5:7b", "qwen2.5/7b", "qwen2.5_7b", "qwen2.5 7b", ".qwen")}
    assert len(paths) == 5
    assert all(p.parent.parent == tmp_path / "ollama" for p in paths)
