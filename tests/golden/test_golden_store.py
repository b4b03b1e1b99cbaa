"""The golden store: every malformed golden is a GoldenError naming the file and field, and no
golden is ever written that could not be read back (NaN, Infinity, wrong types)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from replio_replay.cli import main
from replio_replay.errors import GoldenError
from replio_replay.fixtures.layout import RunKey
from replio_replay.golden.canonical import METRICS
from replio_replay.golden.model import Golden, GoldenMetrics
from replio_replay.golden.store import GoldenStore
from tests.support.llm_server import LLMServer

REPO = Path(__file__).resolve().parents[2]
KEY = RunKey("openai", "test-model")


def _golden() -> dict[str, Any]:
    return {
        "id": "fx",
        "status": "ok",
        "pass": True,
        "turns": [[{"name": "file_read", "arguments": {"path": "a.txt"}}],
                  [{"name": "glob", "arguments": "not json"}]],
        "answer": "done",
        "metrics": {"accuracy": 1.0, "calls": 2, "redundant": 0, "errors": 0, "tokens": 10},
    }


def _store(tmp_path: Path, text: str | bytes) -> tuple[GoldenStore, Path]:
    store = GoldenStore(tmp_path / "golden")
    path = store.path(KEY, "fx")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return store, path


def _load_error(tmp_path: Path, text: str | bytes) -> str:
    store, path = _store(tmp_path, text)
    with pytest.raises(GoldenError) as info:
        store.load(KEY, "fx")
    message = str(info.value)
    assert message.startswith(f"golden {path} "), message
    return message


def test_a_valid_golden_loads_as_the_plain_data(tmp_path: Path) -> None:
    store, _ = _store(tmp_path, json.dumps(_golden()))
    assert store.load(KEY, "fx") == _golden()


def test_no_golden_is_none(tmp_path: Path) -> None:
    assert GoldenStore(tmp_path).load(KEY, "fx") is None


def test_the_issues_repro_turns_null_names_the_file_and_field(tmp_path: Path) -> None:
    message = _load_error(tmp_path, '{"turns": null}')
    assert "turns: Input should be a valid list" in message
    assert "metrics: required key is missing" in message


def _with(path: str, value: Any) -> dict[str, Any]:
    data = _golden()
    *parents, last = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(("field", "value", "named"), [
    ("turns", None, "turns"),
    ("turns", [{"name": "x", "arguments": {}}], "turns.0"),
    ("turns.0.0.name", 3, "turns.0.0.name"),
    ("turns.0.0.arguments", 5, "turns.0.0.arguments: must be a JSON object or text"),
    ("turns.0.0.arguments", None, "turns.0.0.arguments: must be a JSON object or text"),
    ("turns.0.0.extra", 1, "turns.0.0.extra: unknown key"),
    ("status", "weird", "status"),
    ("pass", "yes", "pass"),
    ("pass", 1, "pass"),
    ("answer", None, "answer"),
    ("id", 7, "id"),
    ("metrics", [], "metrics"),
    ("metrics.calls", "3", "metrics.calls"),
    ("metrics.calls", 1.5, "metrics.calls"),
    ("metrics.calls", True, "metrics.calls"),
    ("metrics.tokens", -1, "metrics.tokens"),
    ("metrics.accuracy", "1", "metrics.accuracy"),
    ("metrics.accuracy", 2, "metrics.accuracy"),
    ("metrics.speed", 1, "metrics.speed: unknown key"),
    ("extra", 1, "extra: unknown key"),
])
def test_wrong_types_name_the_file_and_field(
    tmp_path: Path, field: str, value: Any, named: str,
) -> None:
    message = _load_error(tmp_path, json.dumps(_with(field, value)))
    assert f"is not a golden: {named}" in message or f"; {named}" in message, message


def test_a_missing_key_is_named(tmp_path: Path) -> None:
    data = _golden()
    del data["answer"]
    assert "answer: required key is missing" in _load_error(tmp_path, json.dumps(data))


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_on_load(tmp_path: Path, constant: str) -> None:
    text = json.dumps(_golden()).replace('"accuracy": 1.0', f'"accuracy": {constant}')
    assert constant in text
    assert f"{constant} is not a JSON number" in _load_error(tmp_path, text)


def test_non_finite_numbers_in_arguments_are_refused_on_load(tmp_path: Path) -> None:
    text = json.dumps(_golden()).replace('"a.txt"', "NaN")
    assert "NaN is not a JSON number" in _load_error(tmp_path, text)


@pytest.mark.parametrize(("text", "says"), [
    (b'{"id": "\xff"}', "cannot be read"),
    ("{not json", ": not valid JSON at line 1"),
    ("[1, 2]", "must hold a JSON object, not list"),
    ('{"id": ' + "1" * 5000 + "}", ": not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 100 levels"),
])
def test_unreadable_goldens_name_the_file(tmp_path: Path, text: str | bytes, says: str) -> None:
    assert says in _load_error(tmp_path, text)


def test_a_deeply_nested_argument_is_refused_before_drift_walks_it(tmp_path: Path) -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = {"a": deep}
    data = _with("turns.0.0.arguments", {"x": deep})
    assert "nested deeper than 100 levels" in _load_error(tmp_path, json.dumps(data))


def test_every_golden_in_the_repository_loads(tmp_path: Path) -> None:
    files = sorted((REPO / "golden").rglob("*.json"))
    assert files, "the repository's goldens are missing"
    for file in files:
        store, _ = _store(tmp_path, file.read_text(encoding="utf-8"))
        assert store.load(KEY, "fx") == json.loads(file.read_text(encoding="utf-8")), file


def test_the_model_holds_every_metric() -> None:
    assert set(GoldenMetrics.model_fields) == set(METRICS)
    assert set(Golden.model_validate(_golden()).model_dump(by_alias=True, exclude_unset=True)) == set(_golden())
    with_state = {**_golden(), "state": {"shop": {"orders": {}}}}
    assert set(Golden.model_validate(with_state).model_dump(by_alias=True, exclude_unset=True)) == set(with_state)


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    store = GoldenStore(tmp_path)
    assert store.write(KEY, "fx", _golden()) == "created"
    assert store.write(KEY, "fx", _golden()) == "unchanged"
    assert store.load(KEY, "fx") == _golden()
    assert store.write(KEY, "fx", _with("answer", "other")) == "updated"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_arguments_are_never_written(tmp_path: Path, value: float) -> None:
    store = GoldenStore(tmp_path)
    with pytest.raises(GoldenError) as info:
        store.write(KEY, "fx", _with("turns.0.0.arguments", {"x": value}))
    assert "golden for fixture 'fx' was not written" in str(info.value)
    assert "NaN or Infinity" in str(info.value)
    assert not store.path(KEY, "fx").exists()


def test_a_non_finite_metric_is_never_written(tmp_path: Path) -> None:
    store = GoldenStore(tmp_path)
    with pytest.raises(GoldenError, match=r"fixture 'fx' was not written .*metrics\.accuracy"):
        store.write(KEY, "fx", _with("metrics.accuracy", math.nan))
    assert not store.path(KEY, "fx").exists()


def test_a_golden_too_deep_to_read_back_is_never_written(tmp_path: Path) -> None:
    deep: Any = "leaf"
    for _ in range(150):
        deep = [deep]
    store = GoldenStore(tmp_path)
    with pytest.raises(GoldenError, match="fixture 'fx' was not written .* nest deeper than 100"):
        store.write(KEY, "fx", _with("turns.0.0.arguments", {"x": deep}))
    assert not store.path(KEY, "fx").exists()


def test_writing_over_an_unreadable_golden_replaces_it(tmp_path: Path) -> None:
    store, path = _store(tmp_path, b"\xff\xfe not utf-8")
    assert store.write(KEY, "fx", _golden()) == "updated"
    assert store.load(KEY, "fx") == _golden()


def test_a_malformed_golden_is_an_error_for_its_fixture_and_the_report_is_written(
    project: Path, agent: LLMServer, tmp_path: Path,
) -> None:
    """The issue's repro through the CLI: the table, --output-file and --junit-xml all appear."""

    def run(*extra: str) -> Result:
        args = ["eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta"]
        return CliRunner().invoke(main, [*args, *extra], catch_exceptions=False)

    approved = run("--base-url", f"{agent.url}/v1", "--update-golden", "--output", "json")
    assert approved.exit_code == 0
    golden = project / "golden" / "openai" / "test-model" / "alpha.json"
    golden.write_text('{"turns": null}')
    output, junit = tmp_path / "out.json", tmp_path / "junit.xml"
    result = run("--record-mode", "none", "--output-file", str(output), "--junit-xml", str(junit))
    assert result.exit_code == 1
    assert "alpha" in result.stdout and "beta" in result.stdout  # the table
    alpha, beta = json.loads(output.read_text())["fixtures"]
    assert alpha["status"] == "error" and str(golden) in alpha["error"]
    assert "turns" in alpha["error"]
    assert beta["status"] == "ok"
    assert str(golden) in junit.read_text()
