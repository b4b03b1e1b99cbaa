"""A weather agent on the official `anthropic` SDK: Messages with tools, `tool_use` blocks answered
with `tool_result` blocks, looping until the model stops for another reason than a tool."""

from __future__ import annotations

import os

from anthropic import Anthropic
from weather_tools import call, note_env

TOOLS = [
    {"name": "get_weather", "description": "Get today's weather forecast for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "add", "description": "Add two numbers.",
     "input_schema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                      "required": ["a", "b"]}},
]
MAX_STEPS = 5


def main() -> None:
    note_env("anthropic_messages")
    client = Anthropic(max_retries=0)
    messages: list = [{"role": "user", "content": os.environ["REPLIO_TASK"]}]
    answer = ""
    for _ in range(MAX_STEPS):
        response = client.messages.create(model="claude-haiku-4-5", max_tokens=512, tools=TOOLS,
                                          system="You are a weather assistant.", messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        uses = [block for block in response.content if block.type == "tool_use"]
        if response.stop_reason != "tool_use" or not uses:
            answer = "".join(block.text for block in response.content if block.type == "text")
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": call(use.name, use.input)} for use in uses]})
    print(answer)


if __name__ == "__main__":
    main()
