"""The golden store, the only golden I/O: one JSON file per fixture, provider and model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_write
from ..errors import GoldenError
from ..storage import GOLDEN, Recorded, RunKey, scan

__all__ = ["GoldenStore"]


@dataclass(frozen=True)
class GoldenStore:
    """Goldens under `directory`, laid out as `storage` says (`<provider>/<model>/[tools=NAME/]<id>.json`)."""

    directory: Path

    def path(self, key: RunKey, fixture_id: str) -> Path:
        return key.path(self.directory, fixture_id, GOLDEN)

    def load(self, key: RunKey, fixture_id: str) -> dict[str, Any] | None:
        """The approved golden, or None when there is none yet."""
        path = self.path(key, fixture_id)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise GoldenError(
                f"golden {path} is not valid JSON at line {exc.lineno}: {exc.msg}; "
                "fix it or approve a new one with --update-golden"
            ) from None
        if not isinstance(data, dict):
            raise GoldenError(f"golden {path} must hold a JSON object; approve a new one with --update-golden")
        return data

    def write(self, key: RunKey, fixture_id: str, data: dict[str, Any]) -> str:
        """Write atomically; returns `created`, `changed` or `unchanged`."""
        path = self.path(key, fixture_id)
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        if path.is_file():
            if path.read_text(encoding="utf-8") == text:
                return "unchanged"
            atomic_write(path, text)
            return "changed"
        atomic_write(path, text)
        return "created"

    def files(self) -> Iterator[Recorded]:
        """Every golden on disk."""
        return scan(self.directory, GOLDEN)
