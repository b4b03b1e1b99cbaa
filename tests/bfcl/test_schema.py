"""BFCL's types mapped to JSON Schema as BFCL maps them for OpenAPI-style tools."""

from __future__ import annotations

import pytest

from replio_replay.fixtures.bfcl.schema import FLOAT_NOTE, UnknownType, tool_parameters
from replio_replay.tools.schema import schema_problem


@pytest.mark.parametrize(("bfcl", "json_schema"), [
    ("dict", "object"), ("float", "number"), ("tuple", "array"), ("any", "string"), ("integer", "integer"),
    ("boolean", "boolean"), ("list", "array"), ("double", "number"), ("long", "integer"), ("Bigint", "integer"),
    ("char", "string"), ("HashMap", "object"), ("mystery", "string"),
])
def test_each_type_maps_as_bfcl_maps_it(bfcl: str, json_schema: str) -> None:
    schema = tool_parameters({"type": "dict", "properties": {"p": {"type": bfcl, "description": "d"}}})
    assert schema["type"] == "object"
    assert schema["properties"]["p"]["type"] == json_schema


def test_a_float_gets_bfcls_format_and_sentence() -> None:
    schema = tool_parameters({"type": "dict", "properties": {"x": {"type": "float", "description": "Width."}}})
    assert schema["properties"]["x"] == {"type": "number", "format": "float", "description": "Width." + FLOAT_NOTE}


def test_a_missing_type_is_a_string() -> None:
    assert tool_parameters({"type": "dict", "properties": {"x": {}}})["properties"]["x"]["type"] == "string"


def test_nested_items_and_properties_are_mapped_and_the_input_is_left_alone() -> None:
    original = {"type": "dict", "required": ["a"], "properties": {
        "a": {"type": "array", "items": {"type": "dict", "properties": {"w": {"type": "float", "description": ""}}}},
        "b": {"type": "tuple", "items": {"type": "array", "items": {"type": "float"}}},
        "c": {"type": "dict", "properties": {"k": {"type": "any"}}},
    }}
    schema = tool_parameters(original)
    assert schema["properties"]["a"]["items"]["type"] == "object"
    assert schema["properties"]["a"]["items"]["properties"]["w"]["type"] == "number"
    assert schema["properties"]["b"]["items"] == {"type": "array", "items": {"type": "number"}}
    assert schema["properties"]["c"]["properties"]["k"]["type"] == "string"
    assert original["properties"]["a"]["type"] == "array" and original["type"] == "dict"
    assert schema_problem(schema) is None


def test_an_item_type_bfcl_cannot_map_is_an_error_naming_the_parameter() -> None:
    with pytest.raises(UnknownType, match="'xs'"):
        tool_parameters({"type": "dict", "properties": {"xs": {"type": "array", "items": {"type": "complex"}}}})
