"""The JSON Schema of each file a user writes (the config file, a tool-set file, a fixture), made
from the models that read them, as published under `docs/schema/` for editors to validate with.

`python -m replio_replay.schemas docs/schema` writes them again after a model changes; a test
checks the committed files equal what the models make now.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ._runtime.atomic import atomic_write_all
from .config import ProjectConfig
from .fixtures.model import Fixture
from .tools.setfile import ToolSetFile

__all__ = ["DIALECT", "SCHEMAS", "schema", "schema_texts"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The file each schema is published as -> the model that reads such a file.
SCHEMAS: dict[str, type[BaseModel]] = {
    "config.schema.json": ProjectConfig,
    "tool-set.schema.json": ToolSetFile,
    "fixture.schema.json": Fixture,
}


def schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of the files `model` reads, by their keys as written (`$schema`, not `schema_`)."""
    made = model.model_json_schema(by_alias=True, mode="validation")
    if model is Fixture:
        # a fixture file may leave out its id: the file's name is its id
        made["required"] = [key for key in made.get("required", []) if key != "id"]
    return {"$schema": DIALECT, **made}


def schema_texts() -> dict[str, str]:
    """Each published file's name -> its text (indented, keys in the models' order, a final newline)."""
    return {name: json.dumps(schema(model), indent=2, ensure_ascii=False) + "\n" for name, model in SCHEMAS.items()}


def main(argv: list[str]) -> int:
    """Write every schema into the folder `argv` names."""
    if len(argv) != 1:
        print("usage: python -m replio_replay.schemas FOLDER", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    atomic_write_all([(folder / name, text) for name, text in schema_texts().items()])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
