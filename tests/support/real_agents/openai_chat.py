"""A weather agent on the official `openai` SDK: Chat Completions with tools, not streamed, looping
until the model answers without a tool call. It reads each user message with replio's helper, so
it runs one-task fixtures and conversations alike."""

from __future__ import annotations

import os

from openai import OpenAI
from weather_tools import call, note_env

from replio_replay import agent_messages, reply

SYSTEM = "You are a weather assistant. Use the tools, then answer briefly."
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get today's weather forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                       "required": ["a", "b"]}}},
]
MAX_STEPS = 5


def main() -> None:
    note_env("openai_chat")
    client = OpenAI(max_retries=0)
    if os.environ.get("WARM_UP"):  # one request more than when it was recorded: every answer comes one late
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "ping"}])
    messages: list = [{"role": "system", "content": SYSTEM}]
    for said in agent_messages():
        messages.append({"role": "user", "content": said})
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS,
                                                      temperature=0)
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                reply(message.content or "")
                break
            for tool_call in message.tool_calls:
                result = call(tool_call.function.name, tool_call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result})
        else:  # its own step limit: the fixture ends `truncated`, and so does the conversation
            reply("", truncated=True)
            return


if __name__ == "__main__":
    main()
