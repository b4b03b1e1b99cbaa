"""A weather agent on the official `openai` SDK: Chat Completions streamed (with usage in the last
chunk), its tool calls put together from the deltas, looping until the model answers without one."""

from __future__ import annotations

import os
import sys

from openai import OpenAI
from weather_tools import call, note_env

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get today's weather forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]
MAX_STEPS = 5


def complete(client: OpenAI, messages: list) -> tuple[str, list[dict]]:
    """One streamed turn: its text and its tool calls, assembled from the chunks."""
    text: list[str] = []
    calls: dict[int, dict] = {}
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS, stream=True,
                                            stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.usage is not None:
            print(f"usage: {chunk.usage.prompt_tokens}+{chunk.usage.completion_tokens}", file=sys.stderr)
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            for part in delta.tool_calls or []:
                made = calls.setdefault(part.index, {"id": "", "type": "function",
                                                     "function": {"name": "", "arguments": ""}})
                if part.id:
                    made["id"] = part.id
                if part.function is not None:
                    made["function"]["name"] += part.function.name or ""
                    made["function"]["arguments"] += part.function.arguments or ""
    return "".join(text), [calls[i] for i in sorted(calls)]


def main() -> None:
    note_env("openai_chat_stream")
    client = OpenAI(max_retries=0)
    messages: list = [{"role": "user", "content": os.environ["REPLIO_TASK"]}]
    answer = ""
    for _ in range(MAX_STEPS):
        text, calls = complete(client, messages)
        messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        if not calls:
            answer = text
            break
        for made in calls:
            result = call(made["function"]["name"], made["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": made["id"], "content": result})
    print(answer)


if __name__ == "__main__":
    main()
