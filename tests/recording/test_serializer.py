"""The readable serializer on plain data: round trip, aliases, errors, and the paused GC."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replio_replay.errors import CassetteError
from replio_replay.recording.serializer import ReadableSerializer
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


def test_an_error_after_the_block_names_the_files_own_line() -> None:
    text = ReadableSerializer().serialize(_cassette())
    lines = text.splitlines()
    broken = "\n".join([*lines[:-1], "  oops: [", ""])
    with pytest.raises(CassetteError, match=f"does not parse at line {len(lines) + 1}"):
        load_yaml(broken, "c.yaml")


def test_a_syntax_error_names_the_source_and_line() -> None:
    with pytest.raises(CassetteError, match=r"cassette c\.yaml does not parse at line 3"):
        load_yaml("a: 1\nb: [\n", "c.yaml")




def test_json_bodies_are_stored_with_their_keys_sorted_at_every_level_a_key_given_twice_its_last_value() -> None:
    exchange = _exchange([{"role": "user", "content": "Hi."}], "Hello.")
    exchange["request"]["body"] = '{"z": 1, "messages": [{"role": "user", "content": "Hi.", "a": {"y": 1, "b": 2}}], ' \
                                  '"model": "m", "z": 2}'
    serializer = ReadableSerializer()
    data = load_yaml(serializer.serialize({"version": 1, "interactions": [exchange]}), "<test>")
    body = data["interactions"][0]["request"]["body"]["json"]
    assert list(body) == ["messages", "model", "z"] and body["z"] == 2
    assert list(body["messages"][0]) == ["a", "content", "role"] and list(body["messages"][0]["a"]) == ["b", "y"]
    assert list(data["interactions"][0]["response"]["body"]["json"]["choices"][0]["message"]) == ["content", "role"]
