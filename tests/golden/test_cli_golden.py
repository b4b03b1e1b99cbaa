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


def _more_tokens(agent: LLMServer, factor: float) -> None:
    """The same behaviour, the token counts scaled (as after a tool description grew)."""
    plain = openai_agent(PLANS)

    def handle(seen):
        reply = plain(seen)
        usage = reply.json["usage"]
        reply.json["usage"] = {k: int(v * factor) for k, v in usage.items()}
        return reply

    agent.handler = handle


def test_token_counts_alone_do_not_drift(project: Path, agent: LLMServer) -> None:
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    _more_tokens(agent, 1.5)
    code, out, err = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "all"))
    assert code == 0, err
    alpha = json.loads(out)["fixtures"][0]
    assert alpha["drift"] == []
    assert [(c["path"], c["kind"]) for c in alpha["drift_info"]] == [("metrics.tokens", "metric_changed")]
    code, out, _ = _run("eval", "--path", str(project), "diff", "--fixture", "alpha")
    assert code == 0
    assert out.splitlines()[1:3] == [
        "  alpha: no drift from golden; token count changed (reported, not drift); "
        "requests as recorded",
        "    ~ info: metrics.tokens metric_changed: 221 -> 331",
    ]


def test_a_tokens_tolerance_makes_a_larger_change_drift(project: Path, agent: LLMServer) -> None:
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "tokens_tolerance": 0.2}))
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    _more_tokens(agent, 1.1)
    code, out, _ = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "all"))
    assert code == 0 and json.loads(out)["fixtures"][0]["drift"] == []
    _more_tokens(agent, 1.5)
    code, out, err = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "all"))
    assert code == 1
    assert [c["path"] for c in json.loads(out)["fixtures"][0]["drift"]] == ["metrics.tokens"]
    assert err.splitlines()[-1] == ("replio: exit 1: 2 fixtures drifted from the golden (the drift is shown "
                                    "above): alpha, beta")


def test_a_fixture_that_ended_in_error_reports_its_error_not_a_drift(project: Path, agent: LLMServer,
                                                                      closed_port: int) -> None:
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    dead = f"http://127.0.0.1:{closed_port}/v1"
    code, out, err = _run("eval", "--path", str(project), "run", "--fixture", "alpha", "--base-url", dead,
                          "--record-mode", "all")
    assert code == 1
    assert "  alpha: error: " in out and "drift" not in out.split("\n  alpha: error: ")[1]
    row = next(line for line in out.splitlines() if line.startswith("alpha "))
    assert row.split()[1:3] == ["error", "FAIL"] and "new" not in row  # not compared: no drift cell
    assert err.splitlines()[-1] == "replio: exit 1: 1 fixture ended in error (or cancelled): alpha"
    code, out, _ = _run(*run_args(project, "--base-url", dead, "--record-mode", "all"))
    assert [f["drift"] for f in json.loads(out)["fixtures"]] == [None, None]
    assert json.loads(out)["summary"]["drifted"] == 0
    code, out, _ = _run("eval", "--path", str(project), "diff", "--fixture", "alpha", "--base-url", dead,
                        "--record-mode", "all")
    assert code == 1
    assert out.splitlines()[1].startswith("  alpha: error, not compared with its golden: ")
    assert len(out.splitlines()) == 2


def test_diff_says_golden_and_request_drift_in_one_line(project: Path, agent: LLMServer) -> None:
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    fixture = project / ".replio" / "eval" / "alpha.json"
    fixture.write_text(json.dumps({**json.loads(fixture.read_text()), "task": "ALPHA: read notes.txt, please."}))
    code, out, err = _run("eval", "--path", str(project), "diff", "--fixture", "alpha", "--fixture", "beta")
    assert code == 0, err
    assert out.splitlines() == [
        "openai:test-model",
        "  alpha: no drift from golden; request drift (1 change; re-record with --record-mode all --fixture alpha)",
        '    ~ request: messages[1].content changed: "ALPHA: read notes.txt and tell me what it says." -> '
        '"ALPHA: read notes.txt, please."',
        "  beta: no drift from golden; requests as recorded",
    ]


def test_record_mode_stale_records_only_what_changed(project: Path, agent: LLMServer) -> None:
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    cassettes = project / "cassettes" / "openai" / "test-model"
    beta_before = (cassettes / "beta.yaml").read_bytes()
    fixture = project / ".replio" / "eval" / "alpha.json"
    fixture.write_text(json.dumps({**json.loads(fixture.read_text()), "task": "ALPHA: read notes.txt, please."}))
    agent.requests.clear()

    code, out, err = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "stale"))
    assert code == 0, err
    assert "recording 1 fixture" in err
    tasks = {next(m["content"] for m in seen.json()["messages"] if m["role"] == "user") for seen in agent.requests}
    assert tasks == {"ALPHA: read notes.txt, please."}  # only the changed fixture reached the server
    alpha, beta = json.loads(out)["fixtures"]
    assert alpha["request_drift"] is None and beta["request_drift"] == []  # recorded, replayed
    assert (cassettes / "beta.yaml").read_bytes() == beta_before
    assert "ALPHA: read notes.txt, please." in (cassettes / "alpha.yaml").read_text()

    agent.requests.clear()
    code, out, err = _run(*run_args(project, "--record-mode", "none", "--strict"))
    assert code == 0, err  # both cassettes replay, as recorded, with no drift
    assert [f["request_drift"] for f in json.loads(out)["fixtures"]] == [[], []]
    code, out, _ = _run("eval", "--path", str(project), "status")
    assert "stale cassette" not in out
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "stale"))[0] == 0
    assert agent.requests == []  # nothing stale any more: all replayed


def test_record_mode_stale_records_again_what_replays_with_request_drift(project: Path, agent: LLMServer) -> None:
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))[0] == 0
    config = project / ".replio" / "config.json"  # a provider setting: the requests change, no header does
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "providers": {"openai": {"temperature": 0.5}}}))
    agent.requests.clear()
    code, out, err = _run("eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
                          "--base-url", f"{agent.url}/v1", "--record-mode", "stale", "--strict")
    assert code == 0, err
    assert "replio: note: recorded again, as their replay showed request drift: alpha, beta" in err
    assert agent.requests and {seen.json()["temperature"] for seen in agent.requests} == {0.5}
    assert "request drift" not in out  # the results are the new recording's
    agent.requests.clear()
    assert _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "stale", "--strict"))[0] == 0
    assert agent.requests == []
