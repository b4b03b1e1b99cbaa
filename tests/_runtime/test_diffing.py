"""Structural diffs as readable changes: equal values give none, long texts show the part that differs."""

from __future__ import annotations

from replio_replay._runtime.diffing import Change, changes
from replio_replay.recording.requests import keyed_tools, request_changes

LONG = "Read a text file. Returns numbered lines; use offset and limit to page through long files."


def test_equal_structures_give_no_changes() -> None:
    assert changes({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []


def test_a_long_changed_text_shows_where_it_differs_not_two_equal_starts() -> None:
    new = LONG.replace("long files", "really long files")
    line = Change("tools[file_read].description", "changed", LONG, new).describe()
    old_part, new_part = line.split(": ", 1)[1].split(" -> ")
    assert "long files" in old_part and "really long files" in new_part
    assert old_part != new_part
    assert old_part.startswith("...") and new_part.startswith("...")


def test_short_texts_are_shown_whole() -> None:
    assert Change("answer", "answer_changed", "yes", "no").describe() == 'answer answer_changed: "yes" -> "no"'


def test_added_and_removed_show_one_side() -> None:
    assert Change("turns[1]", "turn_added", None, [1]).describe() == "turns[1] turn_added: [1]"
    assert Change("x", "removed", 5, None).describe() == "x removed: 5"


def test_tools_are_keyed_by_name_in_every_wire_format() -> None:
    openai = {"tools": [{"type": "function", "function": {"name": "grep", "description": "d", "parameters": {}}}]}
    anthropic = {"tools": [{"name": "grep", "description": "d", "input_schema": {}}]}
    assert keyed_tools(openai) == {"tools": {"grep": {"description": "d", "parameters": {}}}}
    assert keyed_tools(anthropic) == {"tools": {"grep": {"description": "d", "input_schema": {}}}}
    responses = {"tools": [{"type": "function", "name": "grep", "description": "d", "parameters": {}, "strict": False}]}
    assert keyed_tools(responses) == {"tools": {"grep": {"type": "function", "description": "d", "parameters": {},
                                                         "strict": False}}}
    gemini = {"tools": [{"functionDeclarations": [{"name": "grep", "description": "d"}, {"name": "glob"}]}]}
    assert keyed_tools(gemini) == {"tools": {"grep": {"description": "d"}, "glob": {}}}
    twice = {"tools": [{"name": "a"}, {"name": "a"}]}
    assert keyed_tools(twice) is twice


def test_request_drift_names_added_removed_and_changed_tools() -> None:
    old = {"tools": [{"type": "function", "function": {"name": "grep", "description": "old"}},
                     {"type": "function", "function": {"name": "glob", "description": "g"}}]}
    new = {"tools": [{"type": "function", "function": {"name": "grep", "description": "new"}},
                     {"type": "function", "function": {"name": "lookup", "description": "l"}}]}
    found = {(c.path, c.kind) for c in request_changes(old, new)}
    assert found == {("tools[grep].description", "changed"), ("tools[glob]", "removed"),
                     ("tools[lookup]", "added")}


def test_ids_the_run_invented_are_not_drift() -> None:
    old = {"messages": [{"role": "tool", "tool_call_id": "call_a", "content": "x"}]}
    new = {"messages": [{"role": "tool", "tool_call_id": "call_b", "content": "x"}]}
    assert request_changes(old, new) == []
    old = {"input": [{"type": "function_call_output", "call_id": "call_a", "output": "x"}]}
    new = {"input": [{"type": "function_call_output", "call_id": "call_b", "output": "x"}]}
    assert request_changes(old, new) == []


def test_a_changed_gemini_declaration_is_named_by_its_tool() -> None:
    old = {"tools": [{"functionDeclarations": [{"name": "grep", "description": "old"}]}]}
    new = {"tools": [{"functionDeclarations": [{"name": "grep", "description": "new"}, {"name": "glob"}]}]}
    found = {(c.path, c.kind) for c in request_changes(old, new)}
    assert found == {("tools[grep].description", "changed"), ("tools[glob]", "added")}
