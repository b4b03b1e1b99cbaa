"""A support-desk agent written directly against the official `openai` SDK: the classic loop of
chat completions with tools. It reads the user's messages with replio's helper and answers each.

Run it alone against any OpenAI-compatible server:
    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=x REPLIO_TASK="Where is order A-1001?" python agents/openai_agent.py
"""

from __future__ import annotations

import json

from openai import OpenAI
from shop_tools import convert_currency, list_orders, lookup_order, refund_order

from replio_replay import agent_messages, reply

SYSTEM = ("You are the support desk of a small web shop. Use the tools to look up orders, refunds and prices; "
          "answer the customer briefly, in plain text, once you know the answer.")

TOOLS = [
    {"type": "function", "function": {
        "name": "lookup_order",
        "description": "Look up one order by its id (like A-1001): its status, items, total and currency.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "list_orders",
        "description": "List the ids of the customer's orders that have the given status.",
        "parameters": {"type": "object", "properties": {
            "status": {"type": "string", "enum": ["pending", "shipped", "delivered"]}}, "required": ["status"]}}},
    {"type": "function", "function": {
        "name": "refund_order",
        "description": "Refund an order in full. Only for orders that were delivered damaged or never arrived.",
        "parameters": {"type": "object", "properties": {
            "order_id": {"type": "string"}, "reason": {"type": "string"}}, "required": ["order_id", "reason"]}}},
    {"type": "function", "function": {
        "name": "convert_currency",
        "description": "Convert an amount of money between EUR, USD and GBP at today's rate.",
        "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
            "required": ["amount", "from_currency", "to_currency"]}}},
]
FUNCTIONS = {f.__name__: f for f in (lookup_order, list_orders, refund_order, convert_currency)}
MAX_STEPS = 6


def call(name: str, arguments: str) -> str:
    try:
        return str(FUNCTIONS[name](**json.loads(arguments or "{}")))
    except Exception as exc:  # the model sees what went wrong, as with any agent
        return f"Error: {type(exc).__name__}: {exc}"


def main() -> None:
    client = OpenAI()
    messages: list = [{"role": "system", "content": SYSTEM}]
    for said in agent_messages():
        messages.append({"role": "user", "content": said})
        answer = ""
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS,
                                                      temperature=0)
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                answer = message.content or ""
                break
            for tool_call in message.tool_calls:
                result = call(tool_call.function.name, tool_call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result})
        reply(answer)


if __name__ == "__main__":
    main()
