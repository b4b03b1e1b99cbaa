"""A weather agent on the official `openai` SDK's Responses API: function tools, the model's output
items sent back as they came, each call answered with a `function_call_output` item."""

from __future__ import annotations

import sys

from openai import OpenAI
from weather_tools import call, note_env

TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Get today's weather forecast for a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                    "additionalProperties": False}, "strict": True},
    {"type": "function", "name": "add", "description": "Add two numbers.",
     "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"], "additionalProperties": False}, "strict": True},
]
MAX_STEPS = 5


def main() -> None:
    note_env("openai_responses")
    client = OpenAI(max_retries=0)
    items: list = [{"role": "user", "content": sys.stdin.read().strip()}]
    answer = ""
    for _ in range(MAX_STEPS):
        response = client.responses.create(model="gpt-4.1-mini", instructions="Use the tools, then answer briefly.",
                                           input=items, tools=TOOLS, store=False)
        calls = [item for item in response.output if item.type == "function_call"]
        items += [item.model_dump(exclude_none=True) for item in response.output]
        if not calls:
            answer = response.output_text
            break
        for made in calls:
            items.append({"type": "function_call_output", "call_id": made.call_id,
                          "output": call(made.name, made.arguments)})
    print(answer)


if __name__ == "__main__":
    main()
