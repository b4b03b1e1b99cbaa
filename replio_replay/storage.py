"""Where recordings live, the one place that knows: `<dir>/<provider>/<model>/[tools=NAME/]<id>.<ext>`.

Cassettes (`.yaml`) and goldens (`.json`) share the layout. A run is of one provider, model and
tool set (`RunKey`); the default tool set keeps the paths without a `tools=` folder, so
recordings made before tool sets existed stay valid. Names are made safe as path components
here and only here. (A cassette's provenance header is read by `recording.serializer.read_header`.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .tools.toolset import DEFAULT_TOOLSET

__all__ = ["CASSETTE", "GOLDEN", "TOOLS_PREFIX", "Recorded", "RunKey", "safe_name", "scan"]

CASSETTE = ".yaml"
GOLDEN = ".json"
#: A tool set's folder under the model's: `tools=<name>`.
TOOLS_PREFIX = "tools="


def safe_name(name: str) -> str:
    """A provider, model, tool-set or fixture name as one path component (`qwen2.5:7b` -> `qwen2.5_7b`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "_"


@dataclass(frozen=True)
class RunKey:
    """What one run is of: a provider, a model and a tool set."""

    provider: str
    model: str
    tools: str = DEFAULT_TOOLSET

    @property
    def label(self) -> str:
        """`provider:model`, with ` tools=NAME` unless the tool set is the default."""
        base = f"{self.provider}:{self.model}"
        return base if self.tools == DEFAULT_TOOLSET else f"{base} tools={self.tools}"

    def folder(self, root: Path) -> Path:
        """The folder of this run's files under `root`."""
        folder = root / safe_name(self.provider) / safe_name(self.model)
        return folder if self.tools == DEFAULT_TOOLSET else folder / f"{TOOLS_PREFIX}{safe_name(self.tools)}"

    def path(self, root: Path, fixture_id: str, ext: str) -> Path:
        """One fixture's file of this run: a cassette (`.yaml`) or a golden (`.json`)."""
        return self.folder(root) / f"{safe_name(fixture_id)}{ext}"


@dataclass(frozen=True)
class Recorded:
    """A file found on disk, by the parts of its path (names as made safe)."""

    provider: str
    model: str
    tools: str
    stem: str
    path: Path


def scan(root: Path, ext: str) -> Iterator[Recorded]:
    """Every file with extension `ext` in the layout under `root`, in path order."""
    if not root.is_dir():
        return
    found = [*root.glob(f"*/*/*{ext}"), *root.glob(f"*/*/{TOOLS_PREFIX}*/*{ext}")]
    for path in sorted(found):
        folder = path.parent
        tools = DEFAULT_TOOLSET
        if folder.name.startswith(TOOLS_PREFIX):
            tools, folder = folder.name[len(TOOLS_PREFIX):], folder.parent
        if path.is_file():
            yield Recorded(folder.parent.name, folder.name, tools, path.stem, path)
