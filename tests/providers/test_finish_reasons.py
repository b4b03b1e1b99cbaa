"""Why a model turn ended, from each wire format over a loopback socket through `replio eval run`:
each turn's finish reason is kept in the result (`finish`, the provider's own words); a turn that
stopped for an abnormal reason without an answer ends the fixture `error` naming the reason, one a
length limit cut short ends it `truncated` (its partial answer kept); the usual reasons change nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer, Reply

#: The fixture: a task, a file to read, and a check that the answer says "42".
FIXTURE = {"task": "What is six times seven?", "files": {"notes.txt": "six times seven\n"},
           "verifier": {"answer": {"$contains": "42"}}}
CALL = ("file_read", {"path": "notes.txt"})


def openai(text: str, reason: str | None, call: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if call:
        message["tool_calls"] = [{"id": "c1", "type": "function",
                                  "function": {"name": CALL[0], "arguments": json.dumps(CALL[1])}}]
    return {"choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}


def anthropic(text: str, reason: str | None, call: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if call:
        content.append({"type": "tool_use", "id": "c1", "name": CALL[0], "input": CALL[1]})
    return {"type": "message", "role": "assistant", "content": content, "stop_reason": reason,
            "usage": {"input_tokens": 10, "output_tokens": 2}}


def responses(text: str, reason: str | None, call: bool = False) -> dict[str, Any]:
    output: list[dict[str, Any]] = [{"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": text}]}] if text else []
    if call:
        output.append({"type": "function_call", "call_id": "c1", "name": CALL[0], "arguments": json.dumps(CALL[1])})
    status = {"status": "completed"} if reason in (None, "completed") else \
        {"status": "incomplete", "incomplete_details": {"reason": reason}}
    return {"object": "response", **status, "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}}


def gemini(text: str, reason: str | None, call: bool = False, message: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    if call:
        parts.append({"functionCall": {"name": CALL[0], "args": CALL[1]}})
    # A candidate a filter stopped comes without content at all, as Gemini sends it.
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}} if parts else {}
    candidate |= {"finishReason": reason, "index": 0} | ({"finishMessage": message} if message else {})
    return {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2,
                                                         "totalTokenCount": 12}}


def ollama(text: str, reason: str | None, call: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if call:
        message["tool_calls"] = [{"function": {"name": CALL[0], "arguments": CALL[1]}}]
    return {"model": "m", "message": message, "done": True, "done_reason": reason,
            "prompt_eval_count": 10, "eval_count": 2}


#: Provider name -> (the body builder, the base URL's path on the server, its environment).
FORMATS: dict[str, tuple[Callable[..., dict[str, Any]], str, dict[str, str]]] = {
    "openai": (openai, "/v1", {}),
    "anthropic": (anthropic, "", {"ANTHROPIC_API_KEY": "sk-ant-test-finish"}),
    "openai-responses": (responses, "/v1", {}),
    "gemini": (gemini, "/v1beta", {"GEMINI_API_KEY": "AIzaSy-finish-0123456789"}),
    "ollama": (ollama, "", {}),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".replio" / "eval").mkdir(parents=True)
    (tmp_path / ".replio" / "eval" / "x.json").write_text(json.dumps(FIXTURE))
    (tmp_path / ".replio" / "config.json").write_text(json.dumps({"bundled": False}))
    return tmp_path


def run(project: Path, server: LLMServer, provider: str, *bodies: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """`replio eval run` of fixture x against `provider` on `server`, which answers with `bodies` in turn."""
    _, path, env = FORMATS[provider]
    answers = iter(bodies)
    server.handler = lambda seen: Reply(json=next(answers))
    result = CliRunner().invoke(main, ["eval", "--path", str(project), "run", "--fixture", "x", "--provider",
                                       f"{provider}:m", "--base-url", server.url + path, "--no-cassettes",
                                       "--output", "json"], env=env, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)["fixtures"][0]


#: (provider, its reason, the field it came in): turns that stopped for an abnormal reason, no answer.
ABNORMAL = [
    ("openai", "content_filter", "finish_reason"),
    ("openai", "eos_token", "finish_reason"),  # a compatible server's own reason: no answer is no answer
    ("anthropic", "refusal", "stop_reason"),
    ("openai-responses", "content_filter", "incomplete_details.reason"),
    ("gemini", "SAFETY", "finishReason"),
    ("gemini", "RECITATION", "finishReason"),
    ("gemini", "MALFORMED_FUNCTION_CALL", "finishReason"),
    ("gemini", "UNEXPECTED_TOOL_CALL", "finishReason"),
    ("ollama", "unload", "done_reason"),
]


@pytest.mark.parametrize(("provider", "reason", "field"), ABNORMAL)
def test_an_abnormal_stop_without_an_answer_ends_in_error_naming_it(project: Path, llm_server: LLMServer,
                                                                     provider: str, reason: str, field: str) -> None:
    code, fx = run(project, llm_server, provider, FORMATS[provider][0]("", reason))
    assert code == 1  # an error is exit 1
    assert fx["status"] == "error" and fx["pass"] is False and fx["answer"] == ""
    assert fx["error"] == f"the model stopped without an answer ({field} {reason})"
    assert fx["finish"] == [reason]


def test_gemini_s_own_explanation_is_part_of_the_error(project: Path, llm_server: LLMServer) -> None:
    body = gemini("", "MALFORMED_FUNCTION_CALL", message="Malformed function call: print(default_api.x(")
    _, fx = run(project, llm_server, "gemini", body)
    assert fx["error"] == ("the model stopped without an answer (finishReason MALFORMED_FUNCTION_CALL: Malformed "
                           "function call: print(default_api.x()")


#: (provider, its length reason, the field it came in).
LENGTH = [
    ("openai", "length", "finish_reason"),
    ("anthropic", "max_tokens", "stop_reason"),
    ("anthropic", "model_context_window_exceeded", "stop_reason"),
    ("openai-responses", "max_output_tokens", "incomplete_details.reason"),
    ("gemini", "MAX_TOKENS", "finishReason"),
    ("ollama", "length", "done_reason"),
]


@pytest.mark.parametrize(("provider", "reason", "field"), LENGTH)
def test_a_length_stop_is_truncated_with_or_without_the_start_of_an_answer(
        project: Path, llm_server: LLMServer, provider: str, reason: str, field: str) -> None:
    build = FORMATS[provider][0]
    code, fx = run(project, llm_server, provider, build("", reason))
    assert (code, fx["status"], fx["answer"], fx["finish"]) == (0, "truncated", "", [reason])
    assert fx["error"] == (f"the model reached a length limit before it answered ({field} {reason}); the "
                           "provider's max_tokens (.replio/config.json) bounds a response")
    code, fx = run(project, llm_server, provider, build("It is 42, because six", reason))
    assert (code, fx["status"], fx["answer"]) == (0, "truncated", "It is 42, because six")
    assert fx["error"].startswith(f"its answer was cut short at a length limit ({field} {reason})")
    assert fx["pass"] is True  # judged as it stands


@pytest.mark.parametrize(("provider", "reasons"), [
    ("openai", ["tool_calls", "stop"]),
    ("anthropic", ["tool_use", "end_turn"]),
    ("openai-responses", ["completed", "completed"]),
    ("gemini", ["STOP", "STOP"]),
    ("ollama", ["stop", "stop"]),
])
def test_each_model_turn_s_finish_reason_is_kept_in_order(project: Path, llm_server: LLMServer, provider: str,
                                                          reasons: list[str]) -> None:
    build = FORMATS[provider][0]
    code, fx = run(project, llm_server, provider, build("", reasons[0], call=True), build("42", reasons[1]))
    assert (code, fx["status"], fx["error"], fx["answer"]) == (0, "ok", None, "42")
    assert fx["finish"] == reasons and [c["name"] for c in fx["trace"]] == ["file_read"]


@pytest.mark.parametrize(("provider", "reason"), [("openai", "content_filter"), ("gemini", "SAFETY"),
                                                  ("openai", "eos_token")])
def test_an_answer_given_whatever_the_stop_is_the_answer(project: Path, llm_server: LLMServer, provider: str,
                                                          reason: str) -> None:
    _, fx = run(project, llm_server, provider, FORMATS[provider][0]("It is 42.", reason))
    assert (fx["status"], fx["error"], fx["answer"], fx["finish"]) == ("ok", None, "It is 42.", [reason])


def test_a_turn_that_stopped_short_after_a_call_ends_the_run_there(project: Path, llm_server: LLMServer) -> None:
    code, fx = run(project, llm_server, "gemini", gemini("", "STOP", call=True), gemini("", "SAFETY"))
    assert (code, fx["status"], fx["finish"]) == (1, "error", ["STOP", "SAFETY"])
    assert fx["trace"][0]["result"].endswith("six times seven") and len(llm_server.requests) == 2


def test_the_mock_says_no_finish_reason_and_the_result_has_no_key(tmp_path: Path) -> None:
    (tmp_path / ".replio" / "eval").mkdir(parents=True)
    (tmp_path / ".replio" / "eval" / "x.json").write_text(json.dumps(FIXTURE))
    (tmp_path / ".replio" / "config.json").write_text(json.dumps({"provider": "mock", "bundled": False}))
    result = CliRunner().invoke(main, ["eval", "--path", str(tmp_path), "run", "--fixture", "x", "--output", "json"])
    assert "finish" not in json.loads(result.stdout)["fixtures"][0]
