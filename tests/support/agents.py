"""Scripted agents for the loopback server: stateless handlers that answer like a model would.

Each handler looks at the conversation in the request (which task, how many tool results
so far) and plays the next turn of a plan, so fixtures can run concurrently against one
server and record the same exchanges every time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tests.support.llm_server import Reply, Seen

#: A turn: a list of (tool name, arguments) calls, or a final answer string.
Turn = Any


def _task(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body["messages"] if m["role"] == "user"), "")


def openai_agent(plans: Mapping[str, Sequence[Turn]], *, model: str = "test-model") -> Callable[[Seen], Reply]:
    """An OpenAI Chat Completions handler; `plans` maps a task substring to its turns."""

    def handle(seen: Seen) -> Reply:
        body = seen.json()
        task = _task(body)
        plan = next((turns for key, turns in plans.items() if key in task), ["I do not know."])
        index = sum(1 for m in body["messages"] if m["role"] == "assistant")
        turn = plan[index] if index < len(plan) else "done"
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(turn, str):
            message["content"] = turn
            finish = "stop"
        else:
            message["tool_calls"] = [
                {"id": f"call_{index}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(turn)
            ]
            finish = "tool_calls"
        return Reply(json={
            "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100 + index, "completion_tokens": 10, "total_tokens": 110 + index},
        })

    return handle


def _plan(plans: Mapping[str, Sequence[Turn]], task: str) -> Sequence[Turn]:
    return next((turns for key, turns in plans.items() if key in task), ["I do not know."])


def reasoning_item(turn: int) -> dict[str, Any]:
    """The reasoning item `responses_agent` sends on `turn`, as a stateless reasoning model does."""
    return {"id": f"rs_{turn}", "type": "reasoning", "content": [],
            "summary": [{"type": "summary_text", "text": f"**Planning step {turn}**"}],
            "encrypted_content": f"gAAAAABturn{turn}-opaque-reasoning=="}


def _answered_turns(items: Sequence[Any]) -> int:
    """How many turns of calls have had their results sent back: runs of function_call_output items."""
    kinds = [i.get("type") for i in items if isinstance(i, dict)]
    return sum(1 for k, after in zip(kinds, [*kinds[1:], None]) if k == "function_call_output"
               and after != "function_call_output")


def responses_agent(plans: Mapping[str, Sequence[Turn]], *, model: str = "test-model") -> Callable[[Seen], Reply]:
    """An OpenAI Responses handler with reasoning: every turn starts with a reasoning item, and a
    request that does not send each earlier one back unchanged, just before its calls, gets a 400
    (as the API does when an item is missing with ``store: false``)."""

    def handle(seen: Seen) -> Reply:
        body = seen.json()
        items = body["input"]
        task = next((i["content"] for i in items if i.get("role") == "user"), "")
        index = _answered_turns(items)
        reasoning = [(n, i) for n, i in enumerate(items) if i.get("type") == "reasoning"]
        in_place = all(n + 1 < len(items) and items[n + 1].get("type") == "function_call" for n, _ in reasoning)
        if [i for _, i in reasoning] != [reasoning_item(t) for t in range(index)] or not in_place:
            return Reply(400, json={"error": {"message": "a reasoning item is missing, changed or out of place"}})
        plan = _plan(plans, task)
        turn = plan[index] if index < len(plan) else "done"
        output: list[dict[str, Any]] = [reasoning_item(index)]
        if isinstance(turn, str):
            output.append({"id": f"msg_{index}", "type": "message", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "annotations": [], "text": turn}]})
        else:
            output += [{"id": f"fc_{index}_{i}", "type": "function_call", "status": "completed",
                        "call_id": f"call_{index}_{i}", "name": name, "arguments": json.dumps(args)}
                       for i, (name, args) in enumerate(turn)]
        return Reply(json={
            "id": f"resp_{index}", "object": "response", "status": "completed", "error": None, "model": model,
            "output": output, "store": False,
            "usage": {"input_tokens": 100 + index, "output_tokens": 30,
                      "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 130 + index},
        })

    return handle


def gemini_parts(turn: Turn, index: int) -> list[dict[str, Any]]:
    """The parts `gemini_agent` answers `turn` with: a thought signature on the first part."""
    if isinstance(turn, str):
        return [{"text": turn, "thoughtSignature": f"c2ln-answer-{index}"}]
    parts: list[dict[str, Any]] = [{"functionCall": {"name": name, "args": args}} for name, args in turn]
    parts[0]["thoughtSignature"] = f"c2ln-call-{index}"
    return parts


def gemini_agent(plans: Mapping[str, Sequence[Turn]], *, model: str = "test-model") -> Callable[[Seen], Reply]:
    """A Gemini generateContent handler (calls without ids, as Gemini 2.5 sends them); a request
    whose model turns are not sent back as answered, thought signatures on their parts, or whose
    function responses are not one user content in the order of the calls, gets a 400."""

    def handle(seen: Seen) -> Reply:
        contents = seen.json()["contents"]
        task = contents[0]["parts"][0]["text"]
        plan = _plan(plans, task)
        model_turns = [n for n, c in enumerate(contents) if c["role"] == "model"]
        for index, n in enumerate(model_turns):
            turn = plan[index]
            answered = contents[n + 1]["parts"] if n + 1 < len(contents) else []
            responses = [p["functionResponse"] for p in answered if "functionResponse" in p]
            if (contents[n]["parts"] != gemini_parts(turn, index) or contents[n + 1]["role"] != "user"
                    or [r["name"] for r in responses] != [name for name, _ in turn]
                    or not all(isinstance(r["response"], dict) for r in responses)):
                return Reply(400, json={"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                                  "message": f"model turn {index} was not sent back as answered"}})
        index = len(model_turns)
        turn = plan[index] if index < len(plan) else "done"
        return Reply(json={
            "candidates": [{"content": {"role": "model", "parts": gemini_parts(turn, index)},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100 + index, "candidatesTokenCount": 10,
                              "thoughtsTokenCount": 40, "totalTokenCount": 150 + index},
            "modelVersion": model, "responseId": f"r{index}",
        })

    return handle
