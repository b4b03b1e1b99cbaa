"""Answers no provider should send, handled: absurd token counts, lone surrogates, NaN in arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import run_args


def _odd(seen: Seen) -> bytes:
    body = seen.json()
    done = any(m["role"] == "tool" for m in body["messages"])
    if done:
        message = '{"role": "assistant", "content": "half a pair: \\ud800 and the rest"}'
    else:
        args = json.dumps('{"path": NaN}')
        message = ('{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", '
                   f'"function": {{"name": "file_read", "arguments": {args}}}}}]}}')
    usage = '{"prompt_tokens": NaN, "completion_tokens": -5, "total_tokens": 1e400}'
    return f'{{"choices": [{{"index": 0, "message": {message}}}], "usage": {usage}}}'.encode()


@pytest.mark.parametrize("output", ["json", "table", "junit"])
def test_odd_numbers_and_lone_surrogates_never_break_a_report(project: Path, llm_server: LLMServer,
                                                               output: str) -> None:
    llm_server.handler = lambda seen: Reply(body=_odd(seen), headers={"content-type": "application/json"})
    result = CliRunner().invoke(main, [*run_args(project, "--base-url", f"{llm_server.url}/v1", "--no-cassettes"),
                                       "--output", output, "--update-golden"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    if output == "json":
        alpha = json.loads(result.stdout)["fixtures"][0]
        assert alpha["status"] == "ok" and alpha["tokens"] == 0
        assert alpha["answer"] == "half a pair: \ufffd and the rest"
        assert alpha["trace"][0]["arguments"] == '{"path": NaN}'
        assert alpha["trace"][0]["result"].startswith("Error: arguments for file_read are not valid JSON")
    golden = json.loads((project / "golden" / "openai" / "test-model" / "alpha.json").read_text())
    assert golden["metrics"]["tokens"] == 0


def _halves(seen: Seen) -> bytes:
    """A lone surrogate in a tool call's arguments, then in the answer: JSON escapes, ASCII bytes."""
    if any(m["role"] == "tool" for m in seen.json()["messages"]):
        message = '{"role": "assistant", "content": "half a pair: \\ud800 and the rest"}'
    else:
        args = json.dumps('{"path": "notes\\ud800.txt"}')
        message = ('{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", '
                   f'"function": {{"name": "file_read", "arguments": {args}}}}}]}}')
    return f'{{"choices": [{{"index": 0, "message": {message}}}], "usage": {{"total_tokens": 7}}}}'.encode()


def test_a_lone_surrogate_is_recorded_as_sent_and_replays_identically(project: Path, llm_server: LLMServer) -> None:
    llm_server.handler = lambda seen: Reply(body=_halves(seen), headers={"content-type": "application/json"})
    args = run_args(project, "--base-url", f"{llm_server.url}/v1")
    recorded = CliRunner().invoke(main, [*args, "--record-mode", "all"], catch_exceptions=False)
    assert recorded.exit_code == 0, recorded.output
    alpha = json.loads(recorded.stdout)["fixtures"][0]
    assert alpha["status"] == "ok" and alpha["answer"] == "half a pair: \ufffd and the rest"
    assert alpha["trace"][0]["arguments"] == {"path": "notes\ufffd.txt"}
    cassette = next((project / "cassettes").rglob("alpha.yaml")).read_text(encoding="utf-8")
    assert cassette.count("\\ud800") == 2  # the bytes the server sent, escapes and all
    sent = [r.body for r in llm_server.requests]
    replayed = CliRunner().invoke(main, [*args, "--record-mode", "none"], catch_exceptions=False)
    assert replayed.exit_code == 0, replayed.output
    assert [r.body for r in llm_server.requests] == sent  # nothing reached the server
    live, again = json.loads(recorded.stdout), json.loads(replayed.stdout)
    assert [f.pop("request_drift") for f in again["fixtures"]] == [[], []]  # every request as recorded
    assert [f.pop("request_drift") for f in live["fixtures"]] == [None, None] and again == live


def test_a_lone_surrogate_in_an_error_message_is_shown_and_replayed(project: Path, llm_server: LLMServer) -> None:
    llm_server.handler = lambda seen: Reply(status=400, body=b'{"error": {"message": "bad \\ud800 half"}}',
                                            headers={"content-type": "application/json"})
    args = run_args(project, "--base-url", f"{llm_server.url}/v1")
    errors = []
    for mode in ("all", "none"):
        result = CliRunner().invoke(main, [*args, "--record-mode", mode], catch_exceptions=False)
        assert result.exit_code == 1, result.output
        errors.append([f["error"] for f in json.loads(result.stdout)["fixtures"]])
    assert errors[0] == errors[1] and all("HTTP 400" in e and "bad \ufffd half" in e for e in errors[0])
