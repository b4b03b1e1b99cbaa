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
