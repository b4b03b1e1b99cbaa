"""The pytest plugin through pytester: collection, names, outcomes, approval, -k and -n 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# Imported up front: pytester's in-process runs drop modules first imported inside them, and a
# second copy of yaml or vcr would not recognise the first one's objects. httpx imports httpcore
# lazily and keeps a map keyed on its exception classes, so a second httpcore would let a raw
# httpcore.ConnectError escape every later test in this worker. hypothesis: its pytest plugin
# imports it at every run's terminal summary, and the 75 modules dropped after each run would be
# imported and assertion-rewritten again by the next (about a second of CPU a run).
import httpcore  # noqa: F401
import hypothesis  # noqa: F401
import pytest
import yaml  # noqa: F401  (a replay may be the first to import it, inside a pytester run)
from click.testing import CliRunner

import replio_replay.pytest_plugin  # noqa: F401
import replio_replay.recording.session  # noqa: F401
import replio_replay.recording.yamlcodec  # noqa: F401
import replio_replay.run.suite  # noqa: F401
from replio_replay.cli import main
from replio_replay.plan.shards import shard_of
from tests.support.agents import openai_agent
from tests.support.isolation import copy_of, isolated
from tests.support.llm_server import LLMServer
from tests.support.project import PLANS, run_args, write_project

# One xdist worker runs the module (--dist loadgroup): its recording, made once for the module,
# is made once, not once by each worker that runs one of its tests.
pytestmark = pytest.mark.xdist_group("pytest-plugin")


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with cassettes and goldens recorded from the scripted agent, once for the module."""
    with isolated(tmp_path_factory), LLMServer() as agent:
        agent.handler = openai_agent(PLANS)
        project = write_project(tmp_path_factory.mktemp("recording") / "proj")
        result = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"))
    assert result.exit_code == 0, result.output
    return project


@pytest.fixture
def recorded(recording: Path, tmp_path: Path) -> Path:
    """The test's own copy of the recorded project (the server that answered is closed)."""
    return copy_of(recording, tmp_path)


def _ids(project: Path) -> list[str]:
    return ["--replio-path", str(project), "-k", "alpha or beta", "-p", "no:cacheprovider"]


def test_collects_one_item_per_fixture_and_provider(pytester: pytest.Pytester, recorded: Path) -> None:
    result = pytester.runpytest("--collect-only", "-q", *_ids(recorded))
    result.stdout.fnmatch_lines(["replio::alpha[[]openai:test-model[]]", "replio::beta[[]openai:test-model[]]"])


def test_the_config_can_leave_the_bundled_catalog_out(pytester: pytest.Pytester, recorded: Path) -> None:
    config = recorded / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "bundled": False}))
    result = pytester.runpytest("--collect-only", "-q", "--replio-path", str(recorded), "-p", "no:cacheprovider")
    collected = [line for line in result.stdout.lines if line.startswith("replio::")]
    assert collected == ["replio::alpha[openai:test-model]", "replio::beta[openai:test-model]"]


def test_replay_passes_with_summary(pytester: pytest.Pytester, recorded: Path) -> None:
    result = pytester.runpytest(*_ids(recorded))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["replio: 2 fixtures replayed, 0 drifted, 0 errors, 0 goldens written"])


def test_k_selects_by_fixture_and_model(pytester: pytest.Pytester, recorded: Path) -> None:
    by_fixture = pytester.runpytest("--replio-path", str(recorded), "-k", "beta", "-p", "no:cacheprovider")
    by_fixture.assert_outcomes(passed=1)
    by_model = pytester.runpytest("--replio-path", str(recorded), "-k", "test-model and alpha",
                                  "-p", "no:cacheprovider")
    by_model.assert_outcomes(passed=1)


def test_drift_fails_with_the_report_as_text(pytester: pytest.Pytester, recorded: Path) -> None:
    golden = recorded / "golden" / "openai" / "test-model" / "alpha.json"
    data = json.loads(golden.read_text())
    data["answer"] = "something else"
    golden.write_text(json.dumps(data))
    result = pytester.runpytest(*_ids(recorded))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*alpha: drift from golden (1 change)", '*answer answer_changed: "something else"*'])
    assert "Traceback" not in result.stdout.str()


def test_error_fails_with_the_message(pytester: pytest.Pytester, recorded: Path) -> None:
    (recorded / "cassettes" / "openai" / "test-model" / "beta.yaml").write_text("interactions: [\n")
    result = pytester.runpytest(*_ids(recorded))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*beta: error: cassette*does not parse at line*"])


def test_verifier_failure_is_a_measurement_unless_required(pytester: pytest.Pytester, recorded: Path) -> None:
    fixture = recorded / ".replio" / "eval" / "alpha.json"
    data = json.loads(fixture.read_text())
    data["verifier"] = {"must_include": ["grep"]}
    fixture.write_text(json.dumps(data))
    # the fixture changed, so its golden's pass drifts: approving it passes (the approved state is judged)
    pytester.runpytest(*_ids(recorded), "--replio-update-golden").assert_outcomes(passed=2)
    pytester.runpytest(*_ids(recorded)).assert_outcomes(passed=2)
    required = pytester.runpytest(*_ids(recorded), "--replio-require-pass")
    required.assert_outcomes(passed=1, failed=1)
    required.stdout.fnmatch_lines(["*alpha: the verifier failed: must_include: grep was not called"])


def test_strict_fails_a_fixture_without_golden(pytester: pytest.Pytester, recorded: Path) -> None:
    (recorded / "golden" / "openai" / "test-model" / "beta.json").unlink()
    pytester.runpytest(*_ids(recorded)).assert_outcomes(passed=2)
    strict = pytester.runpytest(*_ids(recorded), "--replio-strict")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(["*beta: no golden yet*"])


def test_update_golden_writes_them(pytester: pytest.Pytester, recorded: Path) -> None:
    folder = recorded / "golden" / "openai" / "test-model"
    for path in folder.glob("*.json"):
        path.unlink()
    result = pytester.runpytest(*_ids(recorded), "--replio-update-golden")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["replio: 2 fixtures replayed, 0 drifted, 0 errors, 2 goldens written"])
    assert sorted(p.name for p in folder.glob("*.json")) == ["alpha.json", "beta.json"]


def test_xdist_gives_the_same_outcomes(pytester: pytest.Pytester, recorded: Path) -> None:
    golden = recorded / "golden" / "openai" / "test-model" / "beta.json"
    golden.unlink()
    result = pytester.runpytest_subprocess(*_ids(recorded), "-n", "2", "--replio-update-golden")
    result.assert_outcomes(passed=2)
    assert golden.is_file()
    serial = pytester.runpytest(*_ids(recorded))
    serial.assert_outcomes(passed=2)


def test_every_recorded_tool_set_is_collected_and_replayed(pytester: pytest.Pytester, project: Path,
                                                            agent: LLMServer) -> None:
    variant = project / ".replio" / "tools" / "terse.json"
    variant.parent.mkdir()
    variant.write_text(json.dumps({"override": {"glob": {"description": "Find files by pattern."}}}))
    args = [*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"), "--tools", "default,terse"]
    assert CliRunner().invoke(main, args).exit_code == 0
    agent.close()
    collected = pytester.runpytest("--collect-only", "-q", *_ids(project))
    collected.stdout.fnmatch_lines([
        "replio::alpha[[]openai:test-model[]]", "replio::beta[[]openai:test-model[]]",
        "replio::alpha[[]openai:test-model tools=terse[]]", "replio::beta[[]openai:test-model tools=terse[]]",
    ])
    pytester.runpytest(*_ids(project)).assert_outcomes(passed=4)
    only = pytester.runpytest(*_ids(project), "--replio-tools", "terse", "--replio-strict")
    only.assert_outcomes(passed=2)
    variant.write_text(json.dumps({"override": {"glob": {"description": "Changed again."}}}))
    drifted = pytester.runpytest(*_ids(project), "--replio-tools", "terse", "--replio-strict")
    drifted.assert_outcomes(failed=2)
    drifted.stdout.fnmatch_lines(["*beta: request drift (1 change); re-record with --record-mode all "
                                  "--fixture beta --tools terse", "*tools[[]glob[]].description changed*"])


def test_a_tool_set_given_by_path_is_replayed_when_its_path_is_given(pytester: pytest.Pytester, project: Path,
                                                                     agent: LLMServer, tmp_path: Path) -> None:
    lean = tmp_path / "lean.json"  # outside the project: known by a digest of its path
    lean.write_text(json.dumps({"disable": ["web_fetch"]}))
    args = [*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden"), "--tools", f"default,{lean}"]
    assert CliRunner().invoke(main, args).exit_code == 0
    agent.close()
    pytester.runpytest(*_ids(project)).assert_outcomes(passed=2)  # the default set's; none cannot be collected
    named = pytester.runpytest(*_ids(project), "--replio-tools", str(lean), "--replio-strict")
    named.assert_outcomes(passed=2)


def test_a_broken_tool_set_is_one_clear_line(pytester: pytest.Pytester, recorded: Path) -> None:
    (recorded / ".replio" / "tools.json").write_text(json.dumps({"disable": ["grepp"]}))
    result = pytester.runpytest(*_ids(recorded))
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error, as for a broken test file
    result.stdout.fnmatch_lines(["replio: *tools.json: disable: no tool named 'grepp'; did you mean 'grep'?"])
    assert "Traceback" not in result.stdout.str() and "raise " not in result.stdout.str()


def test_shards_collect_each_item_once_between_them(pytester: pytest.Pytester, recorded: Path) -> None:
    def collected(*args: str) -> list[str]:
        result = pytester.runpytest("--collect-only", "-q", "--replio-path", str(recorded), "-p", "no:cacheprovider",
                                    *args)
        return [line for line in result.stdout.lines if line.startswith("replio::")]

    whole = collected()
    parts = [collected("--replio-shard", f"{i}/3") for i in (1, 2, 3)]
    assert sorted(item for part in parts for item in part) == sorted(whole) and len(whole) > 3
    for i, part in enumerate(parts, start=1):
        assert all(shard_of(item.removeprefix("replio::").partition("[")[0], 3) == i for item in part)


def test_a_bad_shard_is_one_clear_line(pytester: pytest.Pytester, recorded: Path) -> None:
    result = pytester.runpytest(*_ids(recorded), "--replio-shard", "4/3")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["replio: --replio-shard '4/3' is not a shard: I must be between 1 and 3 (e.g. 1/3)"])


def test_a_project_folder_that_does_not_exist_is_named(pytester: pytest.Pytester, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    result = pytester.runpytest("--replio-path", str(missing), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"replio: --replio-path {missing}: no such folder; give the project's folder*"])
    assert "cassette" not in result.stdout.str()


def test_a_baseline_and_its_gates_in_the_terminal_summary(pytester: pytest.Pytester, recorded: Path) -> None:
    base = recorded / "base.json"
    saved = CliRunner().invoke(main, [*run_args(recorded, "--record-mode", "none"), "--output-file", str(base)])
    assert saved.exit_code == 0, saved.output
    alpha = recorded / ".replio" / "eval" / "alpha.json"
    alpha.write_text(json.dumps({**json.loads(alpha.read_text()), "verifier": {"answer": {"$contains": "nope"}}}))
    shutil.rmtree(recorded / "golden")  # the approved pass would drift; here only the verdict is measured

    reported = pytester.runpytest(*_ids(recorded), "--replio-baseline", str(base))
    reported.assert_outcomes(passed=2)  # a verifier failure is a measurement; the baseline only reports
    assert reported.ret == 0
    reported.stdout.fnmatch_lines([f"replio: passed in the baseline {base}, fail now: alpha (pass -> FAIL)",
                                   f"replio: openai:test-model: baseline {base} (openai:test-model): "
                                   "pass_rate 1.00 -> 0.50*"])

    gated = pytester.runpytest(*_ids(recorded), "--replio-baseline", str(base), "--replio-max-drop", "pass_rate=0.1",
                               "--replio-fail-under", "pass_rate=0.4")
    gated.assert_outcomes(passed=2)
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    gated.stdout.fnmatch_lines(["replio: gate failed: pass_rate 1.00 -> 0.50 (-0.50 > 0.10)"])
    assert "--fail-under" not in gated.stdout.str()  # that gate held

    bad = pytester.runpytest(*_ids(recorded), "--replio-max-drop", "pass_rat=0.1")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "did you mean 'pass_rate'?" in bad.stderr.str()


def test_a_baseline_with_a_number_out_of_bounds_stops_the_suite_before_it_runs(pytester: pytest.Pytester,
                                                                             recorded: Path) -> None:
    base = recorded / "base.json"
    saved = CliRunner().invoke(main, [*run_args(recorded, "--record-mode", "none"), "--output-file", str(base)])
    assert saved.exit_code == 0, saved.output
    data = json.loads(base.read_text())
    base.write_text(json.dumps({**data, "summary": {**data["summary"], "tokens": int("9" * 400)}}))
    result = pytester.runpytest(*_ids(recorded), "--replio-baseline", str(base))
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error: no fixture ran
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"replio: {base}: not a replio result: summary.tokens: Input should be less than "
                                 "or equal to 9007199254740991; *"])
    assert "Traceback" not in result.stdout.str() and "OverflowError" not in result.stdout.str()


def test_an_imported_fixture_without_a_verifier_is_skipped_as_unjudged(pytester: pytest.Pytester,
                                                                      recorded: Path) -> None:
    fixture = recorded / ".replio" / "eval" / "alpha.json"
    data = json.loads(fixture.read_text())
    data["source"] = {"file": "traces.jsonl", "trace_id": "4bf92f35", "dialect": "genai-semconv"}
    fixture.write_text(json.dumps(data))
    # its golden's pass drifts (an unjudged fixture does not pass): approving it judges the approved state
    pytester.runpytest(*_ids(recorded), "--replio-update-golden")
    result = pytester.runpytest(*_ids(recorded), "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*alpha: unjudged: it has no verifier yet*"])
