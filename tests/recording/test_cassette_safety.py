"""Hostile and damaged cassettes: alias bombs, cycles, deep nesting and wrong shapes are each a
CassetteError naming the file (and the interaction and field), fast and in little memory."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from replio_replay.cli import main
from replio_replay.errors import CassetteError
from replio_replay.recording.persister import AtomicPersister
from replio_replay.recording.serializer import ReadableSerializer, to_vcr
from replio_replay.recording.yamlcodec import MAX_EXPANDED, dump_yaml, load_yaml
from tests.support.llm_server import LLMServer
from tests.support.project import run_args

REPO = Path(__file__).resolve().parents[2]


def billion_laughs(levels: int = 9, fan: int = 10) -> str:
    """The classic: `fan` strings, then `levels - 1` lists of `fan` aliases of the one before."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * fan) + "]"]
    names = "abcdefghijklmnopqrstuvwxyz"
    for prev, name in zip(names, names[1 : levels]):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def bomb_cassette() -> str:
    """A cassette-shaped billion laughs, about the size of the issue's 7.7 KB one: every request
    body aliases it."""
    top = billion_laughs()
    interaction = (
        "- request:\n    method: POST\n    uri: http://127.0.0.1:9/v1/chat/completions\n"
        "    body:\n      json:\n        messages: *i\n    headers: {}\n"
        "  response:\n    status: {code: 200, message: OK}\n    headers: {}\n"
        "    body: {string: ''}\n"
    )
    return f"{top}version: 1\ninteractions:\n" + interaction * 30


def test_the_billion_laughs_cassette_is_refused_fast_and_small() -> None:
    text = bomb_cassette()
    assert 5_000 < len(text) < 10_000
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(CassetteError) as info:
            ReadableSerializer(source="bomb.yaml").deserialize(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2
    assert peak < 50_000_000
    expected = f"cassette bomb.yaml expands its aliases beyond {MAX_EXPANDED:,} values"
    assert str(info.value).startswith(expected)


def test_the_bomb_is_refused_by_the_persister_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb_cassette())
    with pytest.raises(CassetteError, match=f"cassette {path} expands its aliases"):
        AtomicPersister().load_cassette(path, ReadableSerializer(source=str(path)))


def test_a_document_just_under_the_bound_loads_in_bounded_memory() -> None:
    """30,000 copies of a 1,000-character string through aliased lists: 100 KB of YAML, 30 MB once
    written out, just under the bound."""
    leaf = "x" * 1_000
    level = [[[leaf] * 100] * 100] * 3
    data = {"version": 1, "interactions": [{
        "request": {"method": "POST", "uri": "http://h/", "body": {"json": {"messages": level}}},
        "response": {"status": {"code": 200}, "body": {"string": ""}},
    }]}
    text = dump_yaml(data)
    assert len(text) < 200_000
    tracemalloc.start()
    try:
        loaded = to_vcr(load_yaml(text, "big.yaml"), "big.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded["interactions"][0]["request"]["body"]) > 30_000_000
    assert peak < 100_000_000


def test_a_long_string_aliased_many_times_is_refused() -> None:
    """Few values, but each a long string: expanded, 200 KB times 20,000 is 4 GB of text."""
    text = f's: &s "{"x" * 200_000}"\nl: [' + ", ".join(["*s"] * 20_000) + "]\n"
    with pytest.raises(CassetteError, match="expands its aliases beyond"):
        load_yaml(text, "long.yaml")


def test_a_long_string_nested_in_aliased_lists_is_refused() -> None:
    text = (f's: &s "{"x" * 5_000}"\na: &a [' + ", ".join(["*s"] * 100) + "]\n"
            "b: &b [" + ", ".join(["*a"] * 100) + "]\nc: [" + ", ".join(["*b"] * 100) + "]\n")
    with pytest.raises(CassetteError, match="expands its aliases beyond"):
        load_yaml(text, "long.yaml")


def test_an_alias_bomb_in_the_shared_tool_block_is_refused() -> None:
    """The tool list is written once: its weight counts in each request aliasing it."""
    laughs = billion_laughs(levels=6).replace("\n", "\n  ").rstrip()
    text = (f"tools: &t\n- {{bomb: &z {{{laughs.replace(chr(10) + '  ', ', ')}}}}}\n"
            "version: 1\ninteractions:\n"
            + "- request: {method: POST, uri: 'http://h/', body: {json: {tools: *t}}}\n"
              "  response: {status: {code: 200}, body: {string: ''}}\n" * 40)
    with pytest.raises(CassetteError, match="expands its aliases beyond"):
        load_yaml(text, "tools.yaml")


@pytest.mark.parametrize(("text", "says"), [
    ("a: &a [1, *a]\n", "refers to itself through an alias at line 1"),
    ("a: &a {b: *a}\n", "refers to itself through an alias at line 1"),
    ("a: " + "[" * 150 + "]" * 150 + "\n", "nests deeper than 100 levels"),
    ("? [a, b]\n: c\n", "has a list or mapping as a key at line 1"),
    ("a: !!int x\n", "has a value its tag cannot hold at line 1"),
    ("a: !!bool maybe\n", "has a value its tag cannot hold at line 1"),
    ("a: " + "1" * 5_000 + "\n", "has a value its tag cannot hold at line 1"),
])
def test_documents_no_recording_holds_are_refused_naming_the_file(text: str, says: str) -> None:
    with pytest.raises(CassetteError) as info:
        load_yaml(text, "odd.yaml")
    assert str(info.value).startswith("cassette odd.yaml ") and says in str(info.value)


def test_a_hand_edited_cassette_may_use_yaml_merge_keys() -> None:
    """PyYAML's safe loader reads the whole of YAML a person may write, merge keys included."""
    text = "base: &base {code: 200, message: OK}\nstatus: {<<: *base, message: Fine}\n"
    assert load_yaml(text, "merge.yaml")["status"] == {"code": 200, "message": "Fine"}


def test_a_cassette_loads_as_pyyamls_safe_loader_reads_it() -> None:
    """The one-walk build gives PyYAML's data: every scalar tag a person may write, resolved
    implicitly or given, keys that are not text, and an alias the same object again."""
    text = ("a: &x {s: text, q: 'yes', n: ~, t: true, f: no, i: 0x1F, o: 0o17, e: 1.5e3, inf: -.inf,\n"
            "    when: 2026-12-07, at: 2026-12-07T04:00:00Z, bin: !!binary aGVsbG8=, tagged: !!str 12,\n"
            "    empty: '', blank: , 7: seven, 1.5: half, true: yes}\n"
            "b: [*x, *x, ~, !!int '12', !!float '1']\n")
    loaded = load_yaml(text, "tags.yaml")
    assert loaded == yaml.load(text, Loader=yaml.CSafeLoader)
    assert loaded["b"][0] is loaded["a"] and loaded["b"][1] is loaded["a"]
    assert loaded["a"]["bin"] == b"hello" and loaded["a"][7] == "seven" and loaded["a"]["f"] is False


def test_the_repositorys_cassettes_load_as_pyyamls_safe_loader_reads_them() -> None:
    files = sorted((REPO / "cassettes").rglob("*.yaml"))[::3]  # every third: each is parsed twice
    assert len(files) > 20, "the repository's cassettes are missing"
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert load_yaml(text, str(file)) == yaml.load(text, Loader=yaml.CSafeLoader), file


def test_nesting_within_the_bound_loads() -> None:
    assert load_yaml("a: " + "[" * 90 + "]" * 90 + "\n", "ok.yaml")["a"]


def test_every_cassette_in_the_repository_still_loads() -> None:
    files = sorted((REPO / "cassettes").rglob("*.yaml"))
    assert files, "the repository's cassettes are missing"
    for file in files:
        data = to_vcr(load_yaml(file.read_text(encoding="utf-8"), str(file)), str(file))
        assert data["interactions"], file


def test_the_repositorys_cassettes_are_saved_again_byte_for_byte(tmp_path: Path) -> None:
    """Loaded into a vcrpy Cassette and written back through vcrpy's serialize, the readable
    serializer and the atomic persister, a cassette is the same file (every sixth, and every one
    with MCP servers: all 962 of the repository's were, once)."""
    from replio_replay.recording.cassette import open_cassette
    from replio_replay.recording.modes import RecordMode

    everything = sorted((REPO / "cassettes").rglob("*.yaml"))
    files = [f for i, f in enumerate(everything) if i % 6 == 0 or "\nmcp:" in f.read_text(encoding="utf-8")]
    assert len(files) > 12, "the repository's cassettes are missing"
    copy = tmp_path / "c.yaml"
    for file in files:
        copy.write_bytes(file.read_bytes())
        serializer = ReadableSerializer(source=str(copy))
        cassette, _ = open_cassette(copy, RecordMode.NEW_EPISODES, serializer, AtomicPersister(), load=True)
        serializer.header, serializer.mcp = serializer.loaded_header, serializer.loaded_mcp
        cassette._save(force=True)
        assert copy.read_bytes() == file.read_bytes(), file


def _long_conversation(turns: int, output: int) -> dict[str, Any]:
    """A recording far longer than any real one: every request resends all that came before."""
    tools = [{"type": "function",
              "function": {"name": f"tool_{i}", "description": "Does a thing. " * 20,
                           "parameters": {"type": "object", "properties": {}}}}
             for i in range(20)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    interactions = []
    for turn in range(turns):
        body = {"model": "m", "messages": list(messages), "tools": tools}
        interactions.append({
            "request": {"method": "POST", "uri": "http://h/v1/chat/completions",
                        "body": json.dumps(body), "headers": {}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                         "body": {"string": json.dumps({"choices": []}).encode()}},
        })
        messages.append({"role": "tool", "content": f"{turn}\n" + "y" * output})
    return {"version": 1, "interactions": interactions}


def test_a_long_real_shaped_conversation_is_well_under_the_bound() -> None:
    """80 turns with 2 KB of tool output each: 250 KB of YAML that expands to 7 MB of request JSON
    (weighing about 470,000 values, a quarter of the bound). It loads."""
    serializer = ReadableSerializer()
    loaded = serializer.deserialize(serializer.serialize(_long_conversation(80, 2_000)))
    assert len(loaded["interactions"]) == 80
    assert sum(len(i["request"]["body"]) for i in loaded["interactions"]) > 7_000_000


# Wrong shapes: each names the file, the interaction and the field.

def _interaction() -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": "http://127.0.0.1:9/v1/chat/completions",
                    "body": {"json": {"model": "m"}}, "headers": {"accept": ["application/json"]}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {"server": ["x"]},
                     "body": {"json": {"choices": []}}},
    }


def _broken(where: str, value: Any) -> dict[str, Any]:
    second = _interaction()
    node: Any = second
    *parents, last = where.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    return {"version": 1, "interactions": [_interaction(), second]}


@pytest.mark.parametrize(("where", "value", "field"), [
    # the repros
    ("response.headers", ["server", "x"], "response.headers must be a mapping"),
    ("response.body", {"string": 5}, "response.body.string must be text or binary data"),
    ("response.status.code", "200", "response.status.code must be an HTTP status code"),
    # and the rest of what vcrpy and the transport read
    ("request", ["POST"], "request must be a mapping"),
    ("request.method", 1, "request.method must be text"),
    ("request.uri", None, "request.uri must be a URL"),
    ("request.uri", "http://[::1", "request.uri is not a URL"),
    ("request.headers", "accept", "request.headers must be a mapping"),
    ("request.headers.accept", 3, "request.headers.accept must be text or a list of text"),
    ("request.headers.accept", [1], "request.headers.accept must be text or a list of text"),
    ("request.body", 3, "request.body must be text, binary data or a mapping with only 'json'"),
    ("request.body", {"string": "x"}, "request.body must be text, binary data"),
    ("request.body", {"json": {1: "a", "b": 2}}, "request.body.json cannot be written as JSON"),
    ("request.body", "[" * 500 + "]" * 500, "request.body holds JSON nested deeper than 100"),
    ("request.extra", 1, "request has the unknown key 'extra'"),
    ("response", "OK", "response must be a mapping"),
    ("response.status", 200, "response.status must be a mapping"),
    ("response.status.code", True, "response.status.code must be an HTTP status code"),
    ("response.status.code", 99, "response.status.code must be an HTTP status code"),
    ("response.status.message", 5, "response.status.message must be text"),
    ("response.headers.server", "é", "response.headers.server is not ASCII"),
    ("response.headers.server", {"a": 1}, "response.headers.server must be text or a list of text"),
    ("response.body", "plain", "response.body must be a mapping"),
    ("response.body", {"string": None}, "response.body.string must be text or binary data"),
    ("response.body", {"string": "", "json": {}}, "response.body has both 'json' and 'string'"),
])
def test_wrong_shapes_name_file_interaction_and_field(where: str, value: Any, field: str) -> None:
    with pytest.raises(CassetteError) as info:
        to_vcr(_broken(where, value), "c.yaml")
    message = str(info.value)
    assert message.startswith("cassette c.yaml has the wrong shape: in interaction 2, "), message
    assert field in message, message


@pytest.mark.parametrize("data", [None, [], {"interactions": 3}, {"interactions": [3]}])
def test_a_document_that_is_not_a_cassette_names_the_file(data: Any) -> None:
    with pytest.raises(CassetteError, match="^cassette c.yaml has the wrong shape"):
        to_vcr(data, "c.yaml")


def test_accepted_variants_are_normalised_for_vcrpy_and_the_transport(tmp_path: Path) -> None:
    """One header value as text, an empty list, a binary body: vcrpy and httpx get lists, bytes."""
    data = _broken("response.headers", {"server": "x", "empty": []})
    data["interactions"][1]["request"]["headers"] = {"accept": "application/json", "gone": []}
    data["interactions"][1]["response"]["body"] = {"string": b"\x00binary"}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    serializer = ReadableSerializer(source=str(path))
    requests, responses = AtomicPersister().load_cassette(path, serializer)
    assert requests[1].headers == {"accept": "application/json"}
    assert responses[1]["headers"] == {"server": ["x"]}
    assert responses[1]["body"]["string"] == b"\x00binary"
    assert responses[0]["body"]["string"] == b'{"choices":[]}'


# Through the CLI: a broken cassette is an error for its fixture; the other one still runs.

def _cli(project: Path, *extra: str) -> Result:
    return CliRunner().invoke(main, run_args(project, *extra), catch_exceptions=False)


def _record(project: Path, agent: LLMServer) -> Path:
    """Record alpha and beta; the path of beta's cassette."""
    assert _cli(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once").exit_code == 0
    return project / "cassettes" / "openai" / "test-model" / "beta.yaml"


def _replay_with(project: Path, agent: LLMServer, text: str) -> tuple[int, dict[str, Any], Path]:
    path = _record(project, agent)
    path.write_text(text)
    result = _cli(project, "--record-mode", "none")
    return result.exit_code, json.loads(result.stdout), path


def test_a_bomb_cassette_is_an_error_for_its_fixture(project: Path, agent: LLMServer) -> None:
    code, run, path = _replay_with(project, agent, bomb_cassette())
    alpha, beta = run["fixtures"]
    assert code == 1
    assert beta["status"] == "error" and str(path) in beta["error"]
    assert "expands its aliases" in beta["error"]
    assert alpha["status"] == "ok"


def test_wrong_types_in_a_recorded_cassette_are_named_errors(
    project: Path, agent: LLMServer,
) -> None:
    path = _record(project, agent)
    recorded = path.read_text()
    for old, new, field in [
        ("    status:\n      code: 200", "    status:\n      code: '200'", "response.status.code"),
        ("    body:\n      json:\n        choices:",
         "    body:\n      string: 5\n      jsn:\n        choices:", "response.body.string"),
    ]:
        assert old in recorded
        path.write_text(recorded.replace(old, new, 1))
        beta = json.loads(_cli(project, "--record-mode", "none").stdout)["fixtures"][1]
        assert beta["status"] == "error" and "internal error" not in beta["error"]
        assert str(path) in beta["error"] and "interaction 1" in beta["error"]
        assert field in beta["error"]
