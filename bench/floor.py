"""The floor of a replay: bare vcrpy + httpx over a folder of cassettes, no engine.

`python bench/floor.py FOLDER...` replays every `*.yaml` under each folder, as `bench/run.py`
times it against `replio eval run`: each cassette is loaded by vcrpy through replio's readable
serializer (the public `ReadableSerializer`) with `use_cassette`, which patches httpx, every
recorded request is sent again through one httpx client and its response read as JSON. Nothing
else: no fixture, plan, worktree, tool or verdict. It prints the number of cassettes replayed.

`--transport` replays as replio uses vcrpy instead: no patching, each cassette loaded as a vcrpy
`Cassette` and asked for each response (`play_response`) by an httpx transport of its own.
`--serializer yaml` (or `json`) reads cassettes in vcrpy's own YAML (or JSON), vcrpy's own
serializers and no replio code at all, as `--convert SRC DST` (with the same `--serializer`)
writes them from replio's: the same interactions, so `bench/peers.py` can show what a replay with
vcrpy at its core pays for the same suite, in replio's readable format or in vcrpy's own.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import httpx
import vcr
from vcr import matchers
from vcr.cassette import Cassette
from vcr.persisters.filesystem import FilesystemPersister
from vcr.request import Request
from vcr.serializers import jsonserializer, yamlserializer

from replio_replay import ReadableSerializer

#: vcrpy's own serializers, by the name `use_cassette` knows them by.
VCRPY: dict[str, Any] = {"yaml": yamlserializer, "json": jsonserializer}


def _serializer(name: str) -> Any:
    return ReadableSerializer() if name == "replio" else VCRPY[name]


class _Answering:
    """An httpx handler answering each request with the current `cassette`'s recorded response."""

    cassette: Cassette

    def __call__(self, request: httpx.Request) -> httpx.Response:
        recorded = self.cassette.play_response(Request(request.method, str(request.url), request.content,
                                                       dict(request.headers)))
        body = recorded["body"]["string"]
        return httpx.Response(recorded["status"]["code"], content=body.encode() if isinstance(body, str) else body,
                              headers=[(name, value) for name, values in recorded["headers"].items() for value in values])


def replay(folders: list[Path], serializer: str = "replio", transport: bool = False) -> int:
    """Replay every cassette under `folders` (in replio's format, or vcrpy's own `yaml` or `json`) through
    one httpx client: with `use_cassette` or, with `transport`, a `Cassette` answering the client's
    transport; return how many."""
    my_vcr = vcr.VCR(record_mode="none")
    my_vcr.register_serializer("replio", ReadableSerializer())
    cassettes = sorted(path for folder in folders for path in folder.rglob("*.yaml"))
    answering = _Answering()
    with httpx.Client(transport=httpx.MockTransport(answering) if transport else None) as client:
        for path in cassettes:
            if transport:
                answering.cassette = Cassette.load(
                    path=str(path), serializer=_serializer(serializer), persister=FilesystemPersister,
                    record_mode="none", match_on=(matchers.method, matchers.path))
                _send(client, answering.cassette)
            else:
                with my_vcr.use_cassette(str(path), serializer=serializer) as cassette:
                    _send(client, cassette)
    return len(cassettes)


def _send(client: httpx.Client, cassette: Cassette) -> None:
    for request in list(cassette.requests):
        client.request(request.method, request.uri, content=request.body, headers=dict(request.headers)).json()


def convert(source: Path, into: Path, serializer: str = "yaml") -> int:
    """Write each replio cassette under `source` in vcrpy's own YAML (or JSON), at the same path under `into`
    (named `.yaml` either way, as `replay` looks for them); return how many."""
    cassettes = sorted(source.rglob("*.yaml"))
    for path in cassettes:
        data = ReadableSerializer(source=str(path)).deserialize(path.read_text(encoding="utf-8"))
        target = into / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(VCRPY[serializer].serialize(data), encoding="utf-8")
    return len(cassettes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serializer", choices=("replio", *VCRPY), default="replio",
                        help="the cassettes' format: replio's (default), or vcrpy's own YAML or JSON")
    parser.add_argument("--transport", action="store_true",
                        help="replay as replio uses vcrpy: a Cassette answering an httpx transport, nothing patched")
    parser.add_argument("--convert", nargs=2, type=Path, metavar=("SRC", "DST"),
                        help="write SRC's replio cassettes under DST in vcrpy's own format --serializer names, "
                             "and replay nothing")
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    if args.convert and args.serializer == "replio":
        parser.error("--convert writes vcrpy's own format: give --serializer yaml or json")
    print(convert(*args.convert, args.serializer) if args.convert
          else replay(args.folders, args.serializer, args.transport))


if __name__ == "__main__":
    main()
