"""The golden format: a pydantic model of what `canonical_result` writes, strict about types, keys.

A golden is read back as plain data (drift compares dicts); the model only decides whether
that data is a golden, so a hand-edited or damaged file is a GoldenError naming the file
and the field, never a failure deeper in the drift code. Strict types, because nothing is
coerced: a `"3"` where a count belongs would otherwise load and then drift as a change.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
)

__all__ = ["Golden", "GoldenCall", "GoldenMetrics"]


#: A fraction (strict floats take an integer 0 or 1 too, but never a boolean or text).
_Fraction = Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)]
_Count = Annotated[StrictInt, Field(ge=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class GoldenCall(_Strict):
    """One tool call: its name and the arguments the model gave (raw text if they were not JSON)."""

    name: StrictStr
    arguments: dict[str, Any] | StrictStr

    @field_validator("arguments", mode="before")
    @classmethod
    def _object_or_text(cls, value: Any) -> Any:
        # Checked first, so a wrong value is one error, not one per member of the union.
        if not isinstance(value, (dict, str)):
            raise ValueError("must be a JSON object or text")
        return value


class GoldenMetrics(_Strict):
    """The numbers drift compares: every one of `canonical.METRICS` (a test keeps them in step)."""

    accuracy: _Fraction | None
    calls: _Count
    redundant: _Count
    errors: _Count
    tokens: _Count


class Golden(_Strict):
    """One approved fixture result, as `canonical_result` writes it."""

    id: StrictStr
    status: Literal["ok", "truncated", "error", "cancelled"]
    passed: StrictBool = Field(..., alias="pass")
    turns: list[list[GoldenCall]] = Field(..., description="Calls grouped by turn.")
    answer: StrictStr
    metrics: GoldenMetrics
    state: dict[str, Any] | None = Field(None, description="Each environment's end state, when it has some.")
    user_calls: list[GoldenCall] | None = Field(
        None, description="The calls a simulated user made with its own tools (`user.tools`), when it made some.")
