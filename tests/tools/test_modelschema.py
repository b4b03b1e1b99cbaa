"""Parameter models' schemas: the same whether generated or kept, kept per version of their code,
and a kept schema spares the run building the models no tool call needs."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from replio_replay.tools import modelschema
from replio_replay.tools.base import Params
from replio_replay.tools.modelschema import _classes_of, _strip_titles, schema_of


class Colour(enum.Enum):
    RED = "red"


class Inner(BaseModel):
    colour: Colour


class Outer(Params):
    inner: list[Inner] = Field(default_factory=list, description="Nested.")
    mode: Literal["a", "b"] = "a"


def test_a_model_reaches_its_classes_and_its_fields_types() -> None:
    assert _classes_of(Outer) == [Outer, Inner, Colour]  # a Literal's values are no classes


def test_a_schema_is_pydantics_without_titles_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    modelschema._schema_text.cache_clear()
    try:
        schema = schema_of(Outer)
        assert schema == _strip_titles(Outer.model_json_schema())
        assert '"title"' not in json.dumps(schema)
        assert schema["properties"]["mode"] == {"default": "a", "enum": ["a", "b"], "type": "string"}
        assert len(list((tmp_path / "replio" / "schemas").iterdir())) == 1
    finally:
        modelschema._schema_text.cache_clear()


#: In a fresh process: the built-in tools' schemas as JSON, and which parameter models were built.
PROBE = """
import json, sys
from replio_replay.tools.base import Params
from replio_replay.tools.builtin import builtin_tools
tools = builtin_tools()
built = sorted(m.__name__ for m in Params.__subclasses__() if m.__pydantic_complete__)
print(json.dumps({"schemas": {t.name: t.parameters for t in tools}, "built": built}))
"""


def probe(cache: Path) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_kept_schema_is_the_generated_one_and_no_model_is_built(tmp_path: Path) -> None:
    first = probe(tmp_path)
    assert len(first["built"]) == 8  # type: ignore[arg-type]  # generating builds every model
    second = probe(tmp_path)
    assert second["schemas"] == first["schemas"]
    assert list(second["schemas"]) == list(first["schemas"])  # type: ignore[call-overload]
    assert second["built"] == []
    assert len(list((tmp_path / "replio" / "schemas").iterdir())) == 8


def test_an_edited_model_is_generated_again(tmp_path: Path) -> None:
    module = tmp_path / "lib" / "edited_tool.py"
    module.parent.mkdir()
    code = ("from pydantic import Field\nfrom replio_replay.tools.base import Params\n"
            "class P(Params):\n    path: str = Field(description={description!r})\n")
    probe_code = ("import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom edited_tool import P\n"
                  "from replio_replay.tools.modelschema import schema_of\nprint(json.dumps(schema_of(P)))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}

    def described(description: str) -> str:
        module.write_text(code.format(description=description))
        done = subprocess.run([sys.executable, "-c", probe_code, str(module.parent)], capture_output=True,
                              text=True, env=env, check=True)
        return str(json.loads(done.stdout)["properties"]["path"]["description"])

    assert described("The file.") == "The file."
    assert described("The file to read, from the worktree's root.") == "The file to read, from the worktree's root."


def test_a_plugin_tool_is_generated_again_when_a_description_it_imports_changes(tmp_path: Path) -> None:
    # The description lives in another module than the tool's, and the tool's model is built by
    # the `tool` decorator: only what the model holds can tell the two versions apart.
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "plugin_tool.py").write_text(
        "from replio_replay.tools.function import tool\nfrom plugin_types import Count\n"
        "@tool(category='read')\ndef count_lines(n: Count) -> str:\n    \"\"\"Count lines.\"\"\"\n    return str(n)\n")
    probe_code = ("import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom plugin_tool import count_lines\n"
                  "print(json.dumps(count_lines.parameters))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}

    def schema(description: str, minimum: int) -> dict[str, object]:
        (lib / "plugin_types.py").write_text(
            "from typing import Annotated\nfrom pydantic import Field\n"
            f"Count = Annotated[int, Field(ge={minimum}, description={description!r})]\n")
        done = subprocess.run([sys.executable, "-c", probe_code, str(lib)], capture_output=True, text=True,
                              env=env, check=True)
        return json.loads(done.stdout)["properties"]["n"]  # type: ignore[no-any-return]

    assert schema("Lines.", 1) == {"description": "Lines.", "minimum": 1, "type": "integer"}
    assert schema("Lines!", 1) == {"description": "Lines!", "minimum": 1, "type": "integer"}  # same size
    assert schema("Lines!", 2) == {"description": "Lines!", "minimum": 2, "type": "integer"}
    assert len(list((tmp_path / "cache" / "replio" / "schemas").iterdir())) == 3
