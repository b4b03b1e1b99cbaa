"""The LLM judge's pure part: what its request holds (the task, the calls and results trimmed to the
budget, the answer, the statement last, JSON mode) and how its answer is read (valid, fenced,
invalid, truncated, another verdict)."""

from __future__ import annotations

import json

from replio_replay._runtime.redact import Redactor
from replio_replay.fixtures.model import Judge
from replio_replay.judge.llm import (
    RAW_CAP,
    SYSTEM,
    judge_request,
    read_answer,
    trimmed_calls,
    verdict_reasons,
)
from replio_replay.judge.results import JudgeVerdict, TraceCall

RUBRIC = "The answer gives the new departure time and gate, and apologises."
SPEC = Judge(rubric=RUBRIC)


def calls(n: int, size: int = 50) -> list[TraceCall]:
    return [TraceCall(name=f"tool_{i}", arguments={"i": i}, result=f"r{i}:" + "x" * size) for i in range(1, n + 1)]


def test_the_request_holds_the_task_the_calls_the_answer_and_the_statement_last() -> None:
    trace = [TraceCall(name="flight_status", arguments={"flight": "LH123"}, result="delayed to 14:05, gate B12")]
    request = judge_request(RUBRIC, ["When does LH123 leave?"], trace, "Sorry: it leaves 14:05 from B12.", 6000)
    system, user = request.messages
    assert system.role == "system" and system.content == SYSTEM and '"verdict"' in SYSTEM
    assert user.role == "user"
    text = user.content
    assert "When does LH123 leave?" in text
    assert '1. flight_status({"flight": "LH123"}) -> delayed to 14:05, gate B12' in text
    assert "Sorry: it leaves 14:05 from B12." in text
    assert text.index("When does LH123") < text.index("flight_status") < text.index("Sorry:") < text.index(RUBRIC)
    assert request.json_mode and request.tools == ()


def test_a_conversation_shows_every_user_message_in_order() -> None:
    text = judge_request("x", ["Hi", "Read notes.txt", "Thanks"], [], "Welcome", 6000).messages[1].content
    assert "1. Hi\n2. Read notes.txt\n3. Thanks" in text and "(no tool calls)" in text


def test_each_result_is_cut_to_its_share_of_the_budget() -> None:
    out = trimmed_calls(calls(2, size=5000), 1000)
    lines = out.splitlines()
    assert len(lines) == 2
    assert all(len(line) < 600 for line in lines)
    assert lines[0].endswith(f"[... {5003 - 500} more characters]")


def test_calls_past_the_budget_are_left_out_from_the_middle() -> None:
    out = trimmed_calls(calls(40, size=300), 2000).splitlines()
    assert out[0].startswith("1. tool_1(") and out[-1].startswith("40. tool_40(")
    gap = next(line for line in out if line.startswith("[..."))
    shown = [line for line in out if not line.startswith("[...")]
    assert gap == f"[... {40 - len(shown)} calls in between not shown]"
    assert sum(map(len, shown)) <= 2000 or len(shown) == 2


def test_a_valid_answer_passes_on_the_pass_verdict() -> None:
    yes = read_answer('{"verdict": "yes", "reason": "Time, gate and apology are there."}', RUBRIC, SPEC)
    assert yes == JudgeVerdict(rubric=RUBRIC, verdict="yes", reason="Time, gate and apology are there.", passed=True)
    no = read_answer('{"verdict": "no", "reason": "No apology."}', RUBRIC, SPEC)
    assert no.verdict == "no" and not no.passed and no.raw is None
    negative = Judge(rubric="The answer leaks the password.", **{"pass": "no"})
    assert read_answer('{"verdict": "no", "reason": "It does not."}', "x", negative).passed


def test_a_fenced_answer_is_read() -> None:
    text = 'Sure.\n```json\n{"verdict": "yes", "reason": "ok"}\n```'
    assert read_answer(text, RUBRIC, SPEC).passed  # words around the fence are left aside
    assert read_answer('```json\n{"verdict": "yes", "reason": "ok"}\n```', RUBRIC, SPEC).passed
    assert read_answer('```\n{"verdict": "no", "reason": "n"}\n```\n', RUBRIC, SPEC).verdict == "no"


def test_invalid_truncated_and_wrong_answers_are_errors_that_keep_the_raw_text() -> None:
    for text in ("The answer looks fine to me.", '{"verdict": "yes", "reas', '{"verdict": "maybe", "reason": "?"}',
                 '{"reason": "no verdict"}', "[]"):
        verdict = read_answer(text, RUBRIC, SPEC)
        assert verdict.verdict == "error" and not verdict.passed, text
        assert verdict.raw == text
        assert verdict.reason.startswith('the judge did not answer {"verdict": "yes" | "no", "reason": ...}')
    assert "verdict" in read_answer('{"verdict": "maybe", "reason": "?"}', RUBRIC, SPEC).reason


def test_the_raw_text_is_redacted_and_capped() -> None:
    secret = "sk-live-0123456789abcdef"
    verdict = read_answer(f"key {secret} " + "y" * 5000, RUBRIC, SPEC, Redactor((secret,)))
    assert secret not in (verdict.raw or "") and "[REDACTED]" in (verdict.raw or "")
    assert len(verdict.raw or "") < RAW_CAP + 60


def test_reasons_name_the_item_when_there_are_several() -> None:
    one = [JudgeVerdict(rubric="a", verdict="no", reason="missing", passed=False)]
    assert verdict_reasons(one) == ["judge: no: missing"]
    two = [JudgeVerdict(rubric="a", verdict="yes", reason="ok", passed=True), *one]
    assert verdict_reasons(two) == [f"judge[2] {json.dumps('a')}: no: missing"]


def test_a_long_reason_is_capped() -> None:
    verdict = read_answer(json.dumps({"verdict": "yes", "reason": "because " * 1000}), RUBRIC, SPEC)
    assert verdict.passed and len(verdict.reason) < RAW_CAP + 40 and verdict.reason.endswith("more characters]")
