"""A whole `run` request: settings resolved once, providers built, one run per provider, exit code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .config import Env, ProjectConfig, load_project_config
from .engine import Limits
from .fixtures.discovery import Catalog, select
from .providers.base import Provider
from .providers.registry import create_provider
from .results import RunResult, Status
from .runner import InterruptedRun, RunOptions, run_suite

__all__ = ["Outcome", "RunRequest", "execute"]


@dataclass(frozen=True)
class RunRequest:
    """What the user asked for, as flags (None: not given)."""

    project: Path
    fixture_ids: Sequence[str] = ()
    provider_specs: Sequence[str | None] = (None,)
    model: str | None = None
    base_url: str | None = None
    jobs: int | None = None
    timing: bool = False


@dataclass
class Outcome:
    """The runs, the fixture files that were skipped, and how the process should exit."""

    runs: list[RunResult] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        errored = any(f.status is Status.ERROR for r in self.runs for f in r.fixtures)
        return 1 if errored else 0


def build_providers(request: RunRequest, config: ProjectConfig, env: Env) -> list[Provider]:
    """Every provider named, resolved before anything runs, so a bad spec fails fast (exit 2)."""
    return [
        create_provider(spec, config=config, env=env, model=request.model, base_url=request.base_url)
        for spec in request.provider_specs
    ]


def execute(request: RunRequest, catalog: Catalog) -> Outcome:
    """Run the chosen fixtures against each provider in turn."""
    config = load_project_config(request.project)
    env = Env.current()
    found = select(catalog, list(request.fixture_ids))
    providers = build_providers(request, config, env)
    options = RunOptions(
        limits=Limits(config.max_turns, config.max_calls),
        jobs=request.jobs or config.jobs or 4,
        timing=request.timing,
    )
    outcome = Outcome(problems=[(p.file, p.message) for p in catalog.problems])
    fixtures = [f.fixture for f in found]
    try:
        for provider in providers:
            try:
                outcome.runs.append(run_suite(fixtures, provider, options))
            except InterruptedRun as stop:
                outcome.runs.append(stop.run)
                outcome.interrupted = True
                break
    finally:
        for provider in providers:
            provider.close()
    return outcome
