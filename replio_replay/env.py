"""The one place that reads the process environment: a snapshot taken once, the global fixture
dir, and the cache folder (with the one file per project that each record kept there holds:
the last-failed list, the notes told once)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Env", "cache_dir", "global_fixture_dir", "project_file"]


def global_fixture_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/replio/eval`, else `~/.config/replio/eval`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "replio" / "eval"


@dataclass(frozen=True)
class Env:
    """A read-only view of the environment, taken once."""

    values: Mapping[str, str]

    @classmethod
    def current(cls) -> Env:
        return cls(dict(os.environ))

    def get(self, name: str | None) -> str | None:
        return self.values.get(name) if name else None


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/replio`, else `~/.cache/replio`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "replio"


def project_file(cache: Path, project: Path, kind: str) -> Path:
    """The file under `cache` where the record `kind` (`lastfailed`, `told-bundled`) of `project` lives,
    named by a hash of the project's resolved path."""
    return cache / f"{kind}-{hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]}.json"
