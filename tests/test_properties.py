"""Property-based tests of every loader of user files: fixtures, config, cassettes and goldens.

Whatever a file holds, it either loads or raises the project's own error naming the file;
never another exception, and never more than a bounded amount of memory. Example counts are
small and there is no example database, so the whole file runs in seconds and leaves nothing
behind; hypothesis prints the failing example when one is found.
"""

from __future__ import annotations

import copy
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from replio_replay.config import load_project_config
from replio_replay.errors import CassetteError, ConfigError, FixtureError, GoldenError
from replio_replay.fixtures.layout import RunKey
from replio_replay.fixtures.model import Fixture, load_fixture
from replio_replay.golden.store import GoldenStore
from replio_replay.recording.serializer import ReadableSerializer, to_vcr
from replio_replay.recording.yamlcodec import MAX_EXPANDED, dump_yaml, load_yaml

#: Few examples, so the suite stays fast; REPLIO_HYPOTHESIS_EXAMPLES=5000 searches harder.
EXAMPLES = int(os.environ.get("REPLIO_HYPOTHESIS_EXAMPLES", "60"))
FAST = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# JSON values: scalars, then lists and objects of them, a few levels deep.
scalars = (st.none() | st.booleans() | st.integers()
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=4)
                   | st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=20,
)

# What YAML can hold beyond JSON: binary data, non-finite floats, keys that are not text.
yaml_scalars = scalars | st.binary(max_size=16) | st.floats() | st.dates()
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: (st.lists(inner, max_size=4)
                   | st.dictionaries(st.text(max_size=10) | st.integers(), inner, max_size=4)),
    max_leaves=20,
)


def _mutated(base: dict[str, Any], keys: list[str],
             values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`base` with one path (a known key, or one under it) set to an arbitrary value, or removed."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        data = copy.deepcopy(base)
        node: Any = data
        path = draw(st.lists(st.sampled_from(keys) | st.text(max_size=8), min_size=1, max_size=3))
        for part in path[:-1]:
            child = node.get(part) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                break
            node = child
        if draw(st.booleans()) and path[-1] in node:
            del node[path[-1]]
        else:
            node[path[-1]] = draw(values)
        return data

    return build()


# (a) fixtures

FIXTURE = {
    "id": "fx", "description": "A fixture.", "task": "Read a.txt.", "files": {"a.txt": "hi\n"},
    "expected": ["file_read"], "max_turns": 3, "tools_deny": [], "tool_permission": {},
    "verifier": {"must_include": ["file_read"], "max_calls": 3,
                 "args": {"file_read": {"path": "a.txt"}}},
}
FIXTURE_KEYS = [*FIXTURE, "verifier", "must_include", "avoid", "exact", "args", "file_read", "path",
                "$regex", "$min", "tools", "tools_offered", "system_prompt", "min_calls"]


def _check_fixture(data: Any) -> None:
    try:
        fixture = load_fixture(data, source="x.json")
    except FixtureError as exc:
        assert str(exc).startswith("x.json: ")
        assert exc.source == "x.json"
    else:
        assert isinstance(fixture, Fixture)


@FAST
@given(json_values)
def test_any_json_is_a_fixture_or_a_fixture_error(data: Any) -> None:
    _check_fixture(data)


@FAST
@given(_mutated(FIXTURE, FIXTURE_KEYS, json_values))
def test_a_mutated_fixture_is_a_fixture_or_a_fixture_error(data: Any) -> None:
    _check_fixture(data)


def test_the_unmutated_fixture_is_valid() -> None:
    assert load_fixture(copy.deepcopy(FIXTURE), source="x.json").id == "fx"


# (b) the project config

@pytest.fixture(scope="module")
def config_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("config")
    (project / ".replio").mkdir()
    return project


def _check_config(project: Path, raw: bytes) -> None:
    path = project / ".replio" / "config.json"
    path.write_bytes(raw)
    try:
        load_project_config(project)
    except ConfigError as exc:
        assert str(path) in str(exc)


@FAST
@given(raw=st.binary(max_size=200))
@example(raw=b'{"max_turns": 3, "jobs": 2}\xff')  # valid JSON, then a byte that is not UTF-8
@example(raw=b"\xff\xfe{}")
@example(raw=b"[" * 5_000)  # nesting past the JSON decoder's recursion limit
def test_any_bytes_are_a_config_or_a_config_error(config_project: Path, raw: bytes) -> None:
    _check_config(config_project, raw)


CONFIG = {"provider": "openai:m", "max_turns": 5, "max_calls": 9, "jobs": 2,
          "providers": {"openai": {"model": "m", "timeout": 5, "retries": 1}}}


@FAST
@given(data=json_values | _mutated(
    CONFIG, [*CONFIG, "openai", "model", "timeout", "retries", "base_url"], json_values))
def test_any_json_is_a_config_or_a_config_error(config_project: Path, data: Any) -> None:
    _check_config(config_project, json.dumps(data).encode())


# (c) cassettes

CASSETTE = yaml.safe_load(ReadableSerializer().serialize({"version": 1, "interactions": [{
    "request": {"method": "POST", "uri": "http://127.0.0.1:9/v1/chat/completions",
                "body": json.dumps({"model": "m", "messages": [{"role": "user", "content": "Hi."}],
                                    "tools": [{"type": "function", "function": {"name": "t"}}]}),
                "headers": {"content-type": ["application/json"]}},
    "response": {"status": {"code": 200, "message": "OK"}, "headers": {"server": ["x"]},
                 "body": {"string": json.dumps({"choices": [{"message": {"content": "Hello."}}]})}},
}]}))
CASSETTE_KEYS = ["interactions", "version", "request", "response", "method", "uri", "body",
                 "headers", "status", "code", "message", "string", "json", "content-type", "server"]


def _check_cassette(text: str) -> None:
    """Load and shape-check as a replay does (vcrpy's deserialize through the serializer, which
    loads the text with `load_yaml` and checks it with `to_vcr`, once); if it passes, vcrpy builds
    its requests from it without a complaint."""
    from vcr.serialize import deserialize

    try:
        deserialize(text, ReadableSerializer(source="c.yaml"))
    except CassetteError as exc:
        assert str(exc).startswith("cassette c.yaml "), str(exc)


@FAST
@given(st.text(max_size=300))
@example("a: &a [*a]")
@example("? [a]\n: b")
@example("a: !!float x")
@example("tools: &id001\n- a\nversion: 1\ninteractions: [{request: *id001}]\n")
def test_any_text_is_a_cassette_or_a_cassette_error(text: str) -> None:
    _check_cassette(text)


@FAST
@given(yaml_values)
def test_any_yaml_structure_is_a_cassette_or_a_cassette_error(data: Any) -> None:
    _check_cassette(yaml.safe_dump(data))


def _interaction_paths() -> st.SearchStrategy[Any]:
    """The sample cassette with one field deep inside its first interaction replaced or removed."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        data = copy.deepcopy(CASSETTE)
        node: Any = data["interactions"][0]
        for _ in range(draw(st.integers(1, 4))):
            if not isinstance(node, dict) or not node:
                break
            key = draw(st.sampled_from(sorted(node)))
            if not isinstance(node[key], dict) or draw(st.booleans()):
                if draw(st.booleans()):
                    node[key] = draw(yaml_values)
                else:
                    del node[key]
                break
            node = node[key]
        return data

    return build()


@FAST
@given(_interaction_paths() | _mutated(CASSETTE, CASSETTE_KEYS, yaml_values))
def test_a_mutated_cassette_is_a_cassette_or_a_cassette_error(data: Any) -> None:
    _check_cassette(yaml.safe_dump(data))


@FAST
@given(text=st.just(dump_yaml(CASSETTE)), cut=st.integers(0, 2_000), insert=st.text(max_size=5))
def test_an_edited_cassette_text_is_a_cassette_or_a_cassette_error(
    text: str, cut: int, insert: str,
) -> None:
    cut = min(cut, len(text))
    _check_cassette(text[:cut] + insert + text[cut + 1:])


@st.composite
def shared_structures(draw: st.DrawFn) -> Any:
    """Lists of lists sharing their members: the dumper writes them as anchors and aliases.

    The leaves are long strings, so that expanding even the largest structure the bound lets
    through stays quick under tracemalloc (which slows each allocation); the billion laughs
    below covers short ones.
    """
    leaf = draw(st.sampled_from("xyz")) * draw(st.sampled_from([50, 500, 5_000]))
    level: Any = [leaf] * draw(st.integers(1, 10))
    for _ in range(draw(st.integers(0, 8))):
        level = [level] * draw(st.integers(1, 10))
    return {"version": 1, "interactions": [{
        "request": {"method": "POST", "uri": "http://h/", "body": {"json": {"messages": level}}},
        "response": {"status": {"code": 200}, "body": {"string": ""}},
    }]}


@settings(FAST, max_examples=max(1, EXAMPLES // 3))
@given(shared_structures())
def test_aliased_structures_load_or_are_refused_in_bounded_memory(data: Any) -> None:
    text = dump_yaml(data)
    assert len(text) < 200_000  # the aliased lists keep the text small, whatever it expands to
    tracemalloc.start()
    try:
        _check_cassette(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # At the bound a body holds 16 characters a value (64 MB), as text and as bytes, with the parse.
    assert peak < 3 * 16 * MAX_EXPANDED


def test_the_billion_laughs_stays_under_50_mb() -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    text = "\n".join([*lines, "version: 1", "interactions:",
                      "- request: {method: GET, uri: 'http://h/', body: {json: *i}}", ""])
    tracemalloc.start()
    try:
        with pytest.raises(CassetteError, match="^cassette c.yaml expands its aliases"):
            to_vcr(load_yaml(text, "c.yaml"), "c.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000


# (d) goldens

GOLDEN = {
    "id": "fx", "status": "ok", "pass": True, "answer": "Done.",
    "turns": [[{"name": "file_read", "arguments": {"path": "a.txt"}}]],
    "metrics": {"accuracy": 1.0, "calls": 1, "redundant": 0, "errors": 0, "tokens": 5},
}
GOLDEN_KEYS = [*GOLDEN, *GOLDEN["metrics"]]
KEY = RunKey("openai", "m")


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> GoldenStore:
    return GoldenStore(tmp_path_factory.mktemp("golden"))


def _check_golden(store: GoldenStore, raw: bytes) -> None:
    path = store.path(KEY, "fx")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    try:
        data = store.load(KEY, "fx")
    except GoldenError as exc:
        assert str(exc).startswith(f"golden {path} "), str(exc)
    else:
        assert isinstance(data, dict) and data == json.loads(raw)


@FAST
@given(raw=st.binary(max_size=200))
@example(raw=b'{"turns": null}')
@example(raw=b'{"id": NaN}')
@example(raw=b"[" * 5_000)
def test_any_bytes_are_a_golden_or_a_golden_error(golden_store: GoldenStore, raw: bytes) -> None:
    _check_golden(golden_store, raw)


@FAST
@given(data=json_values | _mutated(GOLDEN, GOLDEN_KEYS, json_values))
def test_any_json_is_a_golden_or_a_golden_error(golden_store: GoldenStore, data: Any) -> None:
    _check_golden(golden_store, json.dumps(data).encode())


def test_the_unmutated_golden_loads(golden_store: GoldenStore) -> None:
    _check_golden(golden_store, json.dumps(GOLDEN).encode())
    assert golden_store.load(KEY, "fx") == GOLDEN
