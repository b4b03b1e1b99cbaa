"""The floor of a replay: bare vcrpy + httpx over a folder of cassettes, no engine.

`python bench/floor.py FOLDER...` replays every `*.yaml` under each folder, as `bench/run.py`
times it against `replio eval run`: each cassette is loaded by vcrpy through replio's readable
serializer (the public `ReadableSerializer`), every recorded request is sent again through one
httpx client and its response read as JSON. Nothing else: no fixture, plan, worktree, tool or
verdict. It prints the number of cassettes replayed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import vcr

from replio_replay import ReadableSerializer


def replay(folders: list[Path]) -> int:
    """Replay every cassette under `folders`; return how many."""
    my_vcr = vcr.VCR(record_mode="none")
    my_vcr.register_serializer("replio", ReadableSerializer())
    cassettes = sorted(path for folder in folders for path in folder.rglob("*.yaml"))
    with httpx.Client() as client:
        for path in cassettes:
            with my_vcr.use_cassette(str(path), serializer="replio") as cassette:
                for request in list(cassette.requests):
                    client.request(request.method, request.uri, content=request.body,
                                   headers=dict(request.headers)).json()
    return len(cassettes)


if __name__ == "__main__":
    print(replay([Path(arg) for arg in sys.argv[1:]]))
