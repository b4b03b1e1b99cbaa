"""The verifier: each check alone and combined; a fixture without a verifier passes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from replio_replay.judge.results import TraceCall
from replio_replay.judge.verifier import Evidence, verify
from tests.helpers import make_fixture


def trace(*calls: tuple[str, Any]) -> list[TraceCall]:
    return [TraceCall(name=name, arguments=args) for name, args in calls]


def check(verifier: dict[str, Any], calls: list[TraceCall], **fixture: Any) -> tuple[bool, list[str]]:
    return verify(make_fixture(verifier=verifier, **fixture), Evidence(calls))


GLOB_READ = trace(("glob", {"pattern": "**/*.py"}), ("file_read", {"path": "src/app.py", "limit": 50}))


def test_no_verifier_passes_whatever_happened() -> None:
    assert verify(make_fixture(), Evidence()) == (True, [])
    assert verify(make_fixture(expected=["grep"]), Evidence(GLOB_READ)) == (True, [])


def test_an_empty_verifier_passes() -> None:
    assert check({}, GLOB_READ) == (True, [])


# exact ---------------------------------------------------------------------------------------------


def test_exact_true_compares_names_with_expected() -> None:
    assert check({"exact": True}, GLOB_READ, expected=["glob", "file_read"]) == (True, [])
    ok, reasons = check({"exact": True}, GLOB_READ, expected=["file_read"])
    assert not ok
    assert reasons == ["exact: called ['glob', 'file_read'], expected ['file_read']"]


def test_exact_true_is_order_sensitive() -> None:
    ok, _ = check({"exact": True}, GLOB_READ, expected=["file_read", "glob"])
    assert not ok


def test_exact_true_with_expected_empty_means_no_calls() -> None:
    assert check({"exact": True}, [], expected=[])[0]
    assert not check({"exact": True}, GLOB_READ, expected=[])[0]


def test_exact_true_without_expected_fails_with_a_reason() -> None:
    ok, reasons = check({"exact": True}, GLOB_READ)
    assert not ok
    assert "expected" in reasons[0]


def test_exact_list_compares_names_with_that_list_not_expected() -> None:
    assert check({"exact": ["glob", "file_read"]}, GLOB_READ, expected=["grep"])[0]
    assert not check({"exact": ["glob"]}, GLOB_READ, expected=["glob", "file_read"])[0]


def test_exact_false_checks_nothing() -> None:
    assert check({"exact": False}, GLOB_READ, expected=["grep"])[0]


# must_include / avoid ------------------------------------------------------------------------------


def test_must_include() -> None:
    assert check({"must_include": ["file_read"]}, GLOB_READ)[0]
    ok, reasons = check({"must_include": ["file_read", "grep", "list_dir"]}, GLOB_READ)
    assert not ok
    assert reasons == ["must_include: grep was not called", "must_include: list_dir was not called"]


def test_must_include_on_an_empty_trace() -> None:
    assert not check({"must_include": ["grep"]}, [])[0]


def test_avoid() -> None:
    assert check({"avoid": ["run_command", "file_write"]}, GLOB_READ)[0]
    ok, reasons = check({"avoid": ["run_command", "glob"]}, GLOB_READ)
    assert not ok
    assert reasons == ["avoid: glob was called"]


# max_calls / min_calls -----------------------------------------------------------------------------


@pytest.mark.parametrize(("limit", "ok"), [(1, False), (2, True), (3, True), (0, False)])
def test_max_calls(limit: int, ok: bool) -> None:
    passed, reasons = check({"max_calls": limit}, GLOB_READ)
    assert passed is ok
    if not ok:
        assert reasons == [f"max_calls: 2 calls, at most {limit} allowed"]


def test_max_calls_zero_passes_an_empty_trace() -> None:
    assert check({"max_calls": 0}, [])[0]


@pytest.mark.parametrize(("limit", "ok"), [(1, True), (2, True), (3, False)])
def test_min_calls(limit: int, ok: bool) -> None:
    passed, reasons = check({"min_calls": limit}, GLOB_READ)
    assert passed is ok
    if not ok:
        assert reasons == [f"min_calls: 2 calls, at least {limit} required"]


# args ----------------------------------------------------------------------------------------------


def test_args_literal_values_must_be_equal() -> None:
    assert check({"args": {"file_read": {"path": "src/app.py"}}}, GLOB_READ)[0]
    assert check({"args": {"file_read": {"path": "src/app.py", "limit": 50}}}, GLOB_READ)[0]
    ok, reasons = check({"args": {"file_read": {"path": "src/app.py", "limit": 51}}}, GLOB_READ)
    assert not ok
    assert reasons == ["args: no file_read call with {'path': 'src/app.py', 'limit': 51}"]


def test_args_missing_argument_fails() -> None:
    assert not check({"args": {"file_read": {"offset": 1}}}, GLOB_READ)[0]


def test_args_literal_is_not_a_substring_match() -> None:
    assert not check({"args": {"file_read": {"path": "app.py"}}}, GLOB_READ)[0]


def test_args_some_call_of_the_tool_must_match_every_key_at_once() -> None:
    calls = trace(("file_read", {"path": "a.py", "offset": 1}), ("file_read", {"path": "b.py", "offset": 9}))
    assert check({"args": {"file_read": {"path": "b.py", "offset": 9}}}, calls)[0]
    # path from one call and offset from the other do not make a match
    assert not check({"args": {"file_read": {"path": "a.py", "offset": 9}}}, calls)[0]


def test_args_of_a_tool_never_called_fail() -> None:
    ok, reasons = check({"args": {"grep": {"pattern": "x"}}}, GLOB_READ)
    assert not ok
    assert reasons == ["args: no grep call with {'pattern': 'x'}"]


def test_args_literal_objects_and_lists_compare_by_value() -> None:
    calls = trace(("web_fetch", {"url": "http://x", "opts": {"b": 2, "a": [1, 2]}}))
    assert check({"args": {"web_fetch": {"opts": {"a": [1, 2], "b": 2}}}}, calls)[0]
    assert not check({"args": {"web_fetch": {"opts": {"a": [2, 1], "b": 2}}}}, calls)[0]


def test_args_regex_searches_the_value() -> None:
    assert check({"args": {"file_read": {"path": {"$regex": r"app\.py$"}}}}, GLOB_READ)[0]
    assert check({"args": {"file_read": {"path": {"$regex": "app"}}}}, GLOB_READ)[0]  # search, not match
    ok, reasons = check({"args": {"file_read": {"path": {"$regex": r"^lib/"}}}}, GLOB_READ)
    assert not ok
    assert reasons == ["args: no file_read call with {'path': {'$regex': '^lib/'}}"]


def test_args_contains_is_a_substring_check() -> None:
    assert check({"args": {"glob": {"pattern": {"$contains": "*.py"}}}}, GLOB_READ)[0]
    ok, reasons = check({"args": {"glob": {"pattern": {"$contains": "*.js"}}}}, GLOB_READ)
    assert not ok
    assert reasons == ["args: no glob call with {'pattern': {'$contains': '*.js'}}"]


def test_args_checks_on_non_string_values_do_not_match() -> None:
    assert not check({"args": {"file_read": {"limit": {"$regex": "50"}}}}, GLOB_READ)[0]
    assert not check({"args": {"file_read": {"limit": {"$contains": "5"}}}}, GLOB_READ)[0]


def test_args_ignore_calls_whose_arguments_were_not_json() -> None:
    calls = trace(("file_read", '{"path": "src/app.py"'))
    assert not check({"args": {"file_read": {"path": {"$contains": "app"}}}}, calls)[0]


def test_args_mix_literals_and_checks() -> None:
    v = {"args": {"file_read": {"path": {"$regex": "^src/"}, "limit": 50}}}
    assert check(v, GLOB_READ)[0]


# combined ------------------------------------------------------------------------------------------

COMBINED = {
    "exact": True,
    "must_include": ["file_read"],
    "avoid": ["run_command"],
    "max_calls": 3,
    "min_calls": 2,
    "args": {"file_read": {"path": {"$contains": "app"}}, "glob": {"pattern": "**/*.py"}},
}


def test_combined_all_hold() -> None:
    assert check(COMBINED, GLOB_READ, expected=["glob", "file_read"]) == (True, [])


def test_combined_every_failing_check_gives_its_reason() -> None:
    calls = trace(("run_command", {"command": "ls"}), ("run_command", {"command": "ls"}),
                  ("glob", {"pattern": "*"}), ("glob", {"pattern": "*"}))
    ok, reasons = check(COMBINED, calls, expected=["glob", "file_read"])
    assert not ok
    prefixes = [r.split(":")[0] for r in reasons]
    assert prefixes == ["exact", "must_include", "avoid", "max_calls", "args", "args"]


def test_combined_one_failing_check_fails_the_whole() -> None:
    extra = trace(("file_read", {"path": "src/other.py"}), ("glob", {"pattern": "*.md"}))
    ok, reasons = check({**COMBINED, "exact": False}, [*GLOB_READ, *extra], expected=["glob", "file_read"])
    assert not ok
    assert reasons == ["max_calls: 4 calls, at most 3 allowed"]


# outcome: the answer and the files ------------------------------------------------------------


def outcome(verifier: dict[str, Any], answer: str = "", files: dict[str, str | None] | None = None,
            **fixture: Any) -> tuple[bool, list[str]]:
    return verify(make_fixture(verifier=verifier, **fixture), Evidence((), answer, files or {}))


@pytest.mark.parametrize(("expectation", "answer", "ok"), [
    ("8743", "  8743\n", True),
    ("8743", "The port is 8743.", False),
    ({"$contains": "8743"}, "The port is 8743.", True),
    ({"$contains": "port"}, "The Port is 8743.", False),
    ({"$icontains": "PORT"}, "The Port is 8743.", True),
    ({"$regex": r"\b8743\b"}, "port=8743", True),
    ({"$regex": r"^8743$"}, "port 8743", False),
    ({"$any": [{"$contains": "8743"}, "eight"]}, "eight", True),
    ({"$any": [{"$contains": "8743"}, "eight"]}, "nine", False),
    ({"$not": {"$contains": "<tool_response>"}}, "It is 8743.", True),
    ({"$not": {"$contains": "<tool_response>"}}, "<tool_response>\n3 port\n</tool_response>", False),
])
def test_answer_matchers(expectation: Any, answer: str, ok: bool) -> None:
    passed, reasons = outcome({"answer": expectation}, answer)
    assert passed is ok
    if not ok:
        assert reasons[0].startswith("answer: expected ") and json.dumps(answer[:20])[1:-1] in reasons[0]


def test_the_answer_reason_quotes_only_the_start_of_a_long_answer() -> None:
    _, (reason,) = outcome({"answer": {"$contains": "x"}}, "y" * 500)
    assert reason.endswith('the answer is "' + "y" * 80 + '..."')


@pytest.mark.parametrize(("check", "content", "ok", "words"), [
    ("port = 9090\n", "port = 9090\n", True, ""),
    ("port = 9090\n", "port = 9090\nhost = x\n", False, "expected"),
    ({"$contains": "port = 9090"}, "[server]\nport = 9090\n", True, ""),
    ({"$contains": "port = 9090"}, None, False, "there is no such file"),
    ({"$exists": True}, "", True, ""),
    ({"$exists": True}, None, False, "there is no such file"),
    ({"$exists": False}, None, True, ""),
    ({"$exists": False}, "still here", False, "should have been removed"),
    ({"$unchanged": True}, "port = 8080\n", True, ""),
    ({"$unchanged": True}, "port = 9090\n", False, "it changed"),
    ({"$not": {"$contains": "8080"}}, "port = 9090\n", True, ""),
])
def test_file_checks(check: Any, content: str | None, ok: bool, words: str) -> None:
    fixture = make_fixture(files={"app.toml": "port = 8080\n"}, verifier={"files": {"app.toml": check}})
    passed, reasons = verify(fixture, Evidence((), "", {"app.toml": content}))
    assert passed is ok
    assert all(r.startswith("files.app.toml: ") and words in r for r in reasons)


HEAD = "".join(f"line {n}: fine\n" for n in range(40))


@pytest.mark.parametrize(("check", "content", "said"), [
    (HEAD + "port = 9090\n", HEAD + "port = 8081\n", 'from line 41 it holds "port = 8081\\n"'),
    ({"$contains": "port = 9090\nhost = a"}, HEAD + "port = 9090\nhost = b\n",
     'from line 41 it holds "port = 9090\\nhost = b\\n"'),
    ({"$icontains": "PORT = 9090"}, HEAD + "port = 9091\n", 'from line 41 it holds "port = 9091\\n"'),
    ({"$unchanged": True}, HEAD + "port = 9090\n", 'it changed; from line 41 it now holds "port = 9090\\n"'),
    ({"$contains": "nowhere"}, HEAD, 'it holds "line 0: fine\\n'),
])
def test_a_failed_file_check_quotes_where_the_file_differs_not_its_start(check: Any, content: str, said: str) -> None:
    fixture = make_fixture(files={"app.toml": HEAD + "port = 8080\n"}, verifier={"files": {"app.toml": check}})
    _, (reason,) = verify(fixture, Evidence((), "", {"app.toml": content}))
    assert said in reason, reason


def test_unchanged_on_a_file_the_fixture_did_not_provision_says_so() -> None:
    _, (reason,) = outcome({"files": {"new.txt": {"$unchanged": True}}}, files={"new.txt": "x"})
    assert "did not provision it" in reason


@pytest.mark.parametrize(("check", "words"), [
    ({"$exists": "yes"}, "$exists needs true or false"),
    ({"$unchanged": False}, "$unchanged needs true"),
    ({"$exists": True, "$contains": "x"}, "stand alone"),
    (3, "text (its whole content) or a matcher"),
    ({"$regx": "a"}, "unknown check"),
])
def test_broken_file_checks_are_errors_when_the_fixture_loads(check: Any, words: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=re.escape(words)):
        make_fixture(verifier={"files": {"a.txt": check}})


def test_every_failed_check_is_named_and_pass_is_all_of_them() -> None:
    passed, reasons = outcome({"must_include": ["grep"], "answer": "yes", "files": {"a": {"$exists": True}}},
                              "no", {"a": None})
    assert not passed
    assert [r.split(":")[0] for r in reasons] == ["must_include", "answer", "files.a"]


def test_in_order_needs_the_calls_as_a_subsequence() -> None:
    made = trace(("glob", {}), ("grep", {}), ("file_read", {"path": "a"}))
    assert check({"in_order": ["glob", {"name": "file_read", "arguments": {"path": "a"}}]}, made) == (True, [])
    passed, (reason,) = check({"in_order": ["file_read", "glob"]}, made)
    assert not passed and reason.startswith("in_order: ['file_read', 'glob'] were not called in this order")
    _, (reason,) = check({"in_order": [{"name": "file_read", "arguments": {"path": "b"}}, "glob"]}, made)
    assert reason.startswith("in_order: [{'name': 'file_read', 'arguments': {'path': 'b'}}, 'glob'] were not called")


def test_expected_may_hold_call_objects_and_accuracy_follows_the_match_mode() -> None:
    from replio_replay.run.scoring import judge_transcript

    made = TraceCall(name="file_read", arguments={"path": "config/app.toml", "limit": 5})
    fixture = make_fixture(expected=[{"name": "file_read", "arguments": {"path": {"$regex": "app.toml$"}}}])
    assert fixture.expected_names == ["file_read"]
    from replio_replay.providers.base import ToolCall
    from replio_replay.run.engine import CallRecord, Transcript

    t = Transcript(records=[CallRecord(0, ToolCall("c", made.name, made.arguments), "ok")])
    assert judge_transcript(fixture, t).accuracy == 1.0
    wrong = make_fixture(expected=[{"name": "file_read", "arguments": {"path": "other.toml"}}])
    assert judge_transcript(wrong, t).accuracy == 0.0


# said: what the agent told the user on the way -----------------------------------------------


SAID = ("Let me look that up.", "Your refund of 1,250 EUR is on its way.", "Anything else?")


@pytest.mark.parametrize(("said", "passed"), [
    ([{"$icontains": "refund of"}], True),
    ([{"$regex": r"1,?250"}, "Anything else?"], True),  # a literal is a whole message
    (["anything else"], False),
    ([{"$contains": "refund"}, {"$contains": "transferred"}], False),
])
def test_said_holds_when_some_message_of_the_agent_matches_each(said: list[Any], passed: bool) -> None:
    ok, reasons = verify(make_fixture(verifier={"said": said}), Evidence(answer="Anything else?", said=SAID))
    assert ok is passed
    assert passed or reasons[0].startswith("said: no message of the agent matches") and "(3 messages)" in reasons[0]


def test_said_is_not_for_a_turn() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="cannot check `said`"):
        make_fixture(turns=[{"user": "hi", "verifier": {"said": ["x"]}}])


# any_order and finished (τ²-bench's ACTION and its rewarding only a conversation that ended) ----------


def test_any_order_wants_each_call_made_in_any_order_one_call_standing_for_several() -> None:
    calls = trace(("get", {"id": "B"}), ("cancel", {"id": "A", "reason": "no"}))
    assert check({"any_order": [{"name": "cancel", "arguments": {"id": "A"}}, "get",
                                {"name": "get", "arguments": {"id": "B"}}]}, calls) == (True, [])
    passed, reasons = check({"any_order": [{"name": "cancel", "arguments": {"id": "B"}}]}, calls)
    assert not passed and reasons == ['any_order: no call matches {"name": "cancel", "arguments": {"id": "B"}}']


def test_any_order_with_optional_arguments_is_taus_comparison_of_an_action() -> None:
    # τ²: the call's arguments must each be the action's, equal; the action's may be left out
    action = {"name": "update", "arguments": {"id": {"$optional": "t1"}, "status": {"$optional": "done"}},
              "extra_arguments": False}
    assert check({"any_order": [action]}, trace(("update", {"id": "t1"})))[0]
    assert not check({"any_order": [action]}, trace(("update", {"id": "t1", "status": "open"})))[0]
    assert not check({"any_order": [action]}, trace(("update", {"id": "t1", "note": "x"})))[0]


def test_any_order_counts_the_simulated_users_own_calls() -> None:
    fixture = make_fixture(verifier={"any_order": ["dismiss"]})
    assert verify(fixture, Evidence(trace(("get", {})), user_trace=trace(("dismiss", {"id": "n1"}))))[0]
    assert not verify(fixture, Evidence(trace(("get", {}))))[0]


def test_finished_fails_a_run_cut_short_at_a_limit() -> None:
    fixture = make_fixture(verifier={"finished": True})
    assert verify(fixture, Evidence(truncated=False)) == (True, [])
    assert verify(fixture, Evidence(truncated=True)) == (False, ["finished: the run was cut short at a limit "
                                                                 "(truncated)"])
    assert verify(make_fixture(verifier={}), Evidence(truncated=True)) == (True, [])


def test_finished_is_not_for_a_turn() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="cannot check `finished`"):
        make_fixture(turns=[{"user": "hi", "verifier": {"finished": True}}])
