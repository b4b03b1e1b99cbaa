"""Request drift names the tool and call of a tool result that changed, in each wire format."""

from __future__ import annotations

import copy
from typing import Any

from replio_replay.recording.requests import request_changes


def _changed(body: dict[str, Any], edit: Any) -> list[tuple[str, str, Any, Any]]:
    sent = copy.deepcopy(body)
    edit(sent)
    return [(c.path, c.kind, c.old, c.new) for c in request_changes(body, sent)]


OPENAI = {"messages": [
    {"role": "user", "content": "Cancel A-1."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "cancel_order", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "open"},
    {"role": "tool", "tool_call_id": "c2", "content": "Order A-1 cancelled."},
]}


def test_an_openai_tool_message_is_named_by_its_call() -> None:
    def edit(body: dict[str, Any]) -> None:
        body["messages"][3]["content"] = "Error: cancel_order failed"

    assert _changed(OPENAI, edit) == [("messages[3](cancel_order, call 2).content", "tool_result_changed",
                                       "Order A-1 cancelled.", "Error: cancel_order failed")]


def test_an_ollama_tool_message_is_named_by_its_tool_name() -> None:
    body = {"messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_name": "slugify", "content": "a-b"}]}

    def edit(sent: dict[str, Any]) -> None:
        sent["messages"][1]["content"] = "a_b"

    assert _changed(body, edit) == [("messages[1](slugify, call 1).content", "tool_result_changed", "a-b", "a_b")]


def test_an_anthropic_tool_result_block_is_named_by_its_tool_use() -> None:
    body = {"messages": [
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                          {"type": "tool_use", "id": "u1", "name": "get_order", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "open"}]},
    ]}

    def edit(sent: dict[str, Any]) -> None:
        sent["messages"][1]["content"][0]["content"] = "shipped"

    assert _changed(body, edit) == [("messages[1].content[0](get_order, call 1).content", "tool_result_changed",
                                     "open", "shipped")]


def test_other_message_changes_keep_their_paths() -> None:
    def edit(body: dict[str, Any]) -> None:
        body["messages"][0]["content"] = "Cancel A-2."

    assert _changed(OPENAI, edit) == [("messages[0].content", "changed", "Cancel A-1.", "Cancel A-2.")]


def test_an_agents_volatile_fields_are_left_out_of_request_drift() -> None:
    from replio_replay.recording.requests import volatile_pattern

    recorded = {"messages": [{"role": "user", "content": "at 10:00"}], "metadata": {"run": 1}, "temperature": 0}
    sent = {"messages": [{"role": "user", "content": "at 10:05"}], "metadata": {"run": 2}, "temperature": 1}
    pattern = volatile_pattern(("messages[*].content", "metadata"))
    assert [c.path for c in request_changes(recorded, sent, pattern)] == ["temperature"]
    assert volatile_pattern(()) is None
    assert not volatile_pattern(("meta",)).match("metadata")  # a glob covers what is under it, not longer names


def test_a_number_written_as_an_integer_or_a_float_is_no_drift_but_a_boolean_is() -> None:
    recorded = {"temperature": 0, "top_p": 1, "n": 1, "stream": False}
    assert request_changes(recorded, {"temperature": 0.0, "top_p": 1.0, "n": 1, "stream": False}) == []
    assert [c.describe() for c in request_changes(recorded, {**recorded, "n": True, "temperature": 0.5})] == [
        "n type_changed: 1 -> true", "temperature changed: 0 -> 0.5"]
