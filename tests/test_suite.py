"""Planning a run: a server on this machine runs one fixture at a time, and the header says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replio_replay.plugins import plugin_manager
from replio_replay.suite import RunRequest, prepare


@pytest.mark.parametrize(("spec", "jobs", "config_jobs", "expected"), [
    ("llamacpp:m", None, None, 1), ("ollama:m", None, None, 1), ("openai:m", None, None, 4),
    ("llamacpp:m", 3, None, 3), ("llamacpp:m", None, 2, 2),
])
def test_local_servers_run_one_fixture_at_a_time_unless_told(project: Path, spec: str, jobs: int | None,
                                                              config_jobs: int | None, expected: int) -> None:
    if config_jobs is not None:
        (project / ".replio" / "config.json").write_text(json.dumps({"jobs": config_jobs}))
    plan = prepare(RunRequest(project, provider_specs=[spec], jobs=jobs, record_mode="once"),
                   plugin_manager(entry_points=False))
    assert plan.settings.jobs == expected
    header = plan.header()
    assert header is not None and f"{expected} at a time" in header
    assert ("runs on this machine" in header) == (expected == 1)
    plan.close()


def test_a_replay_has_no_header(project: Path) -> None:
    plan = prepare(RunRequest(project, provider_specs=["llamacpp:m"], record_mode="none"),
                   plugin_manager(entry_points=False))
    assert plan.header() is None
    plan.close()


def test_the_header_counts_only_what_will_be_recorded(project: Path) -> None:
    request = RunRequest(project, provider_specs=["openai:m"], record_mode="once", fixture_ids=["alpha", "beta"])
    plan = prepare(request, plugin_manager(entry_points=False))
    assert plan.header() == "recording 2 fixtures, 4 at a time"
    cassette = project / "cassettes" / "openai" / "m" / "alpha.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text("replio: {}\n")
    assert plan.header() == "recording 1 fixture, 4 at a time"
    plan.close()
