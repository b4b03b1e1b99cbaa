"""The helper agents speak replio's protocol with: one task, or JSON lines in a conversation."""

from __future__ import annotations

import io
import json
import os

import pytest

from replio_replay import agent_messages, reply
from replio_replay.agents.protocol import truncated_answer


def test_one_task_comes_from_the_environment_and_the_answer_is_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLIO_CONVERSATION", raising=False)
    monkeypatch.setenv("REPLIO_TASK", "What is 2+2?")
    out = io.StringIO()
    for message in agent_messages(io.StringIO("ignored")):
        reply(f"you asked: {message}", out)
    assert out.getvalue() == "you asked: What is 2+2?\n"


def test_without_the_variable_the_task_is_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLIO_CONVERSATION", raising=False)
    monkeypatch.delenv("REPLIO_TASK", raising=False)
    assert list(agent_messages(io.StringIO("from stdin"))) == ["from stdin"]


def test_a_conversation_is_json_lines_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLIO_CONVERSATION", "1")
    given = io.StringIO('{"user": "hello"}\n\n{"user": "ünïcode \\n two lines"}\n')
    out = io.StringIO()
    for message in agent_messages(given):
        reply(message.upper(), out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"answer": "HELLO"}, {"answer": "ÜNÏCODE \n TWO LINES"}]


def test_a_line_that_is_not_a_user_message_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLIO_CONVERSATION", "1")
    with pytest.raises(ValueError, match="not"):
        list(agent_messages(io.StringIO('{"bot": "x"}\n')))


def test_reply_takes_text_only() -> None:
    with pytest.raises(TypeError, match="str"):
        reply(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("conversation", [True, False])
def test_an_answer_cut_short_is_a_json_line_saying_so(monkeypatch: pytest.MonkeyPatch, conversation: bool) -> None:
    monkeypatch.setenv("REPLIO_CONVERSATION", "1" if conversation else "0")
    out = io.StringIO()
    reply("partial ü", out, truncated=True)
    assert json.loads(out.getvalue()) == {"answer": "partial ü", "truncated": True}
    assert truncated_answer(out.getvalue()) == "partial ü"
    assert truncated_answer('{"answer": "x"}') is None and truncated_answer("plain text") is None


@pytest.mark.parametrize("conversation", ["1", ""])
def test_an_answer_holding_a_lone_surrogate_is_written_as_u_fffd(monkeypatch: pytest.MonkeyPatch,
                                                                 conversation: str) -> None:
    monkeypatch.setenv("REPLIO_CONVERSATION", conversation)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")  # strict, as a real standard output is
    reply("files: " + os.fsdecode(b"caf\xe9.txt"), out)
    written = raw.getvalue().decode("utf-8")
    answer = json.loads(written)["answer"] if conversation else written.removesuffix("\n")
    assert answer == "files: caf\ufffd.txt"
