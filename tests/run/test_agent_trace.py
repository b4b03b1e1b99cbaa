"""Reading an agent's trace back from its exchanges: calls in order, each with the result it carried back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replio_replay.errors import AgentError
from replio_replay.providers.wire.relayed import Relayed
from replio_replay.run.agent_trace import NO_RESULT, AgentTurn, read_trace


def chat(request: dict[str, Any], calls: list[tuple[str, str, dict[str, Any]]] | None = None, text: str = "",
         status: int = 200) -> Relayed:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in calls]
    body = {"choices": [{"index": 0, "message": message}], "usage": {"prompt_tokens": 10, "completion_tokens": 2}}
    return Relayed("chat", request, status, json.dumps(body).encode(), "application/json")


def tool_msg(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_openai_calls_get_their_results_by_id_in_order() -> None:
    first = {"messages": [{"role": "user", "content": "q"}]}
    calls = [("c1", "lookup", {"id": 1}), ("c2", "lookup", {"id": 2})]
    second = {"messages": [*first["messages"], {"role": "assistant", "tool_calls": []},
                           tool_msg("c2", "two"), tool_msg("c1", "Error: no such id")]}
    trace = read_trace([chat(first, calls), chat(second, text="done")], [AgentTurn("q", "done", 2)])
    assert [(r.call.name, r.call.arguments, r.result, r.turn) for r in trace.records] == [
        ("lookup", {"id": 1}, "Error: no such id", 0), ("lookup", {"id": 2}, "two", 0)]
    assert trace.records[0].is_error and trace.turn_calls == [2]
    assert [u.tokens for u in trace.usage] == [12, 12]
    assert [m.role for m in trace.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert trace.messages[-1].content == "done"


def test_a_call_whose_result_never_came_back_says_so() -> None:
    trace = read_trace([chat({"messages": []}, [("c1", "lookup", {})])], [AgentTurn("q", "gave up", 1)])
    assert trace.records[0].result == NO_RESULT


def test_a_refused_exchange_is_no_model_turn() -> None:
    req = {"messages": []}
    refused = Relayed("chat", req, 429, b'{"error": {"message": "slow down"}}', "application/json")
    trace = read_trace([refused, chat(req, [("c1", "t", {})]), chat({"messages": [tool_msg("c1", "r")]}, text="ok")],
                       [AgentTurn("q", "ok", 3)])
    assert [(r.turn, r.result) for r in trace.records] == [(0, "r")]
    assert len(trace.usage) == 2


def test_ollama_results_without_ids_match_by_name_then_order() -> None:
    def ollama(request: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], text: str = "") -> Relayed:
        message = {"role": "assistant", "content": text,
                   "tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls]}
        return Relayed("ollama", request, 200, json.dumps({"message": message, "done": True}).encode())

    first = {"messages": [{"role": "user", "content": "q"}]}
    second = {"messages": [*first["messages"], {"role": "assistant", "content": ""},
                           {"role": "tool", "tool_name": "b", "content": "B!"},
                           {"role": "tool", "content": "A!"}]}
    trace = read_trace([ollama(first, [("a", {}), ("b", {})]), ollama(second, [], "fine")], [AgentTurn("q", "fine", 2)])
    assert [(r.call.name, r.result) for r in trace.records] == [("a", "A!"), ("b", "B!")]


def test_a_conversation_is_split_into_its_user_turns() -> None:
    r1 = {"messages": [{"role": "user", "content": "one"}]}
    r2 = {"messages": [*r1["messages"], tool_msg("c1", "x")]}
    r3 = {"messages": [*r2["messages"], {"role": "assistant", "content": "a1"}, {"role": "user", "content": "two"}]}
    exchanges = [chat(r1, [("c1", "t", {})]), chat(r2, text="a1"), chat(r3, text="a2")]
    trace = read_trace(exchanges, [AgentTurn("one", "a1", 2), AgentTurn("two", "a2", 3)])
    assert trace.turn_calls == [1, 1]
    assert [(m.role, m.content) for m in trace.messages if m.role in ("user", "assistant") and not m.tool_calls] == [
        ("user", "one"), ("assistant", "a1"), ("user", "two"), ("assistant", "a2")]


def test_a_streamed_answer_is_read_like_a_whole_one() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                  {"index": 0, "id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"i'}}]}}]},
              {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'd": 7}'}}]}}]},
              {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    streamed = Relayed("chat", {"messages": [], "stream": True}, 200, body.encode(), "text/event-stream")
    trace = read_trace([streamed, chat({"messages": [tool_msg("c1", "seven")]}, text="ok")], [AgentTurn("q", "ok", 2)])
    assert [(r.call.name, r.call.arguments, r.result) for r in trace.records] == [("lookup", {"id": 7}, "seven")]
    assert trace.usage[0].tokens == 8


def test_an_answer_that_is_not_its_format_is_named() -> None:
    broken = Relayed("anthropic", {"messages": []}, 200, b"<html>oops</html>", "text/html")
    with pytest.raises(AgentError, match="request #1 cannot be read as Anthropic Messages"):
        read_trace([broken], [AgentTurn("q", "a", 1)])
