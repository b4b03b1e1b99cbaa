"""Stub tools: answers from the declaration, `results` with `when`, and declaration checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from replio_replay._runtime.matchers import Matcher
from replio_replay.tools.base import Tool, ToolContext
from replio_replay.tools.declared import ToolDecl, declared_tool
from replio_replay.tools.permissions import Category, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.stub import StubCase, render_result
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet

DEFAULTS = Permissions.for_fixture({})


def stub(name: str = "lookup", **decl: Any) -> Tool:
    decl.setdefault("description", "a stub under test")
    return declared_tool(name, ToolDecl.model_validate(decl), source="test", base_dir=None)


def call(tool: Tool, tmp_path: Path, arguments: Any = None,
         permissions: Permissions = DEFAULTS) -> str:
    toolbox = Toolbox(ToolContext(Sandbox(tmp_path)), permissions, ToolSet("t", (tool,)))
    result = toolbox.call(tool.name, {} if arguments is None else arguments)
    assert isinstance(result, str)
    return result


def refusal(decl: dict[str, Any]) -> str:
    """The text of the ValidationError a declaration raises."""
    with pytest.raises(ValidationError) as info:
        ToolDecl.model_validate({"description": "d", **decl})
    return str(info.value)


# `result` -----------------------------------------------------------------------------------------


def test_result_answers_every_call(tmp_path: Path) -> None:
    tool = stub(result="always this", parameters={
        "type": "object", "properties": {"q": {"type": "string"}},
    })
    assert call(tool, tmp_path) == "always this"
    assert call(tool, tmp_path, {"q": "anything"}) == "always this"
    assert call(tool, tmp_path, {"q": "else", "extra": [1]}) == "always this"


def test_a_text_result_is_returned_as_is(tmp_path: Path) -> None:
    text = '  {"looks": "like json"}\n\nwith blank lines and ünïcode  \n'
    assert call(stub(result=text), tmp_path) == text
    assert call(stub(result=""), tmp_path) == ""


@pytest.mark.parametrize(("result", "expected"), [
    ({"z": 1, "a": {"y": [1, 2], "b": None}}, '{"a":{"b":null,"y":[1,2]},"z":1}'),
    ([3, "two", {"k": "v"}], '[3,"two",{"k":"v"}]'),
    (42, "42"),
    (2.5, "2.5"),
    (True, "true"),
    (None, "null"),
    ({"name": "Zoë"}, '{"name":"Zoë"}'),
])
def test_a_json_result_is_written_canonically(result: Any, expected: str, tmp_path: Path) -> None:
    assert call(stub(result=result), tmp_path) == expected


def test_an_error_result_is_an_error(tmp_path: Path) -> None:
    assert call(stub(result={"error": "order not found"}), tmp_path) == "Error: order not found"


def test_an_object_with_error_and_other_keys_is_plain_json(tmp_path: Path) -> None:
    tool = stub(result={"error": "partial", "code": 404})
    assert call(tool, tmp_path) == '{"code":404,"error":"partial"}'
    assert render_result({"errors": ["x"]}) == '{"errors":["x"]}'


# `results` ----------------------------------------------------------------------------------------

ORDER_PARAMS = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "qty": {"type": "number"}, "note": {"type": "string"}},
}


def test_the_first_matching_clause_answers(tmp_path: Path) -> None:
    overlapping = [
        {"when": {"id": {"$regex": "^A-"}}, "result": "an A order"},
        {"when": {"id": "A-1"}, "result": "exactly A-1"},
    ]
    tool = stub(parameters=ORDER_PARAMS, results=overlapping)
    assert call(tool, tmp_path, {"id": "A-1"}) == "an A order"
    reversed_tool = stub(parameters=ORDER_PARAMS, results=list(reversed(overlapping)))
    assert call(reversed_tool, tmp_path, {"id": "A-1"}) == "exactly A-1"
    assert call(reversed_tool, tmp_path, {"id": "A-2"}) == "an A order"


def test_every_matcher_of_a_clause_must_hold(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"when": {"id": "A-1", "qty": {"$min": 10}}, "result": "bulk A-1"},
        {"when": {"id": "A-1"}, "result": "small A-1"},
    ])
    assert call(tool, tmp_path, {"id": "A-1", "qty": 12}) == "bulk A-1"
    assert call(tool, tmp_path, {"id": "A-1", "qty": 3}) == "small A-1"
    assert call(tool, tmp_path, {"id": "A-1"}) == "small A-1"


def test_a_clause_without_when_matches_everything(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"when": {"id": "A-1"}, "result": "found"},
        {"result": {"error": "no such order"}},
    ])
    assert call(tool, tmp_path, {"id": "A-1"}) == "found"
    assert call(tool, tmp_path, {"id": "B-7"}) == "Error: no such order"
    assert call(tool, tmp_path, {}) == "Error: no such order"


def test_a_fallback_first_shadows_later_clauses(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"result": "fallback"},
        {"when": {"id": "A-1"}, "result": "never reached"},
    ])
    assert call(tool, tmp_path, {"id": "A-1"}) == "fallback"


def test_regex_searches_anywhere_in_the_text(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"when": {"note": {"$regex": "urgent|asap"}}, "result": "rushed"},
        {"when": {"note": {"$regex": "^\\d+$"}}, "result": "numeric"},
    ])
    assert call(tool, tmp_path, {"note": "please ship asap!"}) == "rushed"
    assert call(tool, tmp_path, {"note": "12345"}) == "numeric"
    assert call(tool, tmp_path, {"note": "12a45"}).startswith("Error: no stubbed result")


def test_contains_matches_a_substring(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"when": {"note": {"$contains": "gift"}}, "result": "wrapped"},
    ])
    assert call(tool, tmp_path, {"note": "a birthday gift box"}) == "wrapped"
    assert call(tool, tmp_path, {"note": "a birthday Gift box"}).startswith("Error: ")


def test_min_and_max_bound_numbers_inclusively(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[
        {"when": {"qty": {"$min": 1, "$max": 10}}, "result": "in range"},
        {"when": {"qty": {"$max": 0}}, "result": "not positive"},
        {"when": {"qty": {"$min": 100.5}}, "result": "huge"},
    ])
    assert call(tool, tmp_path, {"qty": 1}) == "in range"
    assert call(tool, tmp_path, {"qty": 10}) == "in range"
    assert call(tool, tmp_path, {"qty": 5.5}) == "in range"
    assert call(tool, tmp_path, {"qty": 0}) == "not positive"
    assert call(tool, tmp_path, {"qty": -3}) == "not positive"
    assert call(tool, tmp_path, {"qty": 100.5}) == "huge"
    assert call(tool, tmp_path, {"qty": 50}).startswith("Error: no stubbed result")


def test_literals_in_when_compare_whole_values(tmp_path: Path) -> None:
    tool = stub(results=[
        {"when": {"tags": ["a", "b"]}, "result": "list matched"},
        {"when": {"opts": {"deep": True}}, "result": "object matched"},
        {"when": {"id": "A-1"}, "result": "text matched"},
    ])
    assert call(tool, tmp_path, {"tags": ["a", "b"]}) == "list matched"
    assert call(tool, tmp_path, {"tags": ["b", "a"]}).startswith("Error: ")
    assert call(tool, tmp_path, {"opts": {"deep": True}}) == "object matched"
    assert call(tool, tmp_path, {"id": "A-1"}) == "text matched"
    assert call(tool, tmp_path, {"id": "a-1"}).startswith("Error: ")


def test_an_argument_not_named_in_when_is_free(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS, results=[{"when": {"id": "A-1"}, "result": "found"}])
    assert call(tool, tmp_path, {"id": "A-1", "qty": 99, "note": "whatever"}) == "found"


def test_a_named_argument_that_is_missing_does_not_match(tmp_path: Path) -> None:
    tool = stub(parameters=ORDER_PARAMS,
                results=[{"when": {"note": {"$regex": ""}}, "result": "x"}])
    assert call(tool, tmp_path, {"id": "A-1"}).startswith("Error: no stubbed result")


def test_no_match_names_the_tool_and_the_canonical_arguments(tmp_path: Path) -> None:
    tool = stub("find_order", parameters=ORDER_PARAMS,
                results=[{"when": {"id": "A-1"}, "result": "found"}])
    out = call(tool, tmp_path, {"note": "für Zoë", "qty": 2, "id": "B-2"})
    assert out == ('Error: no stubbed result for find_order with '
                   '{"id":"B-2","note":"für Zoë","qty":2}')


def test_empty_results_never_match(tmp_path: Path) -> None:
    assert call(stub("s", results=[]), tmp_path) == "Error: no stubbed result for s with {}"


def test_the_schema_is_checked_before_the_stub_answers(tmp_path: Path) -> None:
    tool = stub("find_order", parameters={**ORDER_PARAMS, "required": ["id"]}, result="found")
    assert call(tool, tmp_path, {"id": 7}).startswith("Error: invalid arguments for find_order: ")
    assert call(tool, tmp_path, {}).startswith("Error: invalid arguments for find_order: ")


# category and declaration -------------------------------------------------------------------------


def test_the_default_category_is_read_and_allowed_by_default(tmp_path: Path) -> None:
    tool = stub(result="ok")
    assert tool.category is Category.READ
    assert call(tool, tmp_path, permissions=DEFAULTS) == "ok"


def test_a_declared_category_is_kept(tmp_path: Path) -> None:
    tool = stub("writer", result="ok", category="edit")
    assert tool.category is Category.EDIT
    assert call(tool, tmp_path).startswith("Error: permission denied: writer (edit)")


def test_when_matchers_are_parsed_into_matchers() -> None:
    decl = ToolDecl.model_validate({"description": "d", "results": [
        {"when": {"id": {"$regex": "^A"}, "n": 3}, "result": "r"},
    ]})
    assert decl.kind == "stub"
    assert decl.results is not None
    case = decl.results[0]
    assert isinstance(case, StubCase)
    assert case.when == {"id": Matcher("$regex", "^A"), "n": 3}
    dumped = decl.model_dump(mode="json", include={"results"})
    assert dumped == {"results": [{"when": {"id": {"$regex": "^A"}, "n": 3}, "result": "r"}]}
    json.dumps(dumped)


def test_command_and_result_together_are_refused() -> None:
    text = refusal({"command": ["echo"], "result": "x"})
    assert "not two" in text
    assert "not two" in refusal({"command": ["echo"], "results": []})
    assert "not two" in refusal({"command": ["echo"], "result": None})


def test_neither_command_nor_result_is_refused() -> None:
    text = refusal({})
    assert "`command`" in text and "`result`" in text


def test_timeout_on_a_stub_is_refused() -> None:
    assert "`timeout` applies to command tools only" in refusal({"result": "x", "timeout": 5})


def test_parameters_must_be_of_type_object() -> None:
    assert '"type": "object"' in refusal({"result": "x", "parameters": {"type": "string"}})
    assert '"type": "object"' in refusal({"result": "x", "parameters": {}})
    assert "parameters" in refusal({"result": "x", "parameters": ["type", "object"]})


def test_parameters_must_be_a_valid_json_schema() -> None:
    text = refusal({"result": "x", "parameters": {
        "type": "object", "properties": {"a": {"type": "nope"}},
    }})
    assert "not a valid JSON Schema" in text
    assert "properties/a" in text


def test_unknown_keys_are_refused() -> None:
    text = refusal({"result": "x", "resutls": []})
    assert "resutls" in text
    assert "Extra inputs are not permitted" in text
    assert "whne" in refusal({"results": [{"whne": {"a": 1}, "result": "x"}]})


def test_a_bad_matcher_in_when_is_refused() -> None:
    text = refusal({"results": [{"when": {"a": {"$regx": "a"}}, "result": "x"}]})
    assert "'$regx'" in text
    assert "'$regex'" in text
    assert "invalid regular expression" in refusal(
        {"results": [{"when": {"a": {"$regex": "(unclosed"}}, "result": "x"}]}
    )


def test_a_clause_needs_a_result() -> None:
    assert "result" in refusal({"results": [{"when": {"a": 1}}]})
