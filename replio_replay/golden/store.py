"""The golden store, the only golden I/O: one JSON file per fixture, provider and model.

What it reads is checked against the golden format (`model.Golden`) and what it writes is
strict JSON, so a golden on disk is always one the drift code can compare: a broken file is a
GoldenError naming it and the field, and a result holding NaN or Infinity is never written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._runtime.atomic import atomic_write
from .._runtime.jsonin import MAX_DEPTH, JsonProblem, read_json, too_deep
from .._runtime.wording import validation_message
from ..errors import GoldenError
from ..fixtures.layout import GOLDEN, Recorded, RunKey, scan
from .model import Golden

__all__ = ["GoldenStore"]

_FIX = "fix it, or approve a new one with --update-golden"


def _problems(exc: ValidationError) -> str:
    return validation_message(exc, "the golden format")


@dataclass(frozen=True)
class GoldenStore:
    """Goldens under `directory`, laid out as `storage` says.

    That is `<provider>/<model>/[tools=NAME/]<id>.json`.
    """

    directory: Path

    def path(self, key: RunKey, fixture_id: str) -> Path:
        return key.path(self.directory, fixture_id, GOLDEN)

    def load(self, key: RunKey, fixture_id: str) -> dict[str, Any] | None:
        """The approved golden as plain data, or None when there is none yet.

        GoldenError, naming the file, when it cannot be read, is not strict JSON, or is not
        in the golden format (the field and what is wrong with it).
        """
        path = self.path(key, fixture_id)
        if not path.is_file():
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GoldenError(f"golden {path} cannot be read ({exc}); {_FIX}") from None
        try:
            data = read_json(text)  # strict, and bounded in depth: the drift code walks it recursively
        except JsonProblem as exc:
            raise GoldenError(f"golden {path} is broken: {exc}; {_FIX}") from None
        if not isinstance(data, dict):
            raise GoldenError(
                f"golden {path} must hold a JSON object, not {type(data).__name__}; {_FIX}"
            )
        try:
            Golden.model_validate(data)
        except ValidationError as exc:
            raise GoldenError(f"golden {path} is not a golden: {_problems(exc)}; {_FIX}") from None
        return data

    def render(self, key: RunKey, fixture_id: str, data: dict[str, Any]) -> tuple[Path, str, str]:
        """(path, text, action) for writing `data` as a golden; action is `created`, `updated` or
        `unchanged`. Nothing is written.

        GoldenError, naming the fixture, when `data` is not a golden (a metric that is NaN, say)
        or holds a number JSON cannot (NaN or Infinity in a tool's arguments): a golden that
        could not be read back is never written.
        """
        path = self.path(key, fixture_id)
        refused = f"golden for fixture {fixture_id!r} was not written to {path}"
        try:
            Golden.model_validate(data)
            text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
            text += "\n"
        except ValidationError as exc:
            raise GoldenError(f"{refused}: the result is not a golden: {_problems(exc)}") from None
        except ValueError:
            raise GoldenError(
                f"{refused}: it holds NaN or Infinity (in a tool call's arguments), which JSON "
                "cannot hold; the model sent it in this run, so approve another run"
            ) from None
        if too_deep(data):
            raise GoldenError(f"{refused}: its tool arguments nest deeper than {MAX_DEPTH} levels, "
                              "so it could not be read back; approve another run")
        try:
            if not path.is_file():
                return path, text, "created"
            same = path.read_text(encoding="utf-8", errors="replace") == text
        except OSError as exc:
            raise GoldenError(f"{refused}: {exc}") from None
        return path, text, "unchanged" if same else "updated"

    def write(self, key: RunKey, fixture_id: str, data: dict[str, Any]) -> str:
        """Write one golden atomically; returns `created`, `updated` or `unchanged`."""
        path, text, action = self.render(key, fixture_id, data)
        if action != "unchanged":
            try:
                atomic_write(path, text)
            except OSError as exc:
                raise GoldenError(f"golden for fixture {fixture_id!r} was not written to {path}: {exc}") from None
        return action

    def files(self) -> Iterator[Recorded]:
        """Every golden on disk."""
        return scan(self.directory, GOLDEN)
