"""The one place that reads the process environment: a snapshot taken once, and the folders it
names (the global fixture dir, the cache folder with the one file per project that each record
kept there holds: the last-failed list, the notes told once).

Only the code that builds a child process's environment (`tools.process`, `gitrepo`,
`agents.process`, `tools.child`) reads `os.environ` itself, to pass the few variables a child
needs; `confine` reads ``REPLIO_CONFINE`` (for tests) when it first starts one; and
`agents.protocol`, which runs in the user's agent, reads what replio gave it.
"""

from __future__ import annotations

import hashlib
import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Env", "project_file"]


@dataclass(frozen=True)
class Env:
    """A read-only view of the environment, taken once."""

    values: Mapping[str, str]

    @classmethod
    def current(cls) -> Env:
        return cls(dict(os.environ))

    def get(self, name: str | None) -> str | None:
        return self.values.get(name) if name else None

    @property
    def global_fixture_dir(self) -> Path:
        """`$XDG_CONFIG_HOME/replio/eval`, else `~/.config/replio/eval`."""
        return self._xdg("XDG_CONFIG_HOME", ".config") / "replio" / "eval"

    @property
    def cache_dir(self) -> Path:
        """`$XDG_CACHE_HOME/replio`, else `~/.cache/replio`."""
        return self._xdg("XDG_CACHE_HOME", ".cache") / "replio"

    def _xdg(self, name: str, fallback: str) -> Path:
        """The XDG folder `name` names, else `fallback` in the home folder (`HOME`, else the
        account's: `Path.home()` would read the process's environment, not this one)."""
        if self.values.get(name):
            return Path(self.values[name])
        home = self.values["HOME"] if "HOME" in self.values else pwd.getpwuid(os.getuid()).pw_dir
        return Path(home) / fallback


def project_file(cache: Path, project: Path, kind: str) -> Path:
    """The file under `cache` where the record `kind` (`lastfailed`, `told-bundled`) of `project` lives,
    named by a hash of the project's resolved path."""
    return cache / f"{kind}-{hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]}.json"
