"""Where recordings live, the one place that knows: `<dir>/<provider>/<model>/[tools=NAME/]<id>.<ext>`.

Cassettes (`.yaml`) and goldens (`.json`) share the layout. A run is of one provider, model and
tool set (`RunKey`); the default tool set keeps the paths without a `tools=` folder, so
recordings made before tool sets existed stay valid. Names become path components here and
only here, by a reversible encoding, so two names never share a file. (A cassette's provenance header is read by `recording.serializer.read_header`.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from ..tools.toolset import DEFAULT_TOOLSET

__all__ = ["CASSETTE", "GOLDEN", "TOOLS_PREFIX", "Recorded", "RunKey", "decode_name", "encode_name", "scan"]

CASSETTE = ".yaml"
GOLDEN = ".json"
#: A tool set's folder under the model's: `tools=<name>`.
TOOLS_PREFIX = "tools="
_SAFE = re.compile(r"[A-Za-z0-9._-]")


def encode_name(name: str) -> str:
    """A provider, model, tool-set or fixture name as one path component, reversibly.

    Letters, digits, `.`, `_` and `-` stay; every other character (and a leading `.`) becomes
    `%XX` of its UTF-8 bytes, so `qwen2.5:7b`, `qwen2.5/7b` and `qwen2.5_7b` get three files.
    """
    encoded = "".join(ch if _SAFE.fullmatch(ch) else quote(ch, safe="") for ch in name)
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    return encoded or "%"


def decode_name(component: str) -> str:
    """The name `encode_name` turned into `component`."""
    return "" if component == "%" else unquote(component)


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
        folder = root / encode_name(self.provider) / encode_name(self.model)
        return folder if self.tools == DEFAULT_TOOLSET else folder / f"{TOOLS_PREFIX}{encode_name(self.tools)}"

    def path(self, root: Path, fixture_id: str, ext: str) -> Path:
        """One fixture's file of this run: a cassette (`.yaml`) or a golden (`.json`)."""
        return self.folder(root) / f"{encode_name(fixture_id)}{ext}"


@dataclass(frozen=True)
class Recorded:
    """A file found on disk, by the names its path encodes."""

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
        parts = path.relative_to(root).parts
        if any(p.startswith(".") for p in parts) or not path.is_file():
            continue  # never ours: encoded names do not start with a dot
        provider, model, *tools_dir, _ = parts
        tools = tools_dir[0][len(TOOLS_PREFIX):] if tools_dir else encode_name(DEFAULT_TOOLSET)
        yield Recorded(decode_name(provider), decode_name(model), decode_name(tools), decode_name(path.stem), path)


def recorded_providers(root: Path) -> list[str]:
    """The `provider:model` specs that have cassettes under `root`, sorted."""
    return sorted({f"{r.provider}:{r.model}" for r in scan(root, CASSETTE)})
