"""The `$schema` line a file a user writes may start with, so an editor validates it against the
JSON Schema published under `docs/schema/`; replio accepts it and reads nothing from it."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr

__all__ = ["SchemaLine"]

SchemaLine = Annotated[
    StrictStr | None,
    Field(alias="$schema", description="The JSON Schema an editor validates this file against; replio ignores it."),
]
