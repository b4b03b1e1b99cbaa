"""Real OpenTelemetry traces of real agents: each instrumentation library, around its agent's tool
loop against a loopback fake model, exported through the OpenTelemetry SDK to the files an
OpenTelemetry Collector's `file` exporter writes.

    truth = produce("openai-v2", folder, server.url)   # writes folder/openai-v2.json and .pb

`produce` runs the agent in a fresh interpreter (instrumentations patch the `openai` SDK and set
global providers, so each library gets a process of its own) and returns what the agent really did
(`Conversation`s: each user message, each tool call with its arguments and result, the final
answers, each model call's usage), read from the agent's own side, never from the trace.

The files, as the Collector's `file` exporter writes them (`exporter/fileexporter`):
- `<library>.json` (`format: json`): one OTLP/JSON `ExportTraceServiceRequest` per line, one line
  per batch the SDK exported (`BATCH` spans each), written by OpenTelemetry's own OTLP/JSON file
  exporter (`opentelemetry-exporter-otlp-json-file`, the same JSON as the Collector's pdata); where the library emits its content as log
  events (the openai-v2 instrumentation does), the same file holds their
  `ExportLogsServiceRequest` lines too, as a file exporter shared by a traces and a logs pipeline
  writes them.
- `<library>.pb` (`format: proto`): each request's protobuf bytes preceded by its length as a
  4-byte big-endian integer, traces and logs alike.

The fake model is `upstreams.chat_completions` (key `KEY`, model `MODEL`): it calls `get_weather`
for "... in <City>" and `add` for "A + B", then answers quoting the tool's result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-otel-fake-0123456789"
MODEL = "gpt-4o-mini"
SERVICE = "support-agent"
BATCH = 3
SYSTEM = "You are a support assistant. Use the tools, then answer briefly."
#: The conversations every library's agent holds: each a list of user messages.
SCRIPT: tuple[tuple[str, ...], ...] = (
    ("What is the weather in Paris today?",),
    ("What is 2 + 3?", "Thanks. And what is the weather in London?"),
)
#: Each library: the environment its instrumentation reads, set before it is imported.
LIBRARIES: dict[str, dict[str, str]] = {
    # the official instrumentation, legacy conventions (1.30): content as log events
    "openai-v2": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    # the official instrumentation, latest experimental conventions: content as span attributes
    "openai-v2-latest": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    # ... and with the content on a `gen_ai.client.inference.operation.details` event
    "openai-v2-events": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only"},
    "openinference": {},
    "pydantic-ai": {},  # its default data format
    "pydantic-ai-v2": {},  # `InstrumentationSettings(version=2)`: spans `agent run`, `running tool`
}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get today's weather forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "add", "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                       "required": ["a", "b"]}}},
]


@dataclass
class Call:
    """One tool call the agent ran: the tool, its arguments and what it returned."""

    name: str
    arguments: dict[str, Any]
    result: str


@dataclass
class Turn:
    """One user message, the calls the agent ran for it, and the answer it gave."""

    user: str
    calls: list[Call] = field(default_factory=list)
    answer: str = ""


@dataclass
class Conversation:
    """What the agent really did in one conversation, and each model call's token usage."""

    turns: list[Turn] = field(default_factory=list)
    usage: list[dict[str, int]] = field(default_factory=list)


def produce(library: str, folder: Path, base_url: str, *, description: str | None = None,
            timeout: float = 60) -> list[Conversation]:
    """Run `library`'s agent over `SCRIPT` against the fake model at `base_url`, writing
    `folder/<library>.json` and `.pb`; `description` replaces `get_weather`'s description."""
    if library not in LIBRARIES:
        raise ValueError(f"unknown library {library!r}; known: {', '.join(LIBRARIES)}")
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **LIBRARIES[library], "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{base_url}/v1",
           "OTEL_SERVICE_NAME": SERVICE, "OTEL_SDK_DISABLED": "false"}
    argv = [sys.executable, "-m", "tests.support.otel_traces", library, str(folder)]
    if description is not None:
        argv.append(description)
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the {library} agent failed:\n{done.stderr[-4000:]}")
    truth = json.loads((folder / f"{library}.truth.json").read_text(encoding="utf-8"))
    return [Conversation([Turn(t["user"], [Call(**c) for c in t["calls"]], t["answer"]) for t in conv["turns"]],
                         conv["usage"]) for conv in truth]


# --- what runs in the agent's process ---------------------------------------------------------


def _tools(description: str | None) -> list[dict[str, Any]]:
    if description is None:
        return TOOLS
    weather = json.loads(json.dumps(TOOLS[0]))
    weather["function"]["description"] = description
    return [weather, TOOLS[1]]


def _run_tool(name: str, arguments: dict[str, Any]) -> str:
    from tests.support.real_agents import weather_tools

    return weather_tools.FUNCTIONS[name](**arguments)


def _openai_loop(tracer: Any, description: str | None) -> list[Conversation]:
    """The plain `openai` SDK tool loop, each conversation under one root span of the app's own."""
    from openai import OpenAI

    client = OpenAI(max_retries=0, timeout=20)
    conversations = []
    for index, said in enumerate(SCRIPT):
        conversation = Conversation()
        messages: list[Any] = [{"role": "system", "content": SYSTEM}]
        with tracer.start_as_current_span("support conversation",
                                          attributes={"app.conversation": f"conversation-{index}"}):
            for user in said:
                turn = Turn(user)
                messages.append({"role": "user", "content": user})
                for _ in range(5):
                    response = client.chat.completions.create(model=MODEL, messages=messages,
                                                              tools=_tools(description), temperature=0)
                    assert response.usage is not None
                    conversation.usage.append({"input": response.usage.prompt_tokens,
                                               "output": response.usage.completion_tokens})
                    message = response.choices[0].message
                    messages.append(message.model_dump(exclude_none=True))
                    if not message.tool_calls:
                        turn.answer = message.content or ""
                        break
                    for tool_call in message.tool_calls:
                        arguments = json.loads(tool_call.function.arguments)
                        result = _run_tool(tool_call.function.name, arguments)
                        turn.calls.append(Call(tool_call.function.name, arguments, result))
                        messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result})
                conversation.turns.append(turn)
        conversations.append(conversation)
    return conversations


def _pydantic_ai(version: int | None, tracer_provider: Any, description: str | None) -> list[Conversation]:
    """A pydantic-ai `Agent` with its own instrumentation; a conversation's later messages carry its
    history and its `conversation_id`."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    settings = (InstrumentationSettings(tracer_provider=tracer_provider) if version is None
                else InstrumentationSettings(tracer_provider=tracer_provider, version=version))  # type: ignore[arg-type]
    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider()), instructions=SYSTEM,
                  capabilities=[Instrumentation(settings=settings)], name="support", model_settings={"temperature": 0})

    @agent.tool_plain(description=description or TOOLS[0]["function"]["description"])
    def get_weather(city: str) -> str:
        return _run_tool("get_weather", {"city": city})

    @agent.tool_plain
    def add(a: float, b: float) -> str:
        """Add two numbers."""
        return _run_tool("add", {"a": a, "b": b})

    conversations = []
    for index, said in enumerate(SCRIPT):
        conversation = Conversation()
        history: list[Any] = []
        for user in said:
            result = agent.run_sync(user, message_history=history, conversation_id=f"conversation-{index}")
            new = result.new_messages()
            calls = {p.tool_call_id: p for m in new for p in m.parts if isinstance(p, ToolCallPart)}
            turn = Turn(user, answer=result.output)
            for m in new:
                for part in m.parts:
                    if isinstance(part, ToolReturnPart):
                        turn.calls.append(Call(part.tool_name, calls[part.tool_call_id].args_as_dict(),
                                               part.model_response_str()))
                usage = getattr(m, "usage", None)
                if usage is not None:
                    conversation.usage.append({"input": usage.input_tokens, "output": usage.output_tokens})
            conversation.turns.append(turn)
            history = result.all_messages()
        conversations.append(conversation)
    return conversations


def _framed(message: Any) -> bytes:
    data = message.SerializeToString()
    return len(data).to_bytes(4, "big") + data


def _export(library: str, folder: Path, spans: Sequence[Any], logs: Sequence[Any]) -> None:
    """Write `spans` (in batches of `BATCH`) and `logs` as OTLP/JSON lines (OpenTelemetry's own file
    exporter, whose lines are the Collector's) and as length-prefixed protobuf."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = sorted(spans, key=lambda s: s.start_time or 0)
    batches = [spans[i:i + BATCH] for i in range(0, len(spans), BATCH)]
    with (folder / f"{library}.json").open("w", encoding="utf-8") as stream:
        for batch in batches:
            FileSpanExporter(stream=stream).export(batch)
        if logs:
            FileLogExporter(stream=stream).export(list(logs))
    requests = [encode_spans(batch) for batch in batches] + ([encode_logs(list(logs))] if logs else [])
    (folder / f"{library}.pb").write_bytes(b"".join(_framed(r) for r in requests))


def _main(library: str, folder: Path, description: str | None) -> None:
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": SERVICE, "deployment.environment": "production"})
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    trace.set_tracer_provider(tracer_provider)
    set_logger_provider(logger_provider)
    tracer = tracer_provider.get_tracer("support-app")
    if library.startswith("openai-v2"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        truth = _openai_loop(tracer, description)
    elif library == "openinference":
        from openinference.instrumentation.openai import (
            OpenAIInstrumentor as OpenInferenceInstrumentor,
        )

        OpenInferenceInstrumentor().instrument(tracer_provider=tracer_provider)
        truth = _openai_loop(tracer, description)
    else:
        truth = _pydantic_ai(2 if library == "pydantic-ai-v2" else None, tracer_provider, description)
    tracer_provider.force_flush()
    logger_provider.force_flush()
    _export(library, folder, spans.get_finished_spans(), logs.get_finished_logs())
    (folder / f"{library}.truth.json").write_text(json.dumps([asdict(c) for c in truth], indent=1),
                                                  encoding="utf-8")


if __name__ == "__main__":
    _main(sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
