"""The pytest plugin (entry point `pytest11: replio`): one test item per fixture × provider/model.

Glue only: options, collection, the terminal summary; the run itself is `runner.run_fixture`
and the verdict `verdict.judge`, exactly as the CLI uses them.

Option precedence: command-line flags > `.replio/config.json` under --replio-path > defaults
(record mode `none`; every provider/model that has cassettes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ReplioItem", "ReplioSuite"]

_STASH = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replio", "replio-replay: replay tool-use fixtures as tests")
    group.addoption("--replio-path", metavar="P", help="The project to replay; turns the plugin on.")
    group.addoption("--replio-provider", metavar="SPEC", action="append", default=[],
                    help="NAME[:MODEL] to run (repeatable); default: every provider/model with cassettes.")
    group.addoption("--replio-record-mode", default="none", choices=["none", "once", "new_episodes", "all"],
                    help="Cassette record mode (default: none, a pure replay).")
    group.addoption("--replio-update-golden", action="store_true", help="Approve: write the goldens.")
    group.addoption("--replio-strict", action="store_true",
                    help="Request drift and fixtures without a golden fail too.")
    group.addoption("--replio-require-pass", action="store_true",
                    help="A verifier failure fails the test (also per fixture: require_pass in the config).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "replio: a replayed replio-replay fixture")
    config.stash[_STASH] = {"providers": {}}


class ReplioSuite(pytest.Collector):
    """The replayed fixtures of one project: one item per fixture × provider/model."""

    def collect(self) -> Iterator[pytest.Item]:
        from .env import global_fixture_dir
        from .fixtures.discovery import discover
        from .plugins import plugin_manager
        from .suite import cassette_dir

        config = self.config
        ctx = _context(config)
        project = ctx["request"].project
        catalog = discover(project, global_fixture_dir(), plugin_manager())
        for problem in catalog.problems:
            config.issue_config_time_warning(
                pytest.PytestWarning(f"replio: skipped {problem.file}: {problem.message}"), 2
            )
        specs = config.getoption("replio_provider") or _recorded_specs(
            cassette_dir(ctx["request"], ctx["config"])
        )
        if not specs and ctx["config"].provider:
            specs = [ctx["config"].provider]
        for spec in specs:
            provider = _provider(config, spec)
            label = f"{provider.settings.name}:{provider.model}"
            for found in catalog.sorted():
                yield ReplioItem.from_parent(self, name=f"{found.fixture.id}[{label}]",
                                             fixture=found.fixture, spec=spec)


class ReplioItem(pytest.Item):
    """One fixture against one provider/model, judged like `replio eval run` judges it."""

    def __init__(self, *, fixture: Any, spec: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixture = fixture
        self.spec = spec
        self.add_marker("replio")

    def runtest(self) -> None:
        from .golden.review import approve, attach_drift
        from .golden.store import GoldenStore
        from .metrics import summarize
        from .recording.modes import RecordMode, parse_mode
        from .recording.network import network_blocked
        from .recording.session import CassetteSessions
        from .results import RunResult
        from .runner import RunOptions, run_fixture
        from .suite import cassette_dir, golden_dir
        from .verdict import judge

        opt = self.config.getoption
        ctx = _context(self.config)
        provider = _provider(self.config, self.spec)
        mode = parse_mode(opt("replio_record_mode"))
        options = RunOptions(limits=ctx["limits"], session=CassetteSessions(cassette_dir(ctx["request"], ctx["config"]), mode))
        if mode is RecordMode.NONE:
            with network_blocked():
                result = run_fixture(self.fixture, provider, options)
        else:
            result = run_fixture(self.fixture, provider, options)
        run = RunResult(provider=provider.settings.name, model=provider.model, fixtures=[result],
                        summary=summarize([result]))
        store = GoldenStore(golden_dir(ctx["request"], ctx["config"]))
        run = attach_drift(run, store)
        result = run.fixtures[0]
        written = 0
        if opt("replio_update_golden"):
            written = sum(a.action in ("created", "changed") for a in approve(run, store))
        self.user_properties.append(("replio", json.dumps({
            "drifted": bool(result.drift), "error": result.status.value == "error", "written": written,
        })))
        require = opt("replio_require_pass") or self.fixture.id in ctx["config"].require_pass
        verdict = judge(result, strict=opt("replio_strict"), require_pass=require)
        if not verdict.ok:
            raise ReplioFailure(verdict.text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ReplioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.config.getoption("replio_path")), None, f"replio: {self.name}"


class ReplioFailure(Exception):
    """The readable drift report or error message of a failed item."""


def _context(config: pytest.Config) -> dict[str, Any]:
    stash = config.stash[_STASH]
    if "config" not in stash:
        from .config import load_project_config
        from .engine import Limits
        from .suite import RunRequest

        project = Path(config.getoption("replio_path"))
        stash["config"] = load_project_config(project)
        stash["request"] = RunRequest(project=project)
        stash["limits"] = Limits(stash["config"].max_turns, stash["config"].max_calls)
    return stash


def _provider(config: pytest.Config, spec: str) -> Any:
    providers = config.stash[_STASH]["providers"]
    if spec not in providers:
        from .env import Env
        from .providers.registry import create_provider

        providers[spec] = create_provider(spec, config=_context(config)["config"], env=Env.current())
    return providers[spec]


def _recorded_specs(cassettes: Path) -> list[str]:
    """provider:model for every folder of cassettes, the model named as its cassettes' header says."""
    from .recording.serializer import HEADER_KEY, load_cassette_yaml

    specs = []
    for folder in sorted(p for p in cassettes.glob("*/*") if p.is_dir()):
        first = next(iter(sorted(folder.glob("*.yaml"))), None)
        if first is None:
            continue
        model = folder.name
        try:
            header = load_cassette_yaml(first.read_text(encoding="utf-8"), str(first)).get(HEADER_KEY, {})
            model = header.get("model", model)
        except Exception:  # a broken cassette is reported by its own item
            pass
        specs.append(f"{folder.parent.name}:{model}")
    return specs


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Add the replio suite to what the session collects, so -k, -m and xdist treat it as tests."""
    report = yield
    if isinstance(collector, pytest.Session) and collector.config.getoption("replio_path") and report.passed:
        report.result.append(ReplioSuite.from_parent(collector, name="replio", nodeid="replio"))
    return report


def pytest_unconfigure(config: pytest.Config) -> None:
    for provider in config.stash.get(_STASH, {}).get("providers", {}).values():
        provider.close()


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
    terminalreporter.write_line(
        f"replio: {counts['replayed']} fixtures replayed, {counts['drifted']} drifted, "
        f"{counts['errors']} errors, {counts['written']} goldens written"
    )
