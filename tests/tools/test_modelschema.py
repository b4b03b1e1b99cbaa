"""Parameter models' schemas: the same whether generated or kept; only the built-in tools' kept,
named by replio's tool code; a kept schema spares the run building models no call needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

from replio_replay.tools import modelschema
from replio_replay.tools.base import Params
from replio_replay.tools.builtin import builtin_tools
from replio_replay.tools.modelschema import _strip_titles, schema_of


class Lookup(Params):
    """Look a thing up."""

    ids: list[str] = Field(default_factory=list, description="The ids.")
    mode: Literal["a", "b"] = "a"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    modelschema._schema_text.cache_clear()
    yield tmp_path / "replio" / "schemas"
    modelschema._schema_text.cache_clear()


def test_a_schema_is_pydantics_without_titles(cache: Path) -> None:
    schema = schema_of(Lookup)
    assert schema == _strip_titles(Lookup.model_json_schema())
    assert '"title"' not in json.dumps(schema)
    assert schema["properties"]["mode"] == {"default": "a", "enum": ["a", "b"], "type": "string"}
    assert not cache.exists()  # not a built-in: not kept
    assert schema_of(Lookup, keep=True) == schema
    assert len(list(cache.iterdir())) == 1


def test_a_kept_schema_is_named_by_the_tool_code_and_the_model(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = modelschema._key(Lookup)
    monkeypatch.setattr(modelschema, "_tool_code", lambda: "another replio")
    assert modelschema._key(Lookup) != first


#: The modules a built-in parameter model may draw on: anything else could change its schema
#: without changing the code its kept schema is named by.
ALLOWED = ("replio_replay.tools.", "builtins", "types", "typing", "pydantic", "annotated_types", "enum")


def _reached(tp: Any) -> list[Any]:
    found, todo = [], [tp]
    while todo:
        item = todo.pop()
        found.append(item)
        todo.extend(typing.get_args(item))
        if isinstance(item, type) and issubclass(item, Params):
            for field in item.model_fields.values():
                todo.append(field.annotation)
                found.extend(field.metadata)
    return found


def test_the_built_in_models_draw_only_on_replios_tool_code_and_pydantic() -> None:
    assert len(builtin_tools()) == 8
    params = [m for m in Params.__subclasses__() if m.__module__.startswith("replio_replay.tools.")]
    assert len(params) == 8
    for model in params:
        for item in _reached(model):
            if isinstance(item, (str, int, float, bool, type(None))):
                continue  # a Literal's values
            module = item.__module__ if isinstance(item, type) else type(item).__module__
            assert module.startswith(ALLOWED), f"{model.__name__} draws on {item!r} from {module}"


#: In a fresh process: the built-in tools' schemas as JSON, and which parameter models were built.
PROBE = """
import json, sys
from replio_replay.tools.base import Params
from replio_replay.tools.builtin import builtin_tools
tools = builtin_tools()
built = sorted(m.__name__ for m in Params.__subclasses__() if m.__pydantic_complete__)
print(json.dumps({"schemas": {t.name: t.parameters for t in tools}, "built": built}))
"""


def probe(cache: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_kept_schema_is_the_generated_one_and_no_model_is_built(tmp_path: Path) -> None:
    first = probe(tmp_path)
    assert len(first["built"]) == 8  # generating builds every model
    second = probe(tmp_path)
    assert second["schemas"] == first["schemas"]
    assert list(second["schemas"]) == list(first["schemas"])
    assert second["built"] == []
    assert len(list((tmp_path / "replio" / "schemas").iterdir())) == 8


def test_a_plugin_tool_is_not_kept_and_follows_its_code(tmp_path: Path) -> None:
    # The description lives in another module than the tool's, nested where pydantic's repr of
    # the model shows only its class: nothing but the schema itself tells the versions apart.
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "plugin_tool.py").write_text(
        "from replio_replay.tools.function import tool\nfrom plugin_types import Count\n"
        "@tool(category='read')\ndef count_lines(n: list[Count]) -> str:\n    \"\"\"Count lines.\"\"\"\n"
        "    return str(n)\n")
    probe_code = ("import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom plugin_tool import count_lines\n"
                  "print(json.dumps(count_lines.parameters))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}

    def schema(minimum: int) -> Any:
        (lib / "plugin_types.py").write_text(
            "from typing import Annotated\nfrom annotated_types import Gt\n"
            f"Count = Annotated[int, Gt({minimum})]\n")
        done = subprocess.run([sys.executable, "-c", probe_code, str(lib)], capture_output=True, text=True,
                              env=env, check=True)
        return json.loads(done.stdout)["properties"]["n"]["items"]

    assert schema(1) == {"exclusiveMinimum": 1, "type": "integer"}
    assert schema(7) == {"exclusiveMinimum": 7, "type": "integer"}
    assert not (tmp_path / "cache" / "replio" / "schemas").exists()
