"""Cassettes loaded once per content: kept in the cache folder, never stale (the store itself,
its damage and pruning, is tested in tests/test_derived.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import CassetteError
from replio_replay.recording import parsecache, serializer
from replio_replay.recording.parsecache import parsed
from replio_replay.recording.serializer import ReadableSerializer
from replio_replay.recording.yamlcodec import load_yaml

TEXT = "version: 1\ninteractions:\n- request: {method: POST, body: {a: [1, 2.5, true, null]}}\n"


class Counting:
    """A parser that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> Any:
        self.calls += 1
        return load_yaml(text, "c.yaml")


def test_a_text_is_parsed_once_then_read_back_equal(tmp_path: Path) -> None:
    parse = Counting()
    first = parsed(TEXT, parse, tmp_path)
    again = parsed(TEXT, parse, tmp_path)
    assert parse.calls == 1
    assert again == first == {"version": 1, "interactions": [
        {"request": {"method": "POST", "body": {"a": [1, 2.5, True, None]}}}]}
    assert [p.suffix for p in tmp_path.iterdir()] == [".marshal"]


def test_an_edited_text_is_parsed_again(tmp_path: Path) -> None:
    parse = Counting()
    parsed(TEXT, parse, tmp_path)
    assert parsed(TEXT.replace("2.5", "3.5"), parse, tmp_path)["interactions"][0]["request"]["body"]["a"][1] == 3.5
    assert parse.calls == 2


def test_a_changed_parser_is_a_fresh_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The entry's name covers the parser's files (replio's and PyYAML's): an upgrade or an edit
    # of one never meets what the old parser gave. Here a stand-in module takes their place.
    (tmp_path / "lib").mkdir()
    module = tmp_path / "lib" / "standin_parser.py"
    module.write_text("VERSION = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    monkeypatch.setattr(parsecache, "PARSER_MODULES", ("standin_parser",))
    parsecache._reader.cache_clear()
    parse, cache = Counting(), tmp_path / "cache"
    parsed(TEXT, parse, cache)
    module.write_text("VERSION = 22\n")
    parsecache._reader.cache_clear()  # as a new process finds it
    parsed(TEXT, parse, cache)
    parsed(TEXT, parse, cache)
    assert parse.calls == 2
    assert len(list(cache.iterdir())) == 2
    monkeypatch.undo()
    parsecache._reader.cache_clear()


def test_the_parser_files_are_found_without_importing_yaml() -> None:
    code = ("import sys\nfrom replio_replay.recording import parsecache\nparsecache._key('x')\n"
            "print('yaml' in sys.modules, len(parsecache.PARSER_MODULES))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "4"]


def test_a_cassette_is_loaded_and_checked_once_then_read_back_equal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = ReadableSerializer(header={"provider": "openai"}).serialize(
        {"version": 1, "interactions": [{
            "request": {"method": "POST", "uri": "http://127.0.0.1:9/v1/chat/completions",
                        "body": json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
                        "headers": {}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                         "body": {"string": json.dumps({"choices": []}).encode()}}}]})
    checks = []
    real = serializer.to_vcr
    monkeypatch.setattr(serializer, "to_vcr", lambda data, source: checks.append(source) or real(data, source))
    first, again = ReadableSerializer(source="a.yaml"), ReadableSerializer(source="b.yaml")
    cassette = first.deserialize(text)
    assert again.deserialize(text) == cassette
    assert checks == ["a.yaml"]  # the second was read back: neither parsed nor checked
    assert again.loaded_header == first.loaded_header == {"provider": "openai"}
    body = cassette["interactions"][0]["request"]["body"]
    assert body == '{"messages":[{"content":"hi","role":"user"}],"model":"m"}'  # the canonical text vcrpy compares


def test_a_cassette_that_does_not_load_is_not_kept(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cassette c.yaml does not parse"):
        parsed("a: [1\n", Counting(), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_shared_values_stay_shared(tmp_path: Path) -> None:
    text = "tools: &t [{name: a}]\nrequests:\n- {tools: *t}\n- {tools: *t}\n"
    parsed(text, Counting(), tmp_path)
    data = parsed(text, Counting(), tmp_path)
    assert data["requests"][0]["tools"] is data["requests"][1]["tools"] is data["tools"]


def test_a_replay_fills_the_cache_and_replays_the_same_from_it(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "CI": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path),
           "TMPDIR": str(tmp_path)}
    args = [str(Path(sys.executable).with_name("replio")), "eval", "--path", str(repo), "run", "--tag", "stub",
            "--output", "json", "--strict"]

    def replay() -> dict[str, Any]:
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr + done.stdout[-2000:]
        report = json.loads(done.stdout)
        for fixture in report["fixtures"]:
            fixture.pop("seconds", None)
        return report

    cold = replay()
    entries = sorted((tmp_path / "cache" / "replio" / "cassettes").iterdir())
    assert len(entries) == len(cold["fixtures"]) > 0
    assert replay() == cold
    assert sorted((tmp_path / "cache" / "replio" / "cassettes").iterdir()) == entries  # read, not written again
