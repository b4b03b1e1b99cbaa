"""Planning a run: a server on this machine runs one fixture at a time, and the header says so."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.errors import ConfigError
from replio_replay.fixtures import plugins
from replio_replay.fixtures.plugins import plugin_manager
from replio_replay.judge.results import FixtureResult
from replio_replay.providers.openai import OpenAIProvider
from replio_replay.run import suite
from replio_replay.run.suite import RunRequest, execute, prepare
from tests.helpers import replio_command
from tests.support.llm_server import LLMServer
from tests.support.project import run_args


@pytest.mark.parametrize(("spec", "jobs", "config_jobs", "expected"), [
    ("llamacpp:m", None, None, 1), ("ollama:m", None, None, 1), ("openai:m", None, None, 4),
    ("llamacpp:m", 3, None, 3), ("llamacpp:m", None, 2, 2),
])
def test_local_servers_run_one_fixture_at_a_time_unless_told(project: Path, spec: str, jobs: int | None,
                                                              config_jobs: int | None, expected: int) -> None:
    if config_jobs is not None:
        (project / ".replio" / "config.json").write_text(json.dumps({"jobs": config_jobs}))
    plan = prepare(RunRequest(project, provider_specs=[spec], jobs=jobs, record_mode="once"),
                   plugin_manager())
    assert plan.settings.jobs == expected
    header = plan.header()
    assert header is not None and f"{expected} at a time" in header
    assert ("runs on this machine" in header) == (expected == 1)
    plan.close()


def test_a_replay_has_no_header(project: Path) -> None:
    (project / "cassettes" / "llamacpp" / "m").mkdir(parents=True)
    plan = prepare(RunRequest(project, provider_specs=["llamacpp:m"], record_mode="none"),
                   plugin_manager())
    assert plan.header() is None
    plan.close()


def test_the_header_counts_only_what_will_be_recorded(project: Path) -> None:
    request = RunRequest(project, provider_specs=["openai:m"], record_mode="once", fixture_ids=["alpha", "beta"])
    plan = prepare(request, plugin_manager())
    assert plan.header() == "recording 2 fixtures, 2 at a time"  # --jobs 4, but 2 fixtures
    cassette = project / "cassettes" / "openai" / "m" / "alpha.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text("replio: {}\n")
    assert plan.header() == "recording 1 fixture"  # not "4 at a time": there is one
    plan.close()


def test_before_a_run_each_case_is_looked_at_once_for_whether_it_is_sent(project: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[str] = []
    live = suite.Plan._live
    monkeypatch.setattr(suite.Plan, "_live", lambda self, run, case: looked.append(case.id) or live(self, run, case))
    request = RunRequest(project, provider_specs=["openai:m"], record_mode="once", fixture_ids=["alpha", "beta"])
    with prepare(request, plugin_manager()) as plan:
        assert suite.announce(plan) == ["recording 2 fixtures, 2 at a time"]
        assert plan.check_cost() is None and plan.budget() is None  # no --max-cost: nothing to count
    assert sorted(looked) == ["alpha", "beta"]


def test_the_header_says_no_more_at_once_than_there_are_fixtures(project: Path) -> None:
    request = RunRequest(project, provider_specs=["openai:m"], record_mode="once", fixture_ids=["alpha", "beta"],
                         jobs=8)
    with prepare(request, plugin_manager()) as plan:
        assert plan.header() == "recording 2 fixtures, 2 at a time"


def test_without_a_plugin_manager_the_plan_uses_the_plugins_the_config_names(project: Path) -> None:
    request = RunRequest(project, provider_specs=["openai:m"], record_mode="once")
    with prepare(request) as plan:  # the config names no plugins: none is loaded
        assert "alpha" in {c.id for r in plan.runs for c in r.cases}
    (project / ".replio" / "config.json").write_text(json.dumps({"plugins": ["team-evals"]}))
    with pytest.raises(ConfigError, match="no installed plugin 'team-evals'"):
        prepare(request)


def test_without_a_plugin_manager_the_notes_name_installed_plugins_left_out(project: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_entry_points", lambda: {"team-tools": None})  # installed, never loaded
    with prepare(RunRequest(project, provider_specs=["openai:m"], record_mode="once")) as plan:
        (note,) = plan.notes
    assert note.startswith("installed plugins not used by this project: team-tools; to use them, name them")


def test_a_replay_with_no_provider_named_takes_the_recorded_one(project: Path, agent: LLMServer) -> None:
    runner = CliRunner()
    base = ["eval", "--path", str(project)]
    recorded = runner.invoke(main, [*run_args(project, "--base-url", f"{agent.url}/v1", "--update-golden")])
    assert recorded.exit_code == 0, recorded.output
    (project / ".replio" / "config.json").write_text("{}")  # the config names no provider
    agent.close()

    only = ["--fixture", "alpha", "--fixture", "beta"]
    for args in (["diff", *only], ["run", "--record-mode", "none", *only], ["status"]):
        result = runner.invoke(main, [*base, *args])
        assert result.exit_code == 0, (args, result.output)
        assert "openai:test-model" in result.stdout
    live = runner.invoke(main, [*base, "run", "--fixture", "alpha"])
    assert live.exit_code == 2 and "no provider named; known providers" in live.stderr  # a live run must name one

    (project / "cassettes" / "ollama" / "other").mkdir(parents=True)
    (project / "cassettes" / "ollama" / "other" / "alpha.yaml").write_text("interactions: []\n")
    several = runner.invoke(main, [*base, "diff"])
    assert several.exit_code == 2
    assert ("hold several: ollama:other, openai:test-model; choose one with --provider "
            "(or --compare ollama:other,openai:test-model)") in several.stderr


def test_a_replay_with_nothing_recorded_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "--path", str(tmp_path), "diff"])
    assert result.exit_code == 2
    assert f"no provider named, and no cassettes under {tmp_path / 'cassettes'}/ to replay" in result.stderr


def test_the_mock_provider_cannot_answer_an_agent_and_says_so_before_anything_runs(project: Path,
                                                                                   tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    agent = project / "agent.py"
    agent.write_text(f"open({str(marker)!r}, 'w').write('ran')\nprint('hi')\n")
    done = subprocess.run([replio_command(), "eval", "--path", str(project), "run", "--provider", "mock",
                           "--agent", f"python {agent}"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("cannot answer your agent") == 1
    assert "the provider mock:scripted plays a script and speaks no HTTP" in done.stderr
    assert done.stdout == "" and not marker.exists()


class _Started:
    """An observer counting the fixtures that have started."""

    def __init__(self) -> None:
        self.count = 0

    def started(self, label: str) -> None:
        self.count += 1

    def finished(self, label: str, result: FixtureResult) -> None:
        pass


def _pools_made(monkeypatch: pytest.MonkeyPatch, started: _Started) -> list[tuple[str, int]]:
    """Each pooled transport made from now on: the thread that made it, and how many fixtures had started."""
    made: list[tuple[str, int]] = []

    class Counted(httpx.HTTPTransport):
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append((threading.current_thread().name, started.count))
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx, "HTTPTransport", Counted)
    return made


def test_a_live_run_makes_its_pool_once_before_its_fixtures_start(project: Path, agent: LLMServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    started = _Started()
    made = _pools_made(monkeypatch, started)
    request = RunRequest(project, base_url=f"{agent.url}/v1", no_cassettes=True, jobs=8, no_bundled=True)
    with prepare(request, plugin_manager()) as plan:
        outcome = execute(plan, observer=started)
    assert started.count == 2 and all(f.passed for f in outcome.runs[0].fixtures)
    # made once by the run's own thread before any fixture started, not by the first fixtures in flight
    assert made == [(threading.current_thread().name, 0)]


def test_a_replay_makes_no_pool(project: Path, agent: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = CliRunner().invoke(main, [*run_args(project, "--base-url", f"{agent.url}/v1", "--no-bundled")])
    assert recorded.exit_code == 0, recorded.output
    started = _Started()
    made = _pools_made(monkeypatch, started)
    for mode in ("none", "once"):  # every answer recorded: nothing is sent
        with prepare(RunRequest(project, record_mode=mode, no_bundled=True), plugin_manager()) as plan:
            outcome = execute(plan, observer=started)
        assert [f.passed for f in outcome.runs[0].fixtures] == [True, True], mode
    assert started.count == 4 and made == []


def test_a_live_run_of_built_in_tools_starts_no_program(project: Path, agent: LLMServer,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No fork server and no probe of the machine's confinement (about 0.1 s): only Python tools,
    environments, commands and agents need them, and none of these fixtures has one."""
    httpx.HTTPTransport().close()  # httpcore's first import runs ldconfig (trio asks it for libpthread): not the run's
    started: list[object] = []
    popen = subprocess.Popen.__init__

    def spy(self: subprocess.Popen[bytes], args: object, *rest: object, **kwargs: object) -> None:
        started.append(args)
        popen(self, args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    request = RunRequest(project, base_url=f"{agent.url}/v1", no_cassettes=True, jobs=8, no_bundled=True)
    with prepare(request, plugin_manager()) as plan:
        outcome = execute(plan)
    assert [f.passed for f in outcome.runs[0].fixtures] == [True, True]
    assert started == []


def test_ctrl_c_while_the_pools_are_made_cancels_every_fixture(project: Path, agent: LLMServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(OpenAIProvider, "open", interrupted)
    request = RunRequest(project, base_url=f"{agent.url}/v1", no_cassettes=True, no_bundled=True)
    with prepare(request, plugin_manager()) as plan:
        outcome = execute(plan)
    assert outcome.interrupted and outcome.exit_code == 130
    assert [(f.id, f.status) for f in outcome.runs[0].fixtures] == [("alpha", "cancelled"), ("beta", "cancelled")]
    assert agent.requests == []
