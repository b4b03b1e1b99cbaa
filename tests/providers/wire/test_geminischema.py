"""JSON Schema to Gemini's OpenAPI subset: what is kept, translated, dropped and refused."""

from __future__ import annotations

import pytest

from replio_replay.errors import ProviderError
from replio_replay.providers.wire.geminischema import gemini_schema
from replio_replay.tools.builtin import builtin_tools


def _obj(**properties) -> dict:
    return {"type": "object", "properties": properties}


def test_kept_keywords_pass_through_with_upper_case_types():
    schema = _obj(name={"type": "string", "description": "Who.", "minLength": 1, "maxLength": 9, "pattern": "^a",
                        "format": "date-time", "title": "Name", "example": "al"},
                  n={"type": "integer", "minimum": 1, "maximum": 5, "default": 2, "format": "int32"},
                  tags={"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "maxItems": 3})
    assert gemini_schema("t", {**schema, "required": ["name"], "propertyOrdering": ["name", "n", "tags"]}) == {
        "type": "OBJECT", "required": ["name"], "propertyOrdering": ["name", "n", "tags"], "properties": {
            "name": {"type": "STRING", "description": "Who.", "minLength": 1, "maxLength": 9, "pattern": "^a",
                     "format": "date-time", "title": "Name", "example": "al"},
            "n": {"type": "INTEGER", "minimum": 1, "maximum": 5, "default": 2, "format": "int32"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING", "enum": ["a", "b"]}, "minItems": 1, "maxItems": 3},
        }}


def test_nullable_forms_type_lists_one_of_and_const_are_translated():
    schema = _obj(
        a={"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": "Glob."},
        b={"type": ["integer", "null"]},
        c={"type": ["string", "number"]},
        d={"oneOf": [{"type": "string"}, {"type": "integer"}]},
        e={"const": "fixed"},
        f={"enum": ["x", None]},
    )
    assert gemini_schema("t", schema)["properties"] == {
        "a": {"type": "STRING", "nullable": True, "default": None, "description": "Glob."},
        "b": {"type": "INTEGER", "nullable": True},
        "c": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]},
        "d": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
        "e": {"enum": ["fixed"]},
        "f": {"enum": ["x"], "nullable": True},
    }


def test_exclusive_bounds_become_inclusive_ones():
    schema = _obj(i={"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
                  x={"type": "number", "exclusiveMinimum": 0})
    assert gemini_schema("t", schema)["properties"] == {"i": {"type": "INTEGER", "minimum": 1, "maximum": 9},
                                                        "x": {"type": "NUMBER", "minimum": 0}}


def test_local_refs_are_inlined_and_annotations_and_boolean_additional_properties_dropped():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
              "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": True}},
              "properties": {"at": {"$ref": "#/$defs/Point", "description": "Where."},
                             "old": {"type": "string", "deprecated": True, "examples": ["a"], "format": "uri"}}}
    assert gemini_schema("t", schema) == {"type": "OBJECT", "properties": {
        "at": {"type": "OBJECT", "properties": {"x": {"type": "NUMBER"}}, "description": "Where."},
        "old": {"type": "STRING"}}}


def test_openapi_style_upper_case_types_are_read_too():
    assert gemini_schema("t", {"type": "OBJECT", "properties": {"n": {"type": "INTEGER"}}}) == {
        "type": "OBJECT", "properties": {"n": {"type": "INTEGER"}}}


def test_an_object_without_properties_leaves_them_out():
    assert gemini_schema("t", {"type": "object", "properties": {}}) == {"type": "OBJECT"}


@pytest.mark.parametrize(("schema", "where", "problem"), [
    ({"allOf": [{"type": "string"}]}, "parameters", "'allOf' has no Gemini equivalent"),
    (_obj(m={"type": "object", "additionalProperties": {"type": "string"}}), "parameters.properties.m",
     "'additionalProperties' has no Gemini equivalent"),
    (_obj(n={"not": {"type": "null"}}), "parameters.properties.n", "'not' has no Gemini equivalent"),
    (_obj(u={"type": "array", "items": {"type": "string"}, "uniqueItems": True}), "parameters.properties.u",
     "'uniqueItems' has no Gemini equivalent"),
    (_obj(r={"$ref": "https://example.com/s.json"}), "parameters.properties.r", "'\\$ref' 'https://example.com/s.json' "
     "does not point into this schema's \\$defs or definitions"),
    ({"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}, "$ref": "#/$defs/Node"},
     "parameters.properties.next", "'\\$ref' '#/\\$defs/Node' refers to itself"),
    (_obj(k={"enum": [1, 2]}), "parameters.properties.k", "'enum' holds values other than strings"),
    (_obj(k={"const": 3}), "parameters.properties.k", "'const' 3 is not a string"),
    (_obj(k={"type": "null"}), "parameters.properties.k", "'type' null alone has no Gemini equivalent"),
    (_obj(k={"type": "date"}), "parameters.properties.k", "'type' 'date' is not a JSON Schema type"),
    (_obj(k={"type": "array", "items": {"type": "string", "contains": {}}}), "parameters.properties.k.items",
     "'contains' has no Gemini equivalent"),
])
def test_what_cannot_be_translated_is_refused_naming_tool_place_and_keyword(schema, where, problem):
    with pytest.raises(ProviderError, match=rf"^gemini: tool 'pick': {where}: {problem}"):
        gemini_schema("pick", schema)


def test_every_built_in_tool_translates():
    for tool in builtin_tools():
        spec = tool.spec()
        translated = gemini_schema(spec["name"], spec["parameters"])
        assert translated["type"] == "OBJECT"
        assert "additionalProperties" not in str(translated)
