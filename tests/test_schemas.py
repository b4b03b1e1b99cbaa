"""The JSON Schemas published under docs/schema/: what the models make now, true to what replio
reads, and a `$schema` line at the top of each file is accepted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema_rs
import pytest

from replio_replay.schemas import SCHEMAS, main, schema_texts

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "docs" / "schema"


def _validator(name: str) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(json.loads((PUBLISHED / name).read_text(encoding="utf-8")))


def test_the_published_schemas_are_what_the_models_make_now() -> None:
    stale = [name for name, text in schema_texts().items()
             if not (PUBLISHED / name).is_file() or (PUBLISHED / name).read_text(encoding="utf-8") != text]
    assert stale == [], f"regenerate them: python -m replio_replay.schemas docs/schema ({stale})"
    assert sorted(p.name for p in PUBLISHED.glob("*.json")) == sorted(SCHEMAS)


def test_the_module_writes_every_schema(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 0
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == schema_texts()
    assert main([]) == 2


@pytest.mark.parametrize(("name", "files"), [
    ("fixture.schema.json", sorted((REPO / "replio_replay" / "fixtures" / "catalog").glob("*.json"))),
    ("config.schema.json", [REPO / ".replio" / "config.json"]),
    ("tool-set.schema.json", sorted((REPO / ".replio" / "tools").glob("*.json"))),
])
def test_the_repositorys_own_files_validate_against_the_schemas(name: str, files: list[Path]) -> None:
    validator = _validator(name)
    assert files
    problems = {f.name: [str(e) for e in validator.iter_errors(json.loads(f.read_text()))] for f in files}
    assert all(p == [] for p in problems.values()), problems


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_misspelt_key_is_refused_by_the_schema_as_by_replio(name: str) -> None:
    data = {"task": "List the files.", "expcted": ["list_dir"]} if name.startswith("fixture") else {"max_turn": 3}
    assert [e.instance_path for e in _validator(name).iter_errors(data)] == [[]]


def test_a_schema_line_is_accepted_in_each_file_a_user_writes(tmp_path: Path) -> None:
    """The config, the tool-set file and a fixture each start with `$schema`; the project lists and runs."""
    line = {"$schema": "https://example.invalid/replio/schema/"}
    files = {
        ".replio/config.json": {**line, "provider": "mock:scripted", "bundled": False,
                                "providers": {"mock": {"script": str(tmp_path / "script.json")}}},
        ".replio/tools.json": {**line, "disable": ["grep"]},
        ".replio/eval/hello.json": {**line, "task": "List the files.", "files": {"a.txt": "a\n"},
                                    "expected": ["list_dir"]},
    }
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(data), encoding="utf-8")
    script = {"hello": [{"tool_calls": [{"name": "list_dir", "arguments": {}}]}, {"text": "a.txt"}]}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    replio = str(Path(sys.executable).with_name("replio"))
    done = subprocess.run([replio, "eval", "--path", str(tmp_path), "run", "--output", "json"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert done.returncode == 0, done.stdout + done.stderr
    (fixture,) = json.loads(done.stdout)["fixtures"]
    assert (fixture["id"], fixture["pass"]) == ("hello", True)


def test_a_turn_written_as_text_is_accepted_by_the_schema_as_by_replio() -> None:
    from replio_replay.fixtures.model import load_fixture

    fixture = {"task": "Which orders are pending?", "turns": ["And the shipped ones?", {"user": "Thanks."}]}
    assert [t.user for t in load_fixture(fixture, source="f.json", default_id="f").turns or []] == [
        "And the shipped ones?", "Thanks."]
    assert list(_validator("fixture.schema.json").iter_errors(fixture)) == []
    assert len(list(_validator("fixture.schema.json").iter_errors({**fixture, "turns": [""]}))) == 1
