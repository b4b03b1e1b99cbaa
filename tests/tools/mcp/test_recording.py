"""The cassette's `mcp:` section: reading it back (errors naming the field), replay lookup, drift names."""

from __future__ import annotations

import json

import pytest

from replio_replay.errors import CassetteError
from replio_replay.tools.mcp.recording import (
    CallRecord,
    ServerRecord,
    call_drift,
    parse_records,
    records_json,
    tools_drift,
)

TOOLS = [{"name": "git_log", "description": "Shows the commit logs", "inputSchema": {"type": "object"}},
         {"name": "git_status", "description": "Shows the working tree status", "inputSchema": {"type": "object"}}]


def _record() -> ServerRecord:
    return ServerRecord({"name": "mcp-git", "version": "1"}, [dict(t) for t in TOOLS], [
        CallRecord("git_log", {"repo_path": "."}, {"content": [{"type": "text", "text": "commit abc"}]}),
        CallRecord("git_log", {"repo_path": "."}, {"content": [{"type": "text", "text": "commit def"}]}),
    ])


def test_records_round_trip_through_json() -> None:
    data = records_json({"git": _record()})
    assert parse_records(data, "c.yaml") == {"git": _record()}
    assert parse_records(None, "c.yaml") == {}


@pytest.mark.parametrize(("data", "field"), [
    (["git"], "mcp must map server names"),
    ({"git": 3}, "mcp.git must be a mapping"),
    ({"git": {"tools": [{"description": "x"}]}}, "mcp.git.tools must be a list of tools"),
    ({"git": {"calls": [{"tool": "a", "result": "text"}]}}, "mcp.git.calls[1].result must be"),
    ({"git": {"calls": [{"tool": "a", "arguments": [1], "result": {}}]}}, "mcp.git.calls[1].arguments"),
    ({"git": {"server": "x"}}, "mcp.git.server must be a mapping"),
])
def test_a_malformed_section_names_the_cassette_and_field(data: object, field: str) -> None:
    with pytest.raises(CassetteError, match="c.yaml") as err:
        parse_records(data, "c.yaml")
    assert field in str(err.value)


def test_replay_takes_recorded_calls_in_order_each_once() -> None:
    record = _record()
    first = record.take("git_log", {"repo_path": "."})
    second = record.take("git_log", {"repo_path": "."})
    assert first is not None and second is not None
    assert (first.result["content"][0]["text"], second.result["content"][0]["text"]) == ("commit abc", "commit def")
    assert record.take("git_log", {"repo_path": "."}) is None
    assert record.take("git_status", {"repo_path": "."}) is None


def test_a_changed_description_is_named_by_tool() -> None:
    live = _record()
    live.tools[0]["description"] = "Shows the last commits"
    (change,) = tools_drift("git", _record(), live)
    assert change.describe() == ('mcp git: tools[git_log].description changed: "Shows the commit logs" -> '
                                 '"Shows the last commits"')


def test_added_and_removed_tools_and_a_new_version_are_named() -> None:
    live = _record()
    live.server["version"] = "2"
    live.tools = [live.tools[0], {"name": "git_show", "inputSchema": {"type": "object"}}]
    paths = {(c.path, c.kind) for c in tools_drift("git", _record(), live)}
    assert paths == {("mcp git: server.version", "changed"), ("mcp git: tools[git_show]", "added"),
                     ("mcp git: tools[git_status]", "removed")}


def test_a_changed_schema_is_named_by_tool_and_keyword() -> None:
    live = _record()
    live.tools[1]["inputSchema"] = {"type": "object", "required": ["repo_path"]}
    (change,) = tools_drift("git", _record(), live)
    assert (change.path, change.kind) == ("mcp git: tools[git_status].inputSchema.required", "added")


def test_call_drift_names_the_call_number_and_tool() -> None:
    recorded = _record().calls[1]
    live = CallRecord("git_log", {"repo_path": "."}, {"content": [{"type": "text", "text": "commit xyz"}]})
    (change,) = call_drift("git", 2, recorded, live)
    assert change.describe() == 'mcp git: call 2 git_log result changed: "commit def" -> "commit xyz"'
    assert call_drift("git", 2, recorded, CallRecord("git_log", {"repo_path": "."}, recorded.result)) == []
    (extra,) = call_drift("git", 3, None, live)
    assert (extra.path, extra.kind) == ("mcp git: call 3 git_log", "added")
    (args,) = call_drift("git", 2, recorded, CallRecord("git_log", {"repo_path": "x"}, recorded.result))
    assert args.path == "mcp git: call 2 git_log arguments"


def test_a_recording_keeps_media_as_its_size_and_reads_the_same() -> None:
    import base64

    from replio_replay.tools.mcp.convert import result_text
    from replio_replay.tools.mcp.recording import recordable

    picture = base64.b64encode(b"\x89PNG" * 1000).decode()
    result = {"content": [
        {"type": "image", "data": picture, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": base64.b64encode(b"12345").decode()}},
        {"type": "text", "text": "x" * 1000},
    ]}
    kept = recordable(result)
    assert kept["content"][0] == {"type": "image", "dataBytes": 4000, "mimeType": "image/png"}
    assert kept["content"][1]["resource"] == {"uri": "file:///b.bin", "blobBytes": 5}
    assert kept["content"][2] == result["content"][2]
    assert result_text(kept) == result_text(result)
    assert result_text(kept).splitlines()[:2] == ["[image image/png, 4,000 bytes]", "[resource file:///b.bin, 5 bytes]"]
    assert recordable({"content": "odd"}) == {"content": "odd"}


@pytest.mark.parametrize("error", [False, True])
def test_a_recording_keeps_no_more_of_a_result_than_the_model_saw_whatever_its_blocks(error: bool) -> None:
    from replio_replay.tools.mcp.convert import result_text
    from replio_replay.tools.mcp.recording import recordable
    from replio_replay.tools.toolbox import RESULT_CAP, _capped

    texts = [f"{i:06d}" + "x" * 198_994 for i in range(30)]  # 6 MB, each block under any per-block cap
    result = {"content": [{"type": "text", "text": t} for t in texts], "isError": error,
              "structuredContent": {"result": texts}}
    kept = recordable(result)
    assert len(json.dumps(kept)) < RESULT_CAP + 200 and "structuredContent" not in kept
    assert _capped(result_text(kept)) == _capped(result_text(result))  # what the model is told, replayed
    assert _capped(result_text(kept)).endswith(f"(output cut at {RESULT_CAP} characters)")
    assert recordable(kept) == kept  # a live result is compared in the recorded form
