"""An `override`: what a tool set changes in one tool, whatever its source (a description, its schema)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

__all__ = ["Override"]


class Override(BaseModel):
    """Changes to one tool, whatever its source."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    description: StrictStr | None = Field(None, min_length=1, description="The new description.")
    parameters: dict[str, Any] | None = Field(
        None, description="Merged into the tool's JSON Schema (RFC 7396: null removes a key)."
    )
