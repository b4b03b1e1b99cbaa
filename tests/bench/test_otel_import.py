"""bench/otel_import.py's own logic: the traces it generates and how it judges its budgets."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import otel_import  # noqa: E402


def _spans(path: Path) -> list[dict]:
    return [span for line in path.read_text(encoding="utf-8").splitlines()
            for resource in json.loads(line)["resourceSpans"] for scope in resource["scopeSpans"]
            for span in scope["spans"]]


def _attributes(span: dict) -> dict:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def test_each_conversation_is_one_trace_of_the_genai_conventions_batched_as_an_sdk_exports(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    size = otel_import.generate(path, 120)
    assert size == path.stat().st_size
    spans = _spans(path)
    assert len(path.read_text(encoding="utf-8").splitlines()) == -(-len(spans) // otel_import.BATCH) > 1
    by_trace = Counter(s["traceId"] for s in spans)
    assert len(by_trace) == 120 and set(by_trace.values()) == {6}
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in spans)  # hex, as OTLP/JSON writes ids
    roots = [_attributes(s) for s in spans if "parentSpanId" not in s]
    assert sorted(r["gen_ai.conversation.id"] for r in roots) == sorted(f"ticket-{n}" for n in range(120))
    chats = [_attributes(s) for s in spans if s["name"] == "chat gpt-4o-mini"]
    last = json.loads(chats[2]["gen_ai.input.messages"])
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(chats[2]["gen_ai.output.messages"])[0]["parts"][0]["content"] == otel_import.conversation(0)[2]
    tools = [_attributes(s) for s in spans if s["name"].startswith("execute_tool")]
    assert tools[1]["gen_ai.tool.call.result"] == otel_import.conversation(0)[1][1][2]


def test_the_conversations_differ_so_no_two_fixtures_are_the_same() -> None:
    assert len({otel_import.conversation(n)[0] for n in range(500)}) == 500


def test_a_budget_is_met_within_its_bound_and_not_beyond() -> None:
    assert otel_import.verdict(300, 300, at_most=True) == "met"
    assert otel_import.verdict(301, 300, at_most=True) == "NOT met"
    assert otel_import.verdict(200, 200, at_most=False) == "met"
    assert otel_import.verdict(199.9, 200, at_most=False) == "NOT met"


def test_the_floor_imports_with_replio_as_installed_its_cassettes_written_by_vcrpys_own_yaml(tmp_path: Path) -> None:
    from vcr.serializers import yamlserializer

    traces = tmp_path / "traces.json"
    otel_import.generate(traces, 2)
    project = otel_import._project(tmp_path, "floor")
    measured = otel_import.measure(project, traces, vcrpy_yaml=True)
    assert measured.last == "cassettes synthesized: 2, without a cassette: 0" and measured.cpu > 0
    cassettes = sorted((project / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 2 and otel_import.written(project) == 2
    data = yamlserializer.deserialize(cassettes[0].read_text(encoding="utf-8"))
    first = data["interactions"][0]
    assert "replio" not in data  # no readable header: vcrpy's own format, bodies as one string each
    assert json.loads(first["request"]["body"])["messages"][1]["content"] == otel_import.conversation(0)[0]
    assert json.loads(first["response"]["body"]["string"])["choices"][0]["message"]["tool_calls"]
