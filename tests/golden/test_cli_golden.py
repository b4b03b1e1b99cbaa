"""Goldens through the CLI: approve, replay without drift, drift fails, error never approved, orphans."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
from tests.support.project import PLANS, run_args


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _golden(project: Path, fixture: str) -> Path:
    return project / "golden" / "openai" / "test-model" / f"{fixture}.json"


def test_update_golden_round_trip(project: Path, agent: LLMServer) -> None:
    code, out, err = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))
    assert code == 0
    assert json.loads(out)["summary"]["new"] == 0  # judged in the approved state
    assert "goldens approved for openai:test-model: 2 created, 0 updated, 0 unchanged" in err
    assert _golden(project, "alpha").is_file() and _golden(project, "beta").is_file()

    code, out, _ = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0
    run = json.loads(out)
    assert [f["drift"] for f in run["fixtures"]] == [[], []]
    assert run["summary"]["drifted"] == 0 and run["summary"]["new"] == 0

    code, out, _ = _run("eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
                        "--record-mode", "none", "--update-golden")
    assert "golden unchanged" not in out  # only counted
    assert "goldens approved for openai:test-model: 0 created, 0 updated, 2 unchanged" in out


def test_drift_fails_and_is_shown_under_the_table(project: Path, agent: LLMServer) -> None:
    _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))
    golden = _golden(project, "alpha")
    data = json.loads(golden.read_text())
    data["turns"][0][0]["arguments"]["path"] = "old.txt"
    golden.write_text(json.dumps(data))

    code, out, _ = _run("eval", "--path", str(project), "run", "--fixture", "alpha", "--record-mode", "none")
    assert code == 1
    assert "drift from golden (1 change)" in out
    assert 'turns[0][0].arguments.path argument_changed: "old.txt" -> "notes.txt"' in out

    code, out, _ = _run("eval", "--path", str(project), "diff", "--fixture", "alpha")
    assert code == 1 and "argument_changed" in out

    # Approving the drift judges the approved state: `run --update-golden && git commit` works.
    code, out, _ = _run("eval", "--path", str(project), "run", "--fixture", "alpha", "--record-mode", "none",
                        "--update-golden")
    assert code == 0, out
    assert "golden updated: openai:test-model alpha" in out
    assert "goldens approved for openai:test-model: 0 created, 1 updated, 0 unchanged" in out
    assert "drift from golden" not in out


def test_new_fixture_fails_only_with_strict(project: Path, agent: LLMServer) -> None:
    code, out, _ = _run(*run_args(project, "--base-url", f"{agent.url}/v1"))
    assert code == 0 and [f["drift"] for f in json.loads(out)["fixtures"]] == [None, None]
    code, _, _ = _run(*run_args(project, "--record-mode", "none", "--strict"))
    assert code == 1


def test_error_fixture_is_never_approved(project: Path, agent: LLMServer) -> None:
    (project / "cassettes" / "openai" / "test-model").mkdir(parents=True)  # recorded, but not these fixtures
    code, out, err = _run(*run_args(project, "--record-mode", "none", "--update-golden"))
    assert code == 1
    assert "golden refused: openai:test-model alpha" in err
    assert not _golden(project, "alpha").exists()


def test_update_golden_only_for_chosen_fixture(project: Path, agent: LLMServer) -> None:
    code, _, _ = _run("eval", "--path", str(project), "run", "--fixture", "beta",
                      "--base-url", f"{agent.url}/v1", "--update-golden")
    assert code == 0
    assert _golden(project, "beta").is_file() and not _golden(project, "alpha").exists()


def test_differing_ids_between_recordings_give_no_drift(project: Path, llm_server: LLMServer) -> None:
    agent = openai_agent(PLANS)

    def random_ids(seen):
        reply = agent(seen)
        reply.json["id"] = f"chatcmpl-{random.random()}"
        for call in reply.json["choices"][0]["message"].get("tool_calls") or []:
            call["id"] = f"call_{random.getrandbits(64):x}"
        return reply

    llm_server.handler = random_ids
    _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--update-golden"))
    code, out, _ = _run(*run_args(project, "--base-url", f"{llm_server.url}/v1", "--record-mode", "all"))
    assert code == 0
    assert [f["drift"] for f in json.loads(out)["fixtures"]] == [[], []]


def test_status_lists_and_prunes_orphans(project: Path, agent: LLMServer) -> None:
    _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))
    (project / ".replio" / "eval" / "beta.json").unlink()
    code, out, _ = _run("eval", "--path", str(project), "status", "--output", "json")
    assert code == 0
    inv = json.loads(out)
    orphans = sorted(Path(p).name for p in inv["orphans"])
    assert orphans == ["beta.json", "beta.yaml"]
    alpha = next(e for e in inv["entries"] if e["fixture"] == "alpha")
    assert alpha["cassette"] and alpha["golden"] and alpha["age_days"] == 0

    code, _, err = _run("eval", "--path", str(project), "status", "--prune")
    assert code == 0 and err.count("removed") == 2
    assert not _golden(project, "beta").exists()
    assert _golden(project, "alpha").exists()
