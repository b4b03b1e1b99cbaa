"""What is on disk for each fixture: cassettes, goldens, recording age, and orphans to prune."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import load_project_config, parse_spec
from .fixtures.discovery import Catalog
from .golden.store import GoldenStore
from .recording.store import safe_name

__all__ = ["Entry", "Inventory", "inventory", "prune_orphans"]

_RECORDED = re.compile(r"^\s+recorded:\s*'?(\d{4}-\d{2}-\d{2})", re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    """One fixture × provider/model: which files exist, and when it was recorded."""

    provider: str
    model: str
    fixture_id: str
    cassette: Path | None
    golden: Path | None
    recorded: str | None

    def age_days(self, today: datetime.date) -> int | None:
        if self.recorded is None:
            return None
        return (today - datetime.date.fromisoformat(self.recorded)).days


@dataclass
class Inventory:
    """Every entry, plus files that belong to no fixture any more."""

    entries: list[Entry] = field(default_factory=list)
    orphans: list[Path] = field(default_factory=list)
    today: datetime.date = field(default_factory=datetime.date.today)

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": [
                {"provider": e.provider, "model": e.model, "fixture": e.fixture_id,
                 "cassette": str(e.cassette) if e.cassette else None,
                 "golden": str(e.golden) if e.golden else None,
                 "recorded": e.recorded, "age_days": e.age_days(self.today)}
                for e in self.entries
            ],
            "orphans": [str(p) for p in self.orphans],
        }


def _recorded(path: Path) -> str | None:
    with path.open(encoding="utf-8", errors="replace") as fh:
        match = _RECORDED.search(fh.read(2048))
    return match.group(1) if match else None


def inventory(project: Path, catalog: Catalog, *, cassettes: Path | None = None,
              golden: Path | None = None) -> Inventory:
    """Scan the cassette and golden folders against the catalog."""
    config = load_project_config(project)
    cassette_dir = cassettes or project / (config.cassettes or "cassettes")
    store = GoldenStore(golden or project / (config.golden or "golden"))
    ids = {safe_name(i): i for i in catalog.fixtures}
    files: dict[tuple[str, str], dict[str, dict[str, Path]]] = {}
    inv = Inventory()
    found = [(p, "cassette") for p in sorted(cassette_dir.glob("*/*/*.yaml"))] if cassette_dir.is_dir() else []
    found += [(path, "golden") for *_, path in store.files()]
    for path, kind in found:
        pair = (path.parent.parent.name, path.parent.name)
        if path.stem not in ids:
            inv.orphans.append(path)
            continue
        files.setdefault(pair, {}).setdefault(path.stem, {})[kind] = path
    if config.provider:  # the default provider is listed even before anything is recorded
        name, model = parse_spec(config.provider)
        if model:
            files.setdefault((safe_name(name), safe_name(model)), {})
    for (provider, model), by_fixture in sorted(files.items()):
        for sid, fixture_id in sorted(ids.items()):
            kinds = by_fixture.get(sid, {})
            cassette = kinds.get("cassette")
            inv.entries.append(Entry(provider, model, fixture_id, cassette, kinds.get("golden"),
                                     _recorded(cassette) if cassette else None))
    return inv


def prune_orphans(inv: Inventory) -> list[Path]:
    """Delete the orphaned files; returns what was removed."""
    removed = []
    for path in inv.orphans:
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed
