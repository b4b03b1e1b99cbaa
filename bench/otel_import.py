"""Importing production traces at scale: `python bench/otel_import.py [--conversations N]`.

Issue 46's budget: importing 10,000 conversations (about 100 MB of OTLP/JSON) streams with bounded
memory (peak RSS at most 300 MB) at 200 conversations a second or more. This

- generates the traces with the OpenTelemetry SDK itself: each conversation one trace of the GenAI
  semantic conventions (an `invoke_agent` span with its `gen_ai.conversation.id`, a `chat` span per
  model turn with its input and output messages, system instructions, tool definitions and usage,
  an `execute_tool` span per call), the user's question, the order and the tool calls varying from
  one conversation to the next; the SDK's own OTLP/JSON file exporter writes them 512 spans a line,
  as a Collector's `file` exporter writes what a `BatchSpanProcessor` sent it;
- imports them twice, each a whole process (`replio` as installed) into a project of its own:
  all of them as fixtures only (`--no-cassettes`: reading, grouping, scrubbing, building and
  writing), then, as the default import does, with their cassettes and goldens synthesized (each
  conversation run through replio's loop, in worker processes) the first `--synthesize` of them,
  generated into a file of their own: with `--limit` on the whole file the import's first pass
  (which counts each conversation id's traces) would read all of them, a cost an import of the
  whole file spreads over every conversation;
- with `--floor`, imports the same file a third time, its cassettes written in vcrpy's own YAML
  (each request and response body one string) instead of replio's readable format: the child
  process swaps `ReadableSerializer.serialize` for vcrpy's `yamlserializer.serialize` before it runs
  the command, and nothing else changes. Not an option replio has: the floor of an import whose
  cassettes were written as vcrpy writes them, so the cost of the readable format is measured, not
  guessed (issue 49's `bench/floor.py` does the same for a replay);
- prints for each its peak RSS (`wait4`'s rusage: the child's, or of a worker process it waited
  for, whichever is larger) and its conversations a second of wall time, with the budgets, `met`
  or `NOT met`, and its conversations per CPU second (the user and system time of the child and
  its workers), the figure a loaded machine distorts least.

    python bench/otel_import.py                      # 10,000 conversations
    python bench/otel_import.py --conversations 500 --synthesize 50  # a smoke run
    python bench/otel_import.py --conversations 2000 --synthesize 2000 --floor
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RSS_BUDGET_MB = 300
RATE_BUDGET = 200
BATCH = 512  # a BatchSpanProcessor's default max_export_batch_size
CITIES = ["Paris", "London", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Dublin", "Oslo", "Prague"]
TOOLS = [
    {"type": "function", "name": "lookup_order",
     "description": "Look up one order by its id (like A-1001): its status, items, total and currency.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
    {"type": "function", "name": "list_orders",
     "description": "List the ids of the customer's orders that have the given status.",
     "parameters": {"type": "object", "properties": {"status": {"type": "string",
                                                                "enum": ["pending", "shipped", "delivered"]}},
                    "required": ["status"]}},
    {"type": "function", "name": "refund_order",
     "description": "Refund an order in full. Only for orders that were delivered damaged or never arrived.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["order_id", "reason"]}},
    {"type": "function", "name": "track_parcel",
     "description": "Track the parcel of a shipped order: the carrier's last scans, newest first.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
]
SYSTEM = [{"type": "text", "content": "You are the support desk of a small web shop. Use the tools to look up, "
                                     "track and refund orders; answer the customer briefly once you know."}]


def conversation(n: int) -> tuple[str, list[tuple[str, dict[str, Any], str]], str]:
    """The `n`-th conversation: the user's question, the calls made (tool, arguments, result), the answer."""
    order = f"A-{1000 + n}"
    city = CITIES[n % len(CITIES)]
    scans = [{"at": f"2026-11-{10 + d:02d}T0{d}:15:00Z", "place": f"{city} hub {d}", "event": "in transit"}
             for d in range(4)]
    looked = {"order_id": order, "status": "shipped", "items": [f"item {n % 97}", "gift wrap"],
              "total": round(10 + (n % 300) * 1.37, 2), "currency": "EUR", "address": f"{n} Main Street, {city}"}
    calls = [("lookup_order", {"order_id": order}, json.dumps(looked)),
             ("track_parcel", {"order_id": order}, json.dumps({"order_id": order, "scans": scans}))]
    question = f"Hello, my order {order} was supposed to reach {city} last week. Where is it now? (ticket {n})"
    answer = f"Your order {order} is in transit: its last scan was at the {city} hub. It should arrive soon."
    return question, calls, answer


def _messages(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "parts": parts}


def spans_of(tracer: Any, n: int) -> None:
    """Record conversation `n` as spans of the GenAI semantic conventions."""
    question, calls, answer = conversation(n)
    history = [_messages("user", [{"type": "text", "content": question}])]
    common = {"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
              "gen_ai.system_instructions": json.dumps(SYSTEM), "gen_ai.tool.definitions": json.dumps(TOOLS)}
    with tracer.start_as_current_span("invoke_agent support", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support",
            "gen_ai.conversation.id": f"ticket-{n}"}):
        for step, (name, arguments, result) in enumerate(calls):
            call = {"type": "tool_call", "id": f"call_{n}_{step}", "name": name, "arguments": arguments}
            output = [_messages("assistant", [call]) | {"finish_reason": "tool_calls"}]
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
                    **common, "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps(output), "gen_ai.response.finish_reasons": ["tool_calls"],
                    "gen_ai.usage.input_tokens": 300 + 120 * step, "gen_ai.usage.output_tokens": 20}):
                pass
            with tracer.start_as_current_span(f"execute_tool {name}", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call["id"], "gen_ai.tool.call.arguments": json.dumps(arguments),
                    "gen_ai.tool.call.result": result}):
                pass
            history += [_messages("assistant", [call]),
                        _messages("tool", [{"type": "tool_call_response", "id": call["id"], "response": result}])]
        final = [_messages("assistant", [{"type": "text", "content": answer}]) | {"finish_reason": "stop"}]
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
                **common, "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps(final), "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.usage.input_tokens": 600, "gen_ai.usage.output_tokens": 30}):
            pass


def generate(path: Path, conversations: int) -> int:
    """Write `conversations` traces to `path` as OTLP/JSON lines; return its size in bytes."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-support"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    with path.open("w", encoding="utf-8") as stream:
        exporter, pending = FileSpanExporter(stream=stream), []
        for n in range(conversations):
            spans_of(tracer, n)
            pending += memory.get_finished_spans()
            memory.clear()
            while len(pending) >= BATCH or (pending and n == conversations - 1):
                exporter.export(pending[:BATCH])
                pending = pending[BATCH:]
    return path.stat().st_size


@dataclass
class Measured:
    """One import, a whole process: wall and CPU seconds (its own and its children's), peak RSS."""

    wall: float
    cpu: float
    rss_mb: float
    last: str


#: What the floor's child runs: the command as installed, its cassettes written by vcrpy's own YAML serializer.
VCRPY_YAML = """
import sys
from vcr.serializers import yamlserializer
from replio_replay.recording.serializer import ReadableSerializer
ReadableSerializer.serialize = lambda self, cassette_dict: yamlserializer.serialize(cassette_dict)
from replio_replay.cli import entry
sys.argv[0] = "replio"
entry()
"""


def measure(project: Path, traces: Path, *extra: str, vcrpy_yaml: bool = False) -> Measured:
    """Import `traces` into `project` in a child process (`replio eval ... import otel FILE EXTRA`), its
    cassettes in vcrpy's own YAML with `vcrpy_yaml`."""
    replio = shutil.which("replio", path=str(Path(sys.executable).parent)) or "replio"
    command = [sys.executable, "-c", VCRPY_YAML] if vcrpy_yaml else [replio]
    env = {**os.environ, "CI": "true"}
    started = time.perf_counter()
    child = subprocess.Popen([*command, "eval", "--path", str(project), "import", "otel", str(traces), *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage: its peak RSS, its CPU
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the import failed:\n{out[-3000:]}")
    lines = out.strip().splitlines()
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, lines[-1] if lines else "")


def verdict(value: float, budget: float, *, at_most: bool) -> str:
    """`met` when `value` is within `budget` (at most it, or at least it), else `NOT met`."""
    return "met" if (value <= budget if at_most else value >= budget) else "NOT met"


def written(project: Path) -> int:
    """How many fixtures the import wrote into `project`."""
    return sum(1 for _ in (project / ".replio" / "eval" / "otel").glob("*.json"))


def _project(root: Path, name: str) -> Path:
    project = root / name
    (project / ".replio").mkdir(parents=True)
    (project / ".replio" / "config.json").write_text('{"bundled": false}', encoding="utf-8")
    return project


def report(what: str, measured: Measured, fixtures: int) -> None:
    """Print one import's figures against the budgets."""
    wall_rate, cpu_rate = fixtures / measured.wall, fixtures / max(measured.cpu, 1e-9)
    print(f"{what}: {fixtures:,} fixtures in {measured.wall:.1f} s wall, {measured.cpu:.1f} s CPU ({measured.last})")
    print(f"  peak RSS {measured.rss_mb:.0f} MB (budget <= {RSS_BUDGET_MB} MB): "
          f"{verdict(measured.rss_mb, RSS_BUDGET_MB, at_most=True)}")
    print(f"  {wall_rate:.0f} conversations/s of wall time (budget >= {RATE_BUDGET}): "
          f"{verdict(wall_rate, RATE_BUDGET, at_most=False)}; {cpu_rate:.0f} per CPU second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--synthesize", type=int, default=500,
                        help="how many of them the second import synthesizes cassettes for (a file of their own)")
    parser.add_argument("--floor", action="store_true",
                        help="import the second file again, its cassettes written in vcrpy's own YAML: the floor")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="otel-bench-") as tmp:
        traces, first = Path(tmp, "traces.json"), Path(tmp, "first.json")
        started = time.perf_counter()
        size = generate(traces, args.conversations)
        synthesize = min(args.synthesize, args.conversations)
        generate(first, synthesize)
        print(f"generated {args.conversations:,} conversations, {size / 1e6:.1f} MB of OTLP/JSON "
              f"in {time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores")
        imports = [("fixtures only (--no-cassettes)", traces, ("--no-cassettes",), args.conversations, False),
                   (f"with cassettes synthesized (the first {synthesize:,})", first, (), synthesize, False)]
        if args.floor:
            imports.append(("floor: the same, its cassettes in vcrpy's own YAML", first, (), synthesize, True))
        for what, path, extra, expected, vcrpy_yaml in imports:
            project = _project(Path(tmp), what.split()[0].rstrip(":"))
            measured = measure(project, path, *extra, vcrpy_yaml=vcrpy_yaml)
            if (fixtures := written(project)) != expected:
                raise SystemExit(f"{what}: the import wrote {fixtures} fixtures, not {expected}: {measured.last}")
            if not extra and (cassettes := sum(1 for _ in (project / "cassettes").rglob("*.yaml"))) != expected:
                raise SystemExit(f"{what}: the import wrote {cassettes} cassettes, not {expected}")
            report(what, measured, fixtures)


if __name__ == "__main__":
    main()
