"""MkDocs hook: a page's `<!-- schema-table: config.schema.json -->` line (or
`<!-- schema-table: config.schema.json#/$defs/ProviderConfig -->` for a part) becomes a table of
that schema's keys with their type, default and meaning, read from `docs/schema/`, which
`tests/test_schemas.py` keeps equal to what the models make. Named by mkdocs.yml's `hooks`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schema"
MARK = re.compile(r"^<!-- schema-table: ([\w.-]+\.json)(?:#/\$defs/(\w+))? -->$", re.M)


def type_of(prop: dict[str, Any]) -> str:
    """A short name for the JSON a property takes."""
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[1]
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(dict.fromkeys(type_of(p) for p in prop["anyOf"]))
    kind = str(prop.get("type", "any"))
    if kind == "array":
        return f"array of {type_of(prop.get('items', {}))}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"object of {type_of(prop['additionalProperties'])}"
    return kind


def table(schema: dict[str, Any]) -> str:
    """The Markdown table of `schema`'s properties, in the model's order."""
    required = set(schema.get("required", []))
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, prop in schema["properties"].items():
        default = "required" if key in required else f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        meaning = str(prop.get("description", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{key}` | {type_of(prop)} | {default} | {meaning} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    def generated(mark: re.Match[str]) -> str:
        schema = json.loads((SCHEMAS / mark.group(1)).read_text(encoding="utf-8"))
        return table(schema["$defs"][mark.group(2)] if mark.group(2) else schema)

    return MARK.sub(generated, markdown)
