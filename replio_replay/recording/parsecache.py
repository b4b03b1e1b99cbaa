"""Cassettes parsed once per content: the plain data a cassette's YAML gives, kept in the cache folder.

Parsing its YAML is most of what replaying a cassette costs (libyaml builds a node for every
value: about 1.7 ms for a bundled cassette, where reading the same data back from `marshal`,
the form Python keeps compiled modules in, takes 0.06 ms). So the data is kept under
``$XDG_CACHE_HOME/replio/cassettes/``, in a file named by a hash of the YAML text and of what
read it (the size and time of the parser's files, replio's and PyYAML's, and Python's version):
an edited cassette, another replio, PyYAML or Python never meets a stale entry, and nothing but
a hash is compared.

The cache only ever saves time. Every entry carries a checksum of its data; a missing, torn,
corrupt or unreadable one is parsed again, and a folder that cannot be written is left alone.
Entries are written whole (a temp file, then a rename); reading one marks it used, and when the
folder holds more than `MAX_ENTRIES` entries or `MAX_BYTES`, the least recently used are removed
until it holds half of each.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..env import cache_dir

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "parsed"]

#: Entries, and bytes, the folder may hold before the least recently used are removed (a
#: bundled cassette's entry is about 13 kB).
MAX_ENTRIES = 4096
MAX_BYTES = 256 * 1024 * 1024

_SUM = 16  # bytes of the checksum before each entry's data
_pruned = threading.Event()  # once per process is enough
_MISSING = object()


def parsed(text: str, parse: Callable[[str], Any], folder: Path | None = None) -> Any:
    """What `parse(text)` gives: read from the cache folder when this text was parsed before, else
    parsed and kept. Errors from `parse` (a cassette that does not load) pass through, uncached."""
    folder = folder if folder is not None else cache_dir() / "cassettes"
    path = folder / f"{_key(text)}.marshal"
    found = _read(path)
    if found is not _MISSING:
        with contextlib.suppress(OSError):
            os.utime(path)  # used: the last to go when the folder is pruned
        return found
    data = parse(text)
    _write(path, data)
    return data


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=_reader(), digest_size=20).hexdigest()


#: The modules whose code decides what a cassette's YAML gives: replio's parser and PyYAML.
PARSER_MODULES = ("replio_replay.recording.serializer", "replio_replay.recording.yamlcodec",
                  "replio_replay.recording.limits", "yaml")


@functools.cache
def _reader() -> bytes:
    """What reads a cassette: the parser's files (as installed or edited, found without importing
    them, so a replay the cache serves never loads PyYAML) and Python's version."""
    stamps = []
    for name in PARSER_MODULES:
        try:
            spec = importlib.util.find_spec(name)
            stat = os.stat(str(spec.origin if spec else None))
            stamps.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
        except (OSError, ImportError, ValueError):
            stamps.append(f"{name}:?")
    who = f"{sys.version_info[:3]}|{marshal.version}|{'|'.join(stamps)}"
    return hashlib.blake2b(who.encode(), digest_size=32).digest()


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
    except ValueError:  # something marshal cannot hold: never in a cassette's plain data
        return
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(hashlib.blake2b(body, digest_size=_SUM).digest() + body)
        os.replace(tmp, path)
        tmp = None
        if not _pruned.is_set():
            _pruned.set()
            _prune(path.parent)
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Over `MAX_ENTRIES` entries or `MAX_BYTES`: remove the least recently used until half of each is left."""
    try:
        entries = []
        for entry in os.scandir(folder):
            if entry.name.endswith(".marshal"):
                stat = entry.stat()
                entries.append((stat.st_mtime_ns, stat.st_size, entry.path))
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
