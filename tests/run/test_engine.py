"""The headless loop with the mock provider: ok, truncated, error, cancelled; calls in order."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import ContextFullError, ProviderConnectError, ProviderError
from replio_replay.judge.results import Status
from replio_replay.providers.base import ChatRequest, ChatResponse, Exchange, ToolCall, Usage
from replio_replay.providers.mock import MockProvider
from replio_replay.run.engine import NOT_RUN, Limits, Transcript, run_loop
from replio_replay.tools.base import ToolContext
from replio_replay.tools.permissions import Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import DEFAULT_SYSTEM_PROMPT
from tests.helpers import builtin_toolset, call, mock_provider, turn

TASK = "Find out what the project does."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    return tmp_path


def play(
    root: Path,
    turns: list[Any],
    *,
    limits: Limits | None = None,
    cancel: threading.Event | None = None,
    permissions: Permissions | None = None,
) -> tuple[Transcript, MockProvider]:
    provider = mock_provider({"fx": turns})
    toolbox = Toolbox(ToolContext(Sandbox(root)), permissions or Permissions.for_fixture({}), builtin_toolset())
    transcript = run_loop(
        TASK, lambda req: provider.generate(req, Exchange("fx")), toolbox,
        limits=limits or Limits(), cancel=cancel,
    )
    return transcript, provider


def names(t: Transcript) -> list[str]:
    return [r.call.name for r in t.records]


def test_an_answer_without_tool_calls_is_ok(root: Path) -> None:
    t, provider = play(root, [turn(text="It prints hi.", usage={"prompt": 7, "completion": 3})])
    assert t.status is Status.OK
    assert t.answer == "It prints hi."
    assert t.records == []
    assert t.tokens == 10
    assert t.error is None
    first = provider.requests[0][1]
    assert [(m.role, m.content) for m in first.messages] == [("system", DEFAULT_SYSTEM_PROMPT), ("user", TASK)]
    assert [spec["name"] for spec in first.tools] == list(builtin_toolset().names)


def test_tool_calls_then_an_answer_is_ok(root: Path) -> None:
    t, provider = play(root, [
        turn(call("list_dir", path=".")),
        turn(call("file_read", path="src/main.py")),
        turn(text="It prints hi."),
    ])
    assert t.status is Status.OK
    assert names(t) == ["list_dir", "file_read"]
    assert [r.turn for r in t.records] == [0, 1]
    assert t.records[1].result == "     1  print('hi')"
    assert t.answer == "It prints hi."
    # each request carries the previous results back to the model
    third = provider.requests[2][1].messages
    assert [m.role for m in third] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert third[-1].content == "     1  print('hi')"
    assert third[-1].tool_call_id == "call_1_0" and third[-1].name == "file_read"


def test_several_calls_in_one_turn_run_in_order(root: Path) -> None:
    t, provider = play(root, [
        turn(
            call("file_read", path="notes.txt"),
            call("glob", pattern="**/*.py"),
            call("file_read", path="src/main.py", limit=1),
        ),
        turn(text="done"),
    ])
    assert t.status is Status.OK
    assert names(t) == ["file_read", "glob", "file_read"]
    assert [r.turn for r in t.records] == [0, 0, 0]
    assert [r.result for r in t.records] == ["     1  one\n     2  two", "src/main.py", "     1  print('hi')"]
    second = provider.requests[1][1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert [m.tool_call_id for m in second[3:]] == ["call_0_0", "call_0_1", "call_0_2"]
    assert len(second[2].tool_calls) == 3


def test_text_and_tool_calls_in_one_turn_continue_the_loop(root: Path) -> None:
    t, _ = play(root, [turn(call("list_dir"), text="Let me look."), turn(text="Done.")])
    assert t.status is Status.OK
    assert names(t) == ["list_dir"]
    assert t.answer == "Done."


def test_the_turn_limit_truncates(root: Path) -> None:
    t, provider = play(root, [turn(call("list_dir", depth=i)) for i in range(1, 6)], limits=Limits(max_turns=3))
    assert t.status is Status.TRUNCATED
    assert len(provider.requests) == 3
    assert names(t) == ["list_dir"] * 3
    assert t.answer == ""


def test_the_call_limit_truncates_mid_turn(root: Path) -> None:
    t, _ = play(root, [
        turn(call("list_dir", depth=1), call("list_dir", depth=2)),
        turn(call("list_dir", depth=3), call("list_dir", depth=4), call("list_dir", depth=5)),
        turn(text="never reached"),
    ], limits=Limits(max_turns=10, max_calls=3))
    assert t.status is Status.TRUNCATED
    assert [r.call.arguments for r in t.records] == [{"depth": 1}, {"depth": 2}, {"depth": 3}]


def test_exactly_max_calls_then_an_answer_is_ok(root: Path) -> None:
    t, _ = play(root, [turn(call("list_dir"), call("glob", pattern="*")), turn(text="done")],
                limits=Limits(max_calls=2))
    assert t.status is Status.OK
    assert len(t.records) == 2


def test_a_provider_error_ends_in_error_keeping_what_happened(root: Path) -> None:
    t, _ = play(root, [
        turn(call("list_dir"), usage={"prompt": 4, "completion": 1}),
        ProviderConnectError("openai: cannot connect to http://127.0.0.1:9"),
    ])
    assert t.status is Status.ERROR
    assert t.error == "openai: cannot connect to http://127.0.0.1:9"
    assert names(t) == ["list_dir"]
    assert t.tokens == 5


def test_a_full_context_window_truncates_keeping_what_happened(root: Path) -> None:
    full = "llamacpp: the conversation no longer fits the model's context window (HTTP 400 from ...)"
    t, provider = play(root, [turn(call("list_dir")), ContextFullError(full), turn(text="never asked")])
    assert (t.status, t.error, names(t), t.answer) == (Status.TRUNCATED, full, ["list_dir"], "")
    assert len(provider.requests) == 2


def test_a_provider_error_on_the_first_turn(root: Path) -> None:
    t, _ = play(root, [ProviderError("bad gateway")])
    assert (t.status, t.error, t.records) == (Status.ERROR, "bad gateway", [])


def test_a_cancel_before_the_start_is_cancelled(root: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    t, provider = play(root, [turn(call("list_dir"))], cancel=cancel)
    assert t.status is Status.CANCELLED
    assert provider.requests == []
    assert t.records == []


def test_a_cancel_during_a_turn_stops_before_the_next_call(root: Path) -> None:
    cancel = threading.Event()

    def second_turn(request: ChatRequest) -> ChatResponse:
        cancel.set()  # Ctrl-C arrives while the model is thinking
        return ChatResponse(tool_calls=(ToolCall("c1", "file_write", {"path": "x", "content": "y"}),))

    t, _ = play(root, [turn(call("list_dir")), second_turn], cancel=cancel)
    assert t.status is Status.CANCELLED
    assert names(t) == ["list_dir"]
    assert not (root / "x").exists()


def test_invalid_json_arguments_are_answered_with_an_error(root: Path) -> None:
    t, provider = play(root, [turn(call("file_read", '{"path": "notes.txt"')), turn(text="sorry")])
    assert t.status is Status.OK
    assert t.records[0].call.arguments == '{"path": "notes.txt"'
    assert t.records[0].result.startswith("Error: arguments for file_read are not valid JSON")
    assert t.records[0].is_error
    assert provider.requests[1][1].messages[-1].content.startswith("Error:")


def test_denied_and_failing_calls_go_back_to_the_model_and_the_loop_goes_on(root: Path) -> None:
    t, _ = play(root, [
        turn(call("run_command", command="rm -rf ."), call("file_read", path="../etc/passwd"),
             call("no_such_tool"), call("file_read", path="notes.txt")),
        turn(text="done"),
    ])
    assert t.status is Status.OK
    results = [r.result for r in t.records]
    assert results[0].startswith("Error: permission denied: run_command")
    assert results[1].startswith("Error: path '../etc/passwd' is outside the project")
    assert results[2].startswith("Error: unknown tool 'no_such_tool'")
    assert results[3] == "     1  one\n     2  two"
    assert (root / "notes.txt").exists()


def test_tokens_prefer_total_and_fall_back_to_prompt_plus_completion(root: Path) -> None:
    t, _ = play(root, [
        ChatResponse(tool_calls=(ToolCall("a", "list_dir", {}),), usage=Usage(100, 20, 130)),
        ChatResponse(tool_calls=(ToolCall("b", "glob", {"pattern": "*"}),), usage=Usage(200, 30)),
        ChatResponse(text="done", usage=Usage()),
    ])
    assert t.tokens == 130 + 230


def test_when_the_script_runs_out_the_mock_answers(root: Path) -> None:
    t, _ = play(root, [turn(call("list_dir"))])
    assert t.status is Status.OK
    assert "no more turns" in t.answer


def test_single_response_ends_after_the_first_response_without_running_its_calls(root: Path) -> None:
    t, provider = play(root, [turn(call("file_write", path="x.txt", content="no"), call("list_dir", path="."),
                                   text="Calling."), turn(text="never asked")],
                       limits=Limits(single_response=True))
    assert t.status is Status.OK
    assert names(t) == ["file_write", "list_dir"]
    assert {r.result for r in t.records} == {NOT_RUN}
    assert t.answer == "Calling."
    assert len(provider.requests) == 1
    assert not (root / "x.txt").exists()


def test_single_response_with_an_answer_is_that_answer(root: Path) -> None:
    t, _ = play(root, [turn(text="No tool fits.")], limits=Limits(single_response=True))
    assert (t.status, t.records, t.answer) == (Status.OK, [], "No tool fits.")


def test_max_turns_one_still_runs_the_calls_and_truncates(root: Path) -> None:
    t, _ = play(root, [turn(call("list_dir", path="."))], limits=Limits(max_turns=1))
    assert t.status is Status.TRUNCATED
    assert t.records[0].result != NOT_RUN


def test_an_empty_system_prompt_sends_no_system_message(root: Path) -> None:
    provider = mock_provider({"fx": [turn(text="ok")]})
    toolbox = Toolbox(ToolContext(Sandbox(root)), Permissions.for_fixture({}), builtin_toolset().replace(system_prompt=""))
    run_loop(TASK, lambda req: provider.generate(req, Exchange("fx")), toolbox)
    assert [m.role for m in provider.requests[0][1].messages] == ["user"]


def test_a_turns_provider_items_ride_on_its_assistant_message_into_the_next_request(root: Path) -> None:
    items = ({"type": "reasoning", "encrypted_content": "gAAAA-opaque"}, {"type": "function_call", "call_id": "c1"})
    answers = iter([ChatResponse(tool_calls=(ToolCall("c1", "list_dir", {"path": "."}),), provider_items=items),
                    ChatResponse(text="done")])
    seen: list[ChatRequest] = []

    def generate(request: ChatRequest) -> ChatResponse:
        seen.append(request)
        return next(answers)

    toolbox = Toolbox(ToolContext(Sandbox(root)), Permissions.for_fixture({}), builtin_toolset())
    t = run_loop(TASK, generate, toolbox)
    assert t.status is Status.OK and t.answer == "done"
    assistant = [m for m in seen[1].messages if m.role == "assistant"]
    assert [m.provider_items for m in assistant] == [items]
    assert [r.call.name for r in t.records] == ["list_dir"]
