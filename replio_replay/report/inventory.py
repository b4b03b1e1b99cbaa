"""What is on disk for each fixture: cassettes, goldens, their age, whether a recording is stale, orphans.

A provider that plays a script (the mock) records nothing, so its fixtures have no cassette to
miss: their entries say `scripted`.

A cassette is **stale** when what it recorded no longer matches the project (see
`recording.staleness`): the fixture's inputs changed, or its tool set did.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from ..config import parse_spec
from ..errors import CassetteError, ReplioError, UsageError
from ..fixtures.discovery import Catalog, Found
from ..fixtures.layout import CASSETTE, RunKey, scan
from ..golden.model import Golden
from ..golden.store import GoldenStore
from ..plan.offer import for_fixture
from ..plan.settings import Settings
from ..providers.registry import provider_class
from ..recording.serializer import read_header
from ..recording.staleness import stale_reasons
from ..tools.setfile import given_by_path
from ..tools.sources import load_toolsets
from ..tools.toolset import DEFAULT_TOOLSET, ToolSet

__all__ = ["Entry", "Inventory", "inventory", "prune_orphans"]

_TRIAL_STEM = re.compile(r"(.+)\.t(\d+)")


@dataclass(frozen=True)
class Entry:
    """One fixture × provider/model/tool set: which files exist, when it was recorded, what is stale."""

    key: RunKey
    fixture_id: str
    cassette: Path | None
    golden: Path | None
    recorded: str | None
    stale: tuple[str, ...] = ()
    trial: int = 1
    #: The provider plays a script and records nothing (the mock): no cassette is missing.
    scripted: bool = False
    #: The cassette's `synthesized` header: what trace it was made from (`import otel`), not a live recording.
    synthesized: dict[str, Any] | None = None

    def age_days(self, today: datetime.date) -> int | None:
        if self.recorded is None:
            return None
        try:
            return (today - datetime.date.fromisoformat(self.recorded)).days
        except ValueError:
            return None


@dataclass
class Inventory:
    """Every entry, plus files that belong to no fixture any more."""

    entries: list[Entry] = field(default_factory=list)
    orphans: list[Path] = field(default_factory=list)
    today: datetime.date = field(default_factory=datetime.date.today)

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": [
                {"provider": e.key.provider, "model": e.key.model, "tools": e.key.tools, "fixture": e.fixture_id,
                 "trial": e.trial,
                 "cassette": str(e.cassette) if e.cassette else None,
                 "golden": str(e.golden) if e.golden else None,
                 "recorded": e.recorded, "age_days": e.age_days(self.today),
                 "stale": list(e.stale) if e.cassette else None, "scripted": e.scripted,
                 "synthesized": e.synthesized}
                for e in self.entries
            ],
            "orphans": [str(p) for p in self.orphans],
        }


def inventory(settings: Settings, catalog: Catalog, pm: pluggy.PluginManager) -> Inventory:
    """Scan the cassette and golden folders against the catalog and the project's tool sets;
    ToolSetError for a broken tool-set file (the default set's, or one the recordings name)."""
    store = GoldenStore(settings.golden)
    ids = set(catalog.fixtures)
    inv = Inventory()
    files: dict[RunKey, dict[tuple[str, int], dict[str, Path]]] = {}
    for rec, kind in [*((r, "cassette") for r in scan(settings.cassettes, CASSETTE)),
                      *((r, "golden") for r in store.files())]:
        fixture_id, trial = _fixture_and_trial(rec.stem)
        if fixture_id not in ids:
            # a file replio did not write, or one of a fixture left out (--no-bundled, --fixture), is no orphan
            if fixture_id not in catalog.left_out and _ours(rec.path, kind):
                inv.orphans.append(rec.path)
            continue
        files.setdefault(RunKey(rec.provider, rec.model, rec.tools), {}).setdefault((fixture_id, trial), {})[kind] = \
            rec.path
    if settings.config.provider:  # the default provider is listed even before anything is recorded
        name, model = parse_spec(settings.config.provider)
        if model:
            files.setdefault(RunKey(name, model), {})
    toolsets = _toolsets(settings, pm, sorted({k.tools for k in files} | {DEFAULT_TOOLSET}))
    for key in sorted(files, key=lambda k: (k.provider, k.model, k.tools != DEFAULT_TOOLSET, k.tools)):
        slots = sorted({(i, 1) for i in catalog.fixtures} | set(files[key]))
        for fixture_id, trial in slots:
            kinds = files[key].get((fixture_id, trial), {})
            cassette = kinds.get("cassette")
            header, stale = _check(cassette, catalog.fixtures[fixture_id], toolsets.get(key.tools))
            synthesized = header.get("synthesized") if header else None
            inv.entries.append(Entry(key, fixture_id, cassette, kinds.get("golden"),
                                     _recorded(header), stale, trial, _scripted(key.provider),
                                     synthesized if isinstance(synthesized, dict) else None))
    return inv


def _scripted(provider: str) -> bool:
    """Whether the provider named `provider` plays a script and records nothing (one no longer known records)."""
    try:
        return not provider_class(provider).speaks_http
    except UsageError:
        return False


def _fixture_and_trial(stem: str) -> tuple[str, int]:
    """`x` -> ("x", 1); `x.t3` -> ("x", 3): a trial's files carry its number."""
    match = _TRIAL_STEM.fullmatch(stem)
    return (match.group(1), int(match.group(2))) if match else (stem, 1)


def _ours(path: Path, kind: str) -> bool:
    """Whether replio wrote `path`: a cassette with its `replio` header, or a golden of the golden shape."""
    if kind == "cassette":
        try:
            return bool(read_header(path))
        except CassetteError:
            return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        Golden.model_validate(data)
    except (OSError, ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
        return False
    return True


def _toolsets(settings: Settings, pm: pluggy.PluginManager, names: list[str]) -> dict[str, ToolSet | str]:
    """Each tool set by name, or the message saying why it cannot be found (recordings of a tool
    set since removed, say); ToolSetError for one whose file is broken, as a run raises it."""
    out: dict[str, ToolSet | str] = {}
    for name in names:
        if given_by_path(name):  # its name holds a digest of the path, not the path
            out[name] = (f"{name!r} was given by a file path, which its name does not say; check it with "
                         "run --tools PATH --record-mode stale")
            continue
        try:
            (toolset,), _ = load_toolsets(settings.project, [name], settings.config.tools, pm,
                                          settings.config.mcp_servers, agent=settings.config.agent)
        except UsageError as exc:
            out[name] = str(exc)
            continue
        out[name] = toolset
    return out


def _check(cassette: Path | None, found: Found, toolset: ToolSet | str | None) -> tuple[dict[str, Any], tuple[str, ...]]:
    if cassette is None:
        return {}, ()
    try:
        header = read_header(cassette)
    except CassetteError as exc:
        return {}, (f"unreadable: {exc}",)
    if not header:
        return {}, ("no replio header; re-record it",)
    if not isinstance(toolset, ToolSet):
        return header, (f"tool set cannot be resolved: {toolset}",)
    return header, stale_reasons(header, found.fixture, toolset, lambda: _offered(toolset, found))


def _offered(toolset: ToolSet, found: Found) -> ToolSet:
    """What the fixture is offered from `toolset`; the whole set when that cannot be resolved."""
    try:
        return for_fixture(toolset, found.fixture, found.origin)
    except ReplioError:
        return toolset


def _recorded(header: dict[str, Any]) -> str | None:
    value = header.get("recorded")
    return str(value) if value is not None else None


def prune_orphans(inv: Inventory, catalog: Catalog) -> list[Path]:
    """Delete the orphaned files; returns what was removed.

    Refused (UsageError) while any fixture file is broken: its fixture is missing from the
    catalog only because it does not load, and its recordings are not orphans.
    """
    if catalog.problems:
        broken = ", ".join(sorted({p.file for p in catalog.problems}))
        raise UsageError(f"not pruning: fixture files are broken ({broken}); their recordings would look "
                         "orphaned. Fix them (see `replio eval list`), then prune")
    removed = []
    for path in inv.orphans:
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed
