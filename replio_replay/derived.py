"""Data derived once and kept between runs: what replio computed from inputs that have not changed since.

Some of what a run computes depends only on files that rarely change: a cassette, loaded and
checked (on its text and the parser's code), a built-in tool's JSON Schema (on replio's tool
code and pydantic). `remembered` keeps such data in a folder under the cache folder, in a file
named by a key the caller derives from everything the data depends on (`code_stamp` stamps
code by a hash of its source, found without importing it), so a changed input never meets a
stale entry and nothing but a name is compared.

It only ever saves time. Entries are `marshal` data (the form Python keeps compiled modules in)
behind a checksum: a missing, torn, corrupt or unreadable entry is computed again, and a folder
that cannot be written costs only the computing. Entries are written whole (a temp file, then a
rename); reading one marks it used. The first write of a process to a folder prunes it: past
`MAX_ENTRIES` entries or `MAX_BYTES` the least recently used are removed until half of each is
left (processes writing at once may each add theirs before the next prune), and temp files a
killed writer left go after an hour.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "code_stamp", "remembered"]

#: Entries, and bytes, a folder may hold before the least recently used are removed (the bundled
#: cassettes' entries are 4-73 kB, half of them under 12 kB; a tool's schema under 0.5 kB).
MAX_ENTRIES = 4096
MAX_BYTES = 256 * 1024 * 1024
#: Seconds after which a temp file no writer renamed is an orphan.
STALE_TEMP = 3600

_SUM = 16  # bytes of the checksum before each entry's data
_MISSING = object()
_pruned: set[Path] = set()  # each folder once per process is enough
_pruned_lock = threading.Lock()


def remembered(folder: Path, key: str, compute: Callable[[], Any]) -> Any:
    """What `compute()` gives: read from `folder` when it was kept under `key`, else computed and
    kept. Errors from `compute` pass through, and nothing is kept. `key` must name everything the
    data depends on (a hash: it becomes a file name)."""
    path = folder / f"{key}.marshal"
    found = _read(path)
    if found is not _MISSING:
        with contextlib.suppress(OSError):
            os.utime(path)  # used: the last to go when the folder is pruned
        return found
    data = compute()
    _write(path, data)
    return data


def code_stamp(*modules: str) -> str:
    """A hash of each module's source (``pkg.*``: of every module in the package's folder), and of
    Python's and marshal's versions: what changes when any of that code is edited, upgraded or
    reinstalled, whatever the files' times say. The files are found without importing the
    modules (a submodule's package is imported, as finding it requires)."""
    digest = hashlib.blake2b(f"{sys.version_info[:3]}|marshal {marshal.version}".encode(), digest_size=20)
    for name in modules:
        digest.update(f"|{name}".encode())
        for path in _files_of(name):
            try:
                with open(path, "rb") as fh:
                    digest.update(hashlib.blake2b(fh.read(), digest_size=20).digest())
            except OSError:
                digest.update(b"?")
    return digest.hexdigest()


def _files_of(name: str) -> list[str]:
    whole = name.endswith(".*")
    try:
        spec = importlib.util.find_spec(name[:-2] if whole else name)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin:
        return []
    if not whole:
        return [spec.origin]
    folder = os.path.dirname(spec.origin)
    try:
        return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return []


def _read(path: Path) -> Any:
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except OSError:
        return _MISSING
    body = blob[_SUM:]
    if len(blob) <= _SUM or hashlib.blake2b(body, digest_size=_SUM).digest() != blob[:_SUM]:
        return _MISSING
    try:
        return marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return _MISSING


def _write(path: Path, data: Any) -> None:
    try:
        body = marshal.dumps(data)
    except ValueError:  # something marshal cannot hold: kept nowhere, computed each time
        return
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(hashlib.blake2b(body, digest_size=_SUM).digest() + body)
        os.replace(tmp, path)
        tmp = None
        with _pruned_lock:
            first = path.parent not in _pruned
            _pruned.add(path.parent)
        if first:
            _prune(path.parent)
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Over `MAX_ENTRIES` entries or `MAX_BYTES`: remove the least recently used until half of each
    is left. Temp files older than `STALE_TEMP` seconds (a writer killed between writing and
    renaming) go too."""
    try:
        entries = []
        stale = time.time() - STALE_TEMP
        for entry in os.scandir(folder):
            if entry.name.endswith(".marshal"):
                stat = entry.stat()
                entries.append((stat.st_mtime_ns, stat.st_size, entry.path))
            elif entry.name.startswith(".") and entry.name.endswith(".tmp") and entry.stat().st_mtime < stale:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    except OSError:
        return
    count, size = len(entries), sum(e[1] for e in entries)
    if count <= MAX_ENTRIES and size <= MAX_BYTES:
        return
    for _, entry_size, path in sorted(entries):
        if count <= MAX_ENTRIES // 2 and size <= MAX_BYTES // 2:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
        count, size = count - 1, size - entry_size
