"""Parameter models' schemas: pydantic's, without its titles."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from replio_replay.tools.base import Params
from replio_replay.tools.modelschema import _strip_titles, schema_of


class Lookup(Params):
    """Look a thing up."""

    ids: list[str] = Field(default_factory=list, description="The ids.")
    mode: Literal["a", "b"] = "a"


def test_a_schema_is_pydantics_without_titles() -> None:
    schema = schema_of(Lookup)
    assert schema == _strip_titles(Lookup.model_json_schema())
    assert '"title"' not in json.dumps(schema)
    assert schema["properties"]["mode"] == {"default": "a", "enum": ["a", "b"], "type": "string"}


def test_each_call_gives_a_copy_a_caller_may_change() -> None:
    schema_of(Lookup)["properties"].clear()
    assert set(schema_of(Lookup)["properties"]) == {"ids", "mode"}
