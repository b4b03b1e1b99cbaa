"""JSON Schema helpers: RFC 7396 merge patches, schema and argument problems, tool names."""

from __future__ import annotations

import copy
import socket
from typing import Any

import pytest

from replio_replay.tools.schema import argument_problem, merge_patch, name_problem, schema_problem

# merge_patch --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [  # the examples of RFC 7396, appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_follows_rfc_7396(target: Any, patch: Any, result: Any) -> None:
    assert merge_patch(target, patch) == result


def test_merge_patch_merges_nested_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Old."},
            "limit": {"type": "integer", "minimum": 1, "default": 200},
        },
        "required": ["path"],
    }
    patched = merge_patch(schema, {"properties": {"path": {"description": "New."},
                                                  "limit": {"default": None, "maximum": 500}}})
    assert patched == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "New."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        },
        "required": ["path"],
    }


def test_merge_patch_replaces_arrays_whole() -> None:
    patched = merge_patch({"required": ["a", "b"], "enum": [1, 2]}, {"required": ["c"]})
    assert patched == {"required": ["c"], "enum": [1, 2]}


def test_merge_patch_removing_a_missing_key_is_harmless() -> None:
    assert merge_patch({"a": 1}, {"b": None}) == {"a": 1}


def test_merge_patch_modifies_neither_argument() -> None:
    target = {"a": {"b": {"c": 1, "d": 2}}, "keep": [1]}
    patch = {"a": {"b": {"c": None, "e": {"f": None, "g": 3}}}, "keep": None}
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert merge_patch(target, patch) == {"a": {"b": {"d": 2, "e": {"g": 3}}}}
    assert target == target_before
    assert patch == patch_before


# schema_problem -----------------------------------------------------------------------------------


def test_a_valid_object_schema_has_no_problem() -> None:
    assert schema_problem({"type": "object"}) is None
    assert schema_problem({
        "type": "object",
        "properties": {"q": {"type": "string", "minLength": 1}, "n": {"type": "integer"}},
        "required": ["q"],
        "additionalProperties": False,
    }) is None


@pytest.mark.parametrize(("schema", "kind"), [([], "list"), ("object", "str"), (None, "NoneType")])
def test_a_schema_that_is_not_a_dict_is_a_problem(schema: Any, kind: str) -> None:
    assert schema_problem(schema) == f"parameters must be a JSON Schema object, not {kind}"


@pytest.mark.parametrize(
    "schema", [{}, {"properties": {}}, {"type": "array"}, {"type": ["object"]}]
)
def test_a_schema_without_type_object_is_a_problem(schema: dict) -> None:
    assert schema_problem(schema) == 'parameters must be a JSON Schema with "type": "object"'


def test_an_invalid_schema_names_the_location() -> None:
    problem = schema_problem({"type": "object", "properties": {"n": {"type": "intger"}}})
    assert problem is not None
    assert problem.startswith("parameters is not a valid JSON Schema at properties/n/type: ")
    assert '"intger"' in problem


def test_an_invalid_keyword_value_names_the_keyword() -> None:
    assert schema_problem({"type": "object", "required": "q"}) == (
        'parameters is not a valid JSON Schema at required: "q" is not of type "array"'
    )


def test_an_invalid_schema_at_a_deep_location() -> None:
    problem = schema_problem({"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string", "minLength": -1}}
    }})
    assert problem is not None
    assert "at properties/items/items/minLength: " in problem


def test_a_remote_reference_is_a_problem_and_nothing_is_fetched() -> None:
    with socket.socket() as listener:  # a server that would see the fetch
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        problem = schema_problem({"type": "object", "properties": {"a": {"$ref": url}}})
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert problem is not None and problem.startswith("parameters is not a valid JSON Schema")
    assert url in problem


def test_an_unknown_meta_schema_is_a_problem_naming_it() -> None:
    problem = schema_problem({"$schema": "http://127.0.0.1:9/my-dialect", "type": "object"})
    assert problem is not None and "http://127.0.0.1:9/my-dialect" in problem


def test_the_draft_named_by_schema_is_the_one_checked() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMinimum": True}}}
    assert schema_problem(draft4) is None  # a boolean exclusiveMinimum is draft 4's
    assert schema_problem({**draft4, "$schema": "https://json-schema.org/draft/2020-12/schema"}) is not None
    assert argument_problem(draft4, {"n": 1}) is not None and argument_problem(draft4, {"n": 2}) is None


def test_patterns_are_ecma_regular_expressions_as_json_schema_says() -> None:
    python_only = {"type": "object", "properties": {"a": {"type": "string", "pattern": r"abc\Z"}}}
    assert schema_problem(python_only) == (
        'parameters is not a valid JSON Schema at properties/a/pattern: "abc\\\\Z" is not a "regex"')
    unicode = {"type": "object", "properties": {"a": {"type": "string", "pattern": r"^\p{L}+$"}}}
    assert schema_problem(unicode) is None
    assert argument_problem(unicode, {"a": "Åsa"}) is None and argument_problem(unicode, {"a": "a1"}) is not None


def test_format_is_not_asserted() -> None:
    schema = {"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}
    assert argument_problem(schema, {"to": "not an address"}) is None


# argument_problem ---------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "arguments", [{"path": "a"}, {"path": "a", "limit": 1, "tags": []}, {"path": "", "tags": ["x"]}]
)
def test_valid_arguments_have_no_problem(arguments: dict) -> None:
    assert argument_problem(SCHEMA, arguments) is None


def test_a_single_violation_names_the_argument_and_what_was_given() -> None:
    assert argument_problem(SCHEMA, {"path": "a", "limit": 0}) == (
        'limit: 0 is less than the minimum of 1 (got {"path": "a", "limit": 0})'
    )


def test_a_missing_required_argument_is_at_the_top_level() -> None:
    assert argument_problem(SCHEMA, {}) == 'arguments: "path" is a required property (got {})'


def test_every_violation_is_listed_in_path_order() -> None:
    problem = argument_problem(SCHEMA, {"tags": ["x", 2], "limit": "3", "color": "red"})
    assert problem is not None
    body, got = problem.split(" (got ")
    parts = body.split("; ")
    assert len(parts) == 4
    assert parts[0].startswith("arguments: ") and parts[1].startswith("arguments: ")
    assert {parts[0], parts[1]} == {
        'arguments: "path" is a required property',
        "arguments: Additional properties are not allowed ('color' was unexpected)",
    }
    assert parts[2] == 'limit: "3" is not of type "integer"'
    assert parts[3] == 'tags.1: 2 is not of type "string"'
    assert got == '{"tags": ["x", 2], "limit": "3", "color": "red"})'


def test_array_violations_are_listed_in_index_order() -> None:
    tags: list[Any] = ["a", "b", 2, "c", "d", "e", "f", "g", "h", "i", 10]
    problem = argument_problem(SCHEMA, {"path": "a", "tags": tags})
    assert problem is not None
    assert problem.startswith(
        'tags.2: 2 is not of type "string"; tags.10: 10 is not of type "string" (got '
    ), problem


def test_arguments_that_are_not_an_object_are_a_problem() -> None:
    assert argument_problem(SCHEMA, ["a"]) == (
        'arguments: ["a"] is not of type "object" (got ["a"])'
    )


def test_the_got_suffix_is_cut_to_120_characters() -> None:
    problem = argument_problem(SCHEMA, {"path": 1, "blob": "x" * 500})
    assert problem is not None
    got = problem.split(" (got ", 1)[1]
    assert got.endswith(")")
    assert len(got) == 121
    assert got.startswith('{"path": 1, "blob": "xxx')


def test_the_same_schema_checks_different_arguments() -> None:
    assert argument_problem(SCHEMA, {"path": "a"}) is None
    assert argument_problem(SCHEMA, {"path": 1}) is not None
    assert argument_problem(dict(reversed(list(SCHEMA.items()))), {"path": 1}) is not None


# name_problem -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "file_read", "web-fetch", "Tool_2", "x" * 64, "9"])
def test_valid_tool_names(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    "name", ["", "x" * 65, "bad name", " lead", "trail ", "dotted.name", "slash/name", "ünï",
             "name\n"]
)
def test_invalid_tool_names(name: str) -> None:
    assert name_problem(name) == (
        f"tool name {name!r} is not valid: use 1 to 64 letters, digits, '_' or '-' "
        "(what providers accept)"
    )
