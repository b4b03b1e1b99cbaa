"""The pytest plugin (entry point `pytest11: replio`): one test item per fixture × provider/model × tool set.

Glue only: options, collection, the terminal summary. The run is planned and executed by
`suite.prepare` and `suite.execute`, and judged by `verdict.judge`, exactly as `replio eval
run` does it; each item executes its own case of the plan.

Option precedence (`settings.resolve_settings`, as for the CLI): command-line flags >
the environment (`CI` means record mode `none`) > `.replio/config.json` under --replio-path >
defaults (record mode `none`; every provider/model and tool set that has cassettes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._runtime.wording import plural
from .recording.modes import RecordMode

__all__ = ["ReplioItem", "ReplioProblem", "ReplioSuite"]

_STASH = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replio", "replio-replay: replay tool-use fixtures as tests")
    group.addoption("--replio-path", metavar="P", help="The project to replay; turns the plugin on.")
    group.addoption("--replio-provider", metavar="SPEC", action="append", default=[],
                    help="NAME[:MODEL] to run (repeatable); default: every provider/model with cassettes.")
    group.addoption("--replio-tools", metavar="NAME", action="append", default=[],
                    help="Tool set to run (repeatable); default: every tool set with cassettes.")
    group.addoption("--replio-trials", type=int, default=None, metavar="N",
                    help="Run each fixture N times (default: the config's trials, else 1).")
    group.addoption("--replio-shard", metavar="I/N", default=None,
                    help="Only shard I of N of the fixtures, split by a hash of each fixture's id.")
    group.addoption("--replio-record-mode", default=None, choices=[m.value for m in RecordMode],
                    help="Cassette record mode (default: none, a pure replay).")
    group.addoption("--replio-mcp", default=None, choices=["cassette", "live"],
                    help="MCP servers from the cassette (default) or live, compared with it.")
    group.addoption("--replio-update-golden", action="store_true", help="Approve: write the goldens.")
    group.addoption("--replio-strict", action="store_true",
                    help="Request drift and fixtures without a golden fail too.")
    group.addoption("--replio-require-pass", action="store_true",
                    help="A verifier failure fails the test (also per fixture: require_pass in the config).")
    group.addoption("--replio-baseline", metavar="FILE", default=None,
                    help="Compare with this saved result (run --output-file); config: baseline.")
    for flag, what in (("fail-under", "pass_rate, accuracy or pass^K is below X"),
                       ("fail-over", "errors, tokens or cost is above X"),
                       ("max-drop", "a metric is worse than the baseline's by more than X")):
        group.addoption(f"--replio-{flag}", metavar="METRIC=X", action="append", default=[],
                        help=f"The session fails when {what} (repeatable), as run --{flag}.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "replio: a replayed replio-replay fixture")
    config.stash[_STASH] = {"results": {}}
    if config.getoption("replio_path", None):
        from .errors import UsageError
        from .judge.baseline import parse_gates

        try:
            config.stash[_STASH]["gates"] = [gate for flag in ("fail-under", "fail-over", "max-drop") for gate in
                                             parse_gates(f"--{flag}", config.getoption(f"replio_{flag.replace('-', '_')}"))]
        except UsageError as exc:
            raise pytest.UsageError(f"replio: {str(exc).replace(' --', ' --replio-')}") from None


class ReplioSuite(pytest.Collector):
    """The replayed fixtures of one project: one item per fixture × provider/model × tool set."""

    def collect(self) -> Iterator[pytest.Item]:
        from .errors import ReplioError

        try:
            plan, wanted = _plan(self.config)
        except ReplioError as exc:  # a bad option or file: one line, not a traceback
            raise ReplioFailure(f"replio: {exc}") from None
        names: dict[str, int] = {}
        for problem in plan.problems:  # a fixture that cannot run fails, so CI sees it
            name = Path(problem.file).name or problem.file
            names[name] = names.get(name, 0) + 1
            label = name if names[name] == 1 else f"{name}#{names[name]}"
            yield ReplioProblem.from_parent(self, name=f"problem[{label}]", problem=problem)
        for run in plan.runs:
            if wanted is not None and _folder(run.key) not in wanted:
                continue
            for case in sorted(run.cases, key=lambda c: (c.id, c.trial)):
                trial = "" if case.trial == 1 else f" t{case.trial}"
                yield ReplioItem.from_parent(self, name=f"{case.id}[{run.key.label}{trial}]", run=run, case=case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ReplioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ReplioItem(pytest.Item):
    """One fixture against one provider/model and tool set, judged like `replio eval run` judges it."""

    def __init__(self, *, run: Any, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.case = case
        self.add_marker("replio")

    def runtest(self) -> None:
        from .report.gate import judge
        from .run.suite import execute

        plan, _ = _plan(self.config)
        outcome = execute(plan, only=lambda run, case: run is self.run and case is self.case)
        result = next(f for r in outcome.runs for f in r.fixtures)
        self.config.stash[_STASH]["results"].setdefault(id(self.run), (self.run, []))[1].append(result)
        written = sum(a.action in ("created", "updated") for a in outcome.approvals)
        self.user_properties.append(("replio", json.dumps({
            "drifted": bool(result.drift), "error": result.status.value == "error", "written": written,
        })))
        require = self.config.getoption("replio_require_pass") or result.id in plan.settings.require_pass
        verdict = judge(result, strict=plan.request.strict, require_pass=require, tools=self.run.toolset.name)
        if not verdict.ok:
            raise ReplioFailure(verdict.text)
        if result.unjudged:  # imported from a trace with no verifier yet: neither passed nor failed
            pytest.skip(f"{result.id}: unjudged: it has no verifier yet")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ReplioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.config.getoption("replio_path")), None, f"replio: {self.name}"


class ReplioProblem(pytest.Item):
    """A fixture file or plugin entry that could not be loaded: a failing test naming it."""

    def __init__(self, *, problem: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problem = problem
        self.add_marker("replio")

    def runtest(self) -> None:
        raise ReplioFailure(f"{self.problem.file}: {self.problem.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.problem.file), None, f"replio: {self.name}"


class ReplioFailure(Exception):
    """The readable drift report or error message of a failed item (or of the suite's collection)."""


def _plan(config: pytest.Config) -> tuple[Any, set[tuple[str, str, str]] | None]:
    """The plan of this session (made once), and the recorded runs to keep when none were named."""
    stash = config.stash[_STASH]
    if "plan" not in stash:
        from .fixtures.plugins import choose_plugins, plugin_manager
        from .plan.settings import Flags, not_a_project, resolve_settings
        from .plan.shards import Shard
        from .run.suite import RunRequest, prepare
        from .tools.setfile import given_by_path

        opt = config.getoption
        shard = opt("replio_shard")
        project = Path(opt("replio_path"))
        if not project.is_dir():
            raise not_a_project(project, "--replio-path")
        settings = resolve_settings(project, Flags(record_mode=opt("replio_record_mode")),
                                    fallback_mode=RecordMode.NONE)
        recorded = _recorded_runs(settings.cassettes)
        specs = opt("replio_provider") or sorted({f"{p}:{m}" for p, m, _ in recorded.values()})
        if not specs and settings.config.provider:
            specs = [settings.config.provider]
        # A tool set given by a file path is known by a digest of that path, not the path: named, it runs.
        tools = opt("replio_tools") or sorted({t for _, _, t in recorded.values() if not given_by_path(t)}) \
            or ["default"]
        request = RunRequest(
            project=project, provider_specs=specs or [None], tools=tools,
            record_mode=opt("replio_record_mode"), fallback_mode=RecordMode.NONE, trials=opt("replio_trials"),
            strict=opt("replio_strict"), update_golden=opt("replio_update_golden"),
            mcp_live=opt("replio_mcp") == "live",
            baseline=None if opt("replio_baseline") is None else Path(opt("replio_baseline")),
            shard=None if shard is None else Shard.parse(shard, "--replio-shard"),
        )
        plugins = choose_plugins(settings.config.plugins)
        stash["plan"] = plan = prepare(request, plugin_manager(plugins.active))
        if plan.settings.baseline is not None:  # read before anything runs: a bad one stops the suite here
            from .report.saved import read_saved

            stash["baseline"] = read_saved(plan.settings.baseline)
        stash["notice"] = plugins.notice()
        named = opt("replio_provider") or opt("replio_tools")
        stash["wanted"] = None if named or not recorded else set(recorded.values())
    return stash["plan"], stash["wanted"]


def _folder(key: Any) -> tuple[str, str, str]:
    return key.provider, key.model, key.tools


def _recorded_runs(cassettes: Path) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(provider, model, tools) folders that hold cassettes -> the names their headers give."""
    from .errors import CassetteError
    from .fixtures.layout import CASSETTE, scan
    from .recording.serializer import read_header

    runs: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for rec in scan(cassettes, CASSETTE):
        folder = (rec.provider, rec.model, rec.tools)
        if folder in runs:
            continue
        try:
            header = read_header(rec.path)
        except CassetteError:  # a broken cassette is reported by its own item
            header = {}
        runs[folder] = (str(header.get("provider", rec.provider)), str(header.get("model", rec.model)),
                        str(header.get("tools", rec.tools)))
    return runs


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Add the replio suite to what the session collects, so -k, -m and xdist treat it as tests."""
    report = yield
    if isinstance(collector, pytest.Session) and collector.config.getoption("replio_path") and report.passed:
        report.result.append(ReplioSuite.from_parent(collector, name="replio", nodeid="replio"))
    return report


def pytest_unconfigure(config: pytest.Config) -> None:
    plan = config.stash.get(_STASH, {}).get("plan")
    if plan is not None:
        plan.close()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Compare the session's runs with the baseline and hold them to the gates: a failed gate fails
    the session (the lines say why, in the terminal summary)."""
    config = session.config
    stash = config.stash.get(_STASH, {})
    plan, gates = stash.get("plan"), stash.get("gates", [])
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return
    if plan is None:
        if gates or (config.getoption("replio_path", None) and config.getoption("replio_baseline")):
            # under xdist the results stay in the workers: never let a gate pass unchecked
            stash["checked"] = ([], None, ["replio: the baseline and gates need every result in one process: "
                                           "run them without -n"])
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    if not gates and plan.settings.baseline is None:
        return
    if plan.settings.baseline is not None and "baseline" not in stash:
        return  # it could not be read: collection said why, and nothing ran
    from .judge.baseline import check_runs

    runs = [_run_result(run, results, plan.settings.trials) for run, results in stash["results"].values()]
    baseline = stash.get("baseline")
    if baseline is None and any(g.needs_baseline for g in gates):
        stash["checked"] = (runs, None, ["replio: --replio-max-drop measures from a baseline: give --replio-baseline "
                                         "FILE"])
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    checked = check_runs(runs, gates, baseline.runs if baseline else None, str(plan.settings.baseline or ""))
    stash["checked"] = (runs, checked, [])
    if checked.failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _run_result(run: Any, results: list[Any], trials: int) -> Any:
    """The results of one planned run's items as a run result (in id order, trials combined)."""
    from .judge.metrics import combine_trials, summarize
    from .judge.results import RunResult

    fixtures = sorted(results, key=lambda r: (r.id, r.trial))
    if trials > 1:
        fixtures = combine_trials(fixtures)
    return RunResult(provider=run.key.provider, model=run.key.model, tools=run.key.tools,
                     tools_hash=run.toolset.digest, fixtures=fixtures, summary=summarize(fixtures))


def _write_checked(terminalreporter: Any, stash: dict[str, Any]) -> None:
    from .report.text import baseline_line

    if "checked" not in stash:
        return
    runs, checked, errors = stash["checked"]
    for line in errors:
        terminalreporter.write_line(line)
    if checked is None:
        return
    for line in checked.regression_lines(runs):
        terminalreporter.write_line(f"replio: {line}")
    for run, comparison in zip(runs, checked.comparisons):
        if comparison is not None:
            terminalreporter.write_line(f"replio: {run.key.label}: {baseline_line(comparison, run.summary)}")
    for line in checked.failures:
        terminalreporter.write_line(f"replio: gate failed: {line}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not config.getoption("replio_path"):
        return
    counts = {"replayed": 0, "drifted": 0, "errors": 0, "written": 0}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key != "replio":
                    continue
                data = json.loads(value)
                counts["replayed"] += 1
                counts["drifted"] += data["drifted"]
                counts["errors"] += data["error"]
                counts["written"] += data["written"]
    notice = config.stash[_STASH].get("notice")
    if notice:
        terminalreporter.write_line(f"replio: {notice}")
    terminalreporter.write_line(
        f"replio: {plural(counts['replayed'], 'fixture')} replayed, {counts['drifted']} drifted, "
        f"{plural(counts['errors'], 'error')}, {plural(counts['written'], 'golden')} written"
    )
    _write_checked(terminalreporter, config.stash[_STASH])
