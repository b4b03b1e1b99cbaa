"""The strict JSON reader (no NaN or Infinity, nesting bounded), then what it gives the CLI: a
fixture nested too deeply is skipped and named, a tool set so nested exits 2, and the rest runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replio_replay._runtime.jsonin import JsonProblem, deep_path, read_json
from replio_replay.errors import FixtureError
from replio_replay.fixtures.model import load_fixture
from tests.helpers import turn, write_json
from tests.plan.test_shards import replio


def nested(levels: int, leaf: Any = "x", key: str = "$not") -> Any:
    for _ in range(levels):
        leaf = {key: leaf}
    return leaf


@pytest.mark.parametrize(("text", "says"), [
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ("{not json", "not valid JSON at line 1, column 2"),
    ('{"expected": [{"arguments": {"n": [1, -1e999]}}]}', "the number at expected.0.arguments.n.1 is too large to be "
                                                         "read (beyond 1.8e308, it would be infinity)"),
    ("1e400", "the number at (top level) is too large"),
    ("[" * 50_000 + "]" * 50_000, "nested deeper than 100 levels"),
    (json.dumps({"expected": [{"arguments": {"path": nested(300)}}]}),
     "nested deeper than 100 levels (at expected.0.arguments.path...)"),
])
def test_what_json_replio_refuses_is_named(text: str, says: str) -> None:
    with pytest.raises(JsonProblem) as info:
        read_json(text)
    assert says in str(info.value)


def test_data_at_the_bound_is_taken() -> None:
    assert read_json(json.dumps(nested(99))) == nested(99)
    assert deep_path(nested(100)) is None and deep_path([nested(100)]) == "0.$not.$not.$not..."


def test_a_plugins_fixture_nested_too_deeply_is_a_fixture_error() -> None:
    with pytest.raises(FixtureError) as info:
        load_fixture({"task": "T", "expected": [{"name": "t", "arguments": {"q": nested(300)}}]},
                     source="plugin:deep fixture 'x'")
    assert "nests deeper than 100 levels at expected.0.arguments.q..." in str(info.value)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Fixtures `ok`, `not` (300 nested `$not`), `stub` (a stub answer 300 levels deep)."""
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                  "providers": {"mock": {"script": "script.json"}}})
    call = {"name": "file_read", "arguments": {"path": "a.txt"}}
    write_json(root / "script.json", {"*": [turn(call), turn(text="Done.")]})
    fixtures = {
        "ok": {"task": "T", "files": {"a.txt": "a"}, "expected": ["file_read"]},
        "not": {"task": "T", "expected": [{"name": "file_read", "arguments": {"path": nested(300)}}]},
        "stub": {"task": "T", "tools": {"t": {"description": "d", "result": nested(300, key="k")}}, "expected": []},
    }
    for fid, data in fixtures.items():
        write_json(root / ".replio" / "eval" / f"{fid}.json", data)
    return root


def test_fixtures_nested_too_deeply_are_skipped_and_named_and_the_rest_runs(project: Path) -> None:
    listed = replio(project, "list", ok=(1,))
    assert "Traceback" not in listed.stderr
    rows = listed.stdout.splitlines()[2:]
    assert [line.split() for line in rows[:-1]] == [["ok", "local"]]
    assert rows[-1].startswith("skipped 2 (see stderr for why): ")
    for fid in ("not", "stub"):
        assert f"eval/{fid}.json: nested deeper than 100 levels" in listed.stderr
    ran = replio(project, "run", "--no-cassettes", "--output", "json", ok=(0, 1))
    assert "Traceback" not in ran.stderr
    assert [f["id"] for f in json.loads(ran.stdout)["fixtures"]] == ["ok"]


def test_a_tool_set_nested_too_deeply_exits_2_naming_it(project: Path) -> None:
    path = write_json(project / ".replio" / "tools.json", {"tools": {"t": {"description": "d",
                                                                         "result": nested(260, key="k")}}})
    said = f"{path}: nested deeper than 100 levels (at tools.t.result.k...)"
    listed = replio(project, "list", ok=(0, 1, 2))  # list reports a broken tool set as it reports any
    assert said in listed.stderr and "Traceback" not in listed.stderr
    ran = replio(project, "run", "--no-cassettes", ok=(2,))
    assert said in ran.stderr and "Traceback" not in ran.stderr


def test_a_tool_set_too_deep_for_pythons_reader_is_named_by_list_and_run(project: Path) -> None:
    path = project / ".replio" / "tools.json"
    path.write_text('{"extends": ' + "[" * 5000 + "]" * 5000 + "}")
    said = f"{path}: nested deeper than 100 levels"
    listed = replio(project, "list", ok=(0, 1, 2))
    assert said in listed.stderr and "Traceback" not in listed.stderr
    ran = replio(project, "run", "--no-cassettes", ok=(2,))
    assert said in ran.stderr and "Traceback" not in ran.stderr


def test_a_mock_script_nested_too_deeply_is_a_config_error(project: Path) -> None:
    (project / "script.json").write_text('{"*": ' + "[" * 5000 + "]" * 5000 + "}")
    ran = replio(project, "run", "--no-cassettes", ok=(2,))
    assert "mock script" in ran.stderr and "nested deeper than 100 levels" in ran.stderr
    assert "Traceback" not in ran.stderr
