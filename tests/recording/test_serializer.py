"""The readable serializer on plain data: round trip, aliases, errors, and the paused GC."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from replio_replay.errors import CassetteError
from replio_replay.recording.serializer import ReadableSerializer, load_cassette_yaml
from replio_replay.recording.yamlcodec import load_yaml

TOOLS = [{"type": "function", "function": {"name": "file_read", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]


def _exchange(messages: list[dict[str, Any]], answer: str) -> dict[str, Any]:
    body = {"model": "m", "messages": messages, "tools": TOOLS}
    reply = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
    return {
        "request": {"method": "POST", "uri": "http://127.0.0.1:9/v1/chat/completions",
                    "body": json.dumps(body), "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                     "body": {"string": json.dumps(reply).encode()}},
    }


def _cassette() -> dict[str, Any]:
    first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Read\nthe file."}]
    second = [*first, {"role": "assistant", "content": "It says hi."}, {"role": "user", "content": "Again."}]
    return {"version": 1, "interactions": [_exchange(first, "It says hi."), _exchange(second, "Still hi.")]}


@pytest.fixture
def gc_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_round_trip_gives_vcrpy_the_same_bodies() -> None:
    serializer = ReadableSerializer(header={"provider": "openai"})
    loaded = serializer.deserialize(serializer.serialize(_cassette()))
    for original, back in zip(_cassette()["interactions"], loaded["interactions"], strict=True):
        assert json.loads(back["request"]["body"]) == json.loads(original["request"]["body"])
        assert json.loads(back["response"]["body"]["string"]) == json.loads(original["response"]["body"]["string"])
    assert serializer.loaded_header == {"provider": "openai"}


def test_repeated_messages_and_tools_are_written_once() -> None:
    text = ReadableSerializer().serialize(_cassette())
    assert text.count("Be brief.") == 1
    assert text.count("Read a file.") == 1
    assert "Read\n" in text and "|" in text  # multi-line text as a literal block


def test_the_tool_list_is_a_top_level_block_each_request_aliases() -> None:
    text = ReadableSerializer(header={"provider": "openai"}).serialize(_cassette())
    assert [line for line in text.splitlines() if line[:1].isalpha()] == [
        "replio:", "tools: &id001", "version: 1", "interactions:"
    ]
    assert text.count("tools: *id001") == 2


def test_loading_with_the_shared_block_equals_a_whole_parse() -> None:
    text = ReadableSerializer(header={"provider": "openai"}).serialize(_cassette())
    assert load_cassette_yaml(text, "c.yaml") == load_yaml(text, "c.yaml")


def test_cassettes_with_the_same_tool_block_share_one_parsed_list() -> None:
    one = load_cassette_yaml(ReadableSerializer(header={"n": 1}).serialize(_cassette()), "1.yaml")
    two = load_cassette_yaml(ReadableSerializer(header={"n": 2}).serialize(_cassette()), "2.yaml")
    assert one["tools"] is two["tools"]
    assert two["interactions"][1]["request"]["body"]["json"]["tools"] is one["tools"]


def test_an_edited_tool_block_is_parsed_for_itself() -> None:
    text = ReadableSerializer().serialize(_cassette())
    load_cassette_yaml(text, "old.yaml")
    edited = load_cassette_yaml(text.replace("Read a file.", "Read one file."), "new.yaml")
    assert edited["tools"][0]["function"]["description"] == "Read one file."
    assert edited["interactions"][0]["request"]["body"]["json"]["tools"] is edited["tools"]


@pytest.mark.parametrize("edit", [
    ("- function:", "# a note\n- function:"),  # a comment inside the block
    ("version: 1", "# a note\nversion: 1"),  # a comment after it
    ("tools: &id001", "tools: &id001\n\n"),  # blank lines
])
def test_hand_edited_blocks_load_as_a_whole_parse_would(edit: tuple[str, str]) -> None:
    text = ReadableSerializer().serialize(_cassette()).replace(*edit, 1)
    assert load_cassette_yaml(text, "c.yaml") == load_yaml(text, "c.yaml")


def test_a_cassette_without_the_block_is_parsed_whole() -> None:
    data = {"interactions": [{"request": {"body": {"json": {"tools": TOOLS}}}}]}
    text = yaml.safe_dump(data)
    assert load_cassette_yaml(text, "plain.yaml") == data


def test_an_error_after_the_block_names_the_files_own_line() -> None:
    text = ReadableSerializer().serialize(_cassette())
    lines = text.splitlines()
    broken = "\n".join([*lines[:-1], "  oops: [", ""])
    with pytest.raises(CassetteError, match=f"does not parse at line {len(lines) + 1}"):
        load_cassette_yaml(broken, "c.yaml")


def test_a_syntax_error_names_the_source_and_line() -> None:
    with pytest.raises(CassetteError, match=r"cassette c\.yaml does not parse at line 3"):
        load_yaml("a: 1\nb: [\n", "c.yaml")


def test_loading_resumes_the_gc_even_after_an_error(gc_enabled: None) -> None:
    load_yaml("a: [1, 2]\n", "ok.yaml")
    assert gc.isenabled()
    with pytest.raises(CassetteError):
        load_yaml("a: [\n", "bad.yaml")
    assert gc.isenabled()


def test_loading_leaves_a_disabled_gc_disabled(gc_enabled: None) -> None:
    gc.disable()
    load_yaml("a: 1\n", "ok.yaml")
    assert not gc.isenabled()


def test_concurrent_loads_leave_the_gc_enabled(gc_enabled: None) -> None:
    text = ReadableSerializer().serialize(_cassette())
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                ReadableSerializer().deserialize(text)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert gc.isenabled()


def test_loading_sets_off_no_collection_per_cassette(gc_enabled: None) -> None:
    """The node tree is freed before the GC resumes, so loads do not each trigger a collection."""
    text = ReadableSerializer().serialize(_cassette())
    keep = []
    gc.collect()
    before = gc.get_stats()[0]["collections"]
    for _ in range(200):
        keep.append(load_yaml(text, "c.yaml"))
    assert gc.get_stats()[0]["collections"] - before < 20
