"""The repository's own recordings: every bundled fixture replays offline with no drift."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replio_replay.config import load_project_config, parse_spec
from replio_replay.fixtures.discovery import discover
from replio_replay.fixtures.layout import CASSETTE, RunKey
from replio_replay.fixtures.plugins import plugin_manager
from replio_replay.golden.store import GoldenStore

REPO = Path(__file__).resolve().parents[2]


def _default_spec() -> tuple[str, str]:
    name, model = parse_spec(load_project_config(REPO).provider or "")
    assert name and model, "the repo's .replio/config.json must name the default provider and model"
    return name, model


def _bundled_ids() -> list[str]:
    catalog = discover(REPO / "no-local-fixtures", None, plugin_manager())
    return sorted(catalog.fixtures)


def test_every_bundled_fixture_has_a_cassette_and_golden_for_the_default_model() -> None:
    provider, model = _default_spec()
    store = GoldenStore(REPO / "golden")
    key = RunKey(provider, model)
    missing = [
        fid for fid in _bundled_ids()
        if not key.path(REPO / "cassettes", fid, CASSETTE).is_file() or not store.path(key, fid).is_file()
    ]
    assert missing == [], f"record them: replio eval --path . run --record-mode once --fixture ... ({missing})"


@pytest.mark.parametrize("compare", [False, True])
def test_the_repo_replays_offline_without_drift(tmp_path: Path, compare: bool) -> None:
    provider, model = _default_spec()
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLAMACPP_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(var, None)
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(REPO), "run",
            "--output", "json", "--strict"]
    if compare:
        specs = sorted({f"{p.parent.name}:{p.name}" for p in (REPO / "golden").glob("*/*")})
        args += ["--compare", ",".join(specs)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    report = json.loads(done.stdout)
    runs = report["runs"] if compare else [report]
    assert (runs[0]["provider"], runs[0]["model"]) == (provider, model) or compare
    for run in runs:
        assert sorted(f["id"] for f in run["fixtures"]) == _bundled_ids()
        for fixture in run["fixtures"]:
            assert fixture["status"] != "error", fixture["error"]
            assert fixture["drift"] == [], (fixture["id"], fixture["drift"])
            assert fixture["request_drift"] == [], (fixture["id"], fixture["request_drift"])


def test_replaying_the_git_fixtures_needs_no_git(tmp_path: Path) -> None:
    """Their MCP server is replayed and they offer no other tool: nothing could see a repository,
    so none is built (no git processes), and a machine without git replays them all the same."""
    env = {**os.environ, "CI": "true", "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "PATH": str(tmp_path / "no-programs")}
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(REPO), "run", "--tag", "git",
            "--output", "json", "--strict"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    fixtures = json.loads(done.stdout)["fixtures"]
    assert len(fixtures) == 3 and all(f["status"] != "error" and f["drift"] == [] for f in fixtures), fixtures


def test_the_pytest_plugin_passes_over_the_repo_with_every_variant_and_model(pytester: pytest.Pytester,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool set (the default and each of .replio/tools/) against every recorded model, named
    explicitly, so a variant or model without its cassettes fails rather than being left out."""
    models = sorted(p.name for p in (REPO / "cassettes" / "llamacpp").iterdir() if p.is_dir())
    variants = ["default", *sorted(p.stem for p in (REPO / ".replio" / "tools").glob("*.json"))]
    assert len(models) >= 2 and len(variants) >= 2, (models, variants)
    args = ["--replio-path", str(REPO), "--replio-strict", "-p", "no:cacheprovider", "-q"]
    args += [f"--replio-provider=llamacpp:{model}" for model in models]
    args += [f"--replio-tools={name}" for name in variants]
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_subprocess(*args, timeout=300)
    expected = len(_bundled_ids()) * len(models) * len(variants)
    assert result.ret == 0, "\n".join(line for line in result.stdout.lines if ": error: " in line or "drift" in line)
    result.assert_outcomes(passed=expected)
    result.stdout.fnmatch_lines([f"replio: {expected} fixtures replayed, 0 drifted, 0 errors, 0 goldens written"])
