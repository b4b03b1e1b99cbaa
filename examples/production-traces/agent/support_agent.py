"""A web shop's support agent in production: the `openai` SDK's tool loop, traced by the official
OpenTelemetry instrumentation (`opentelemetry-instrumentation-openai-v2`) with message content
captured on the spans.

It holds each conversation of `conversations.json` (its day's traffic) under one root span of its
own, so a trace is a conversation, and writes the spans as OTLP/JSON lines, as an OpenTelemetry
Collector's `file` exporter does. In production the spans would go to a Collector
(`OTEL_EXPORTER_OTLP_ENDPOINT`); here OpenTelemetry's own OTLP/JSON file exporter stands in for it.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=x python agent/support_agent.py traces/support-agent.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# What a deployment sets: the latest GenAI conventions, with the messages on the spans.
os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
os.environ.setdefault("OTEL_SERVICE_NAME", "shop-support")

from openai import OpenAI  # noqa: E402
from opentelemetry.exporter.otlp.json.file import FileSpanExporter  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from shop import call  # noqa: E402

HERE = Path(__file__).resolve().parent
SYSTEM = ("You are the support desk of a small web shop. Use the tools to look up, cancel and refund orders and "
          "to convert prices. Refunds are only for orders delivered damaged or never arrived; only pending orders "
          "can be cancelled. Answer the customer briefly once you know the answer.")
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
        "name": "cancel_order",
        "description": "Cancel an order that has not shipped yet (status pending).",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "convert_currency",
        "description": "Convert an amount of money between EUR, USD and GBP at today's rate.",
        "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
            "required": ["amount", "from_currency", "to_currency"]}}},
]
MAX_STEPS = 6


def converse(client: OpenAI, said: list[str]) -> None:
    """One conversation: each user message answered after as many tool calls as the model makes."""
    messages: list = [{"role": "system", "content": SYSTEM}]
    for user in said:
        messages.append({"role": "user", "content": user})
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(model="qwen2.5-coder-1.5b-instruct", messages=messages,
                                                      tools=TOOLS, temperature=0)
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                print(f"> {user}\n< {message.content}\n", file=sys.stderr)
                break
            for tool_call in message.tool_calls:
                result = call(tool_call.function.name, tool_call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result})


def main(out: Path) -> None:
    provider = TracerProvider(resource=Resource.create({"deployment.environment": "production"}))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(out)))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("shop-support")
    client = OpenAI(max_retries=0, timeout=600)
    conversations = json.loads((HERE / "conversations.json").read_text(encoding="utf-8"))
    for said in conversations:
        with tracer.start_as_current_span("support conversation"):
            converse(client, said)
    provider.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
