"""Cassettes loaded once per content: what a cassette's text gives, parsed and checked, kept between runs.

Parsing its YAML and turning its structured bodies back into the JSON text vcrpy compares are
most of what loading a cassette costs (libyaml builds a node for every value): 3.5 ms for a
bundled cassette where reading the result back from `marshal` takes 0.2-0.3 ms, measured on a
slow machine. So the result is kept under ``$XDG_CACHE_HOME/replio/cassettes/`` (`derived`),
named by a hash of the text and of what read it (the source of the parser, replio's and
PyYAML's, whose ``__init__`` names its version, and Python's version): an edited cassette,
another replio, PyYAML or Python never meets a stale entry. A missing or damaged entry is
loaded again; a cassette that does not load is not kept.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..derived import code_stamp, remembered
from ..env import cache_dir

__all__ = ["PARSER_MODULES", "parsed"]

#: The modules whose code decides what a cassette's YAML gives: replio's parser and PyYAML.
PARSER_MODULES = ("replio_replay.recording.serializer", "replio_replay.recording.yamlcodec",
                  "replio_replay.recording.limits", "yaml")


def parsed(text: str, parse: Callable[[str], Any], folder: Path | None = None) -> Any:
    """What `parse(text)` gives: read from the cache folder when this text was parsed before, else
    parsed and kept. Errors from `parse` (a cassette that does not load) pass through, uncached."""
    folder = folder if folder is not None else cache_dir() / "cassettes"
    return remembered(folder, _key(text), lambda: parse(text))


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=_reader(), digest_size=20).hexdigest()


@functools.cache
def _reader() -> bytes:
    """What reads a cassette: the parser's files (found without importing them, so a replay the
    cache serves never loads PyYAML) and Python's version."""
    return hashlib.blake2b(code_stamp(*PARSER_MODULES).encode(), digest_size=32).digest()
