"""bench/run.py's own logic: the half of the BFCL example its per-fixture figure is a difference
against, the fd-growth check, bench/floor.py's bare vcrpy + httpx replay over real cassettes, and
bench/server.py's listen backlog."""

from __future__ import annotations

import select
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from replio_replay import ReadableSerializer

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import floor  # noqa: E402
import run  # noqa: E402
import server  # noqa: E402


def stems(folder: Path, pattern: str) -> set[str]:
    return {path.stem for path in folder.glob(pattern)}


def test_the_half_bfcl_example_keeps_the_first_50_cases_of_each_category_with_their_recordings(tmp_path: Path) -> None:
    half = run.bfcl_copy(tmp_path / "half", 50)
    fixtures = stems(half, ".replio/eval/**/bfcl-*.json")
    assert len(fixtures) == 200
    assert {int(stem.rsplit("_", 1)[1]) for stem in fixtures} == set(range(50))
    assert (half / ".replio" / "config.json").is_file()
    for model in ("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"):
        assert stems(half, f"cassettes/llamacpp/{model}/*.yaml") == fixtures
        assert stems(half, f"golden/llamacpp/{model}/*.json") == fixtures


def test_fd_growth_compares_the_most_open_in_each_half() -> None:
    assert run.fd_growth([5, 6, 6, 5, 6, 7]) == (6, 7)
    assert run.fd_growth([6, 6, 20, 6, 30, 40]) == (20, 40)
    assert run.fd_growth([]) == (0, 0)


@pytest.mark.parametrize("transport", [False, True], ids=["use_cassette", "transport"])
def test_the_floor_replays_every_recorded_request_of_the_cassettes(tmp_path: Path, transport: bool) -> None:
    source = REPO / "examples" / "bfcl" / "cassettes" / "llamacpp" / "qwen2.5-coder-0.5b-instruct"
    for name in ("bfcl-simple_python_0.yaml", "bfcl-parallel_0.yaml", "bfcl-irrelevance_0.yaml"):
        shutil.copyfile(source / name, tmp_path / name)
    assert floor.replay([tmp_path], transport=transport) == 3


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_the_floor_in_vcrpys_own_formats_replays_the_same_interactions(tmp_path: Path, serializer: str) -> None:
    """`--convert` writes what vcrpy's own serializer reads alone (no replio code), with the same
    requests and responses, so `bench/peers.py` can time any vcrpy replay of the same suite."""
    source = REPO / "examples" / "bfcl" / "cassettes" / "llamacpp" / "qwen2.5-coder-0.5b-instruct"
    ours = tmp_path / "ours"
    ours.mkdir()
    names = ("bfcl-simple_python_0.yaml", "bfcl-parallel_0.yaml")
    for name in names:
        shutil.copyfile(source / name, ours / name)
    assert floor.convert(ours, tmp_path / "plain", serializer) == 2
    assert floor.replay([tmp_path / "plain"], serializer=serializer) == 2
    assert floor.replay([tmp_path / "plain"], serializer=serializer, transport=True) == 2
    for name in names:
        plain = floor.VCRPY[serializer].deserialize((tmp_path / "plain" / name).read_text(encoding="utf-8"))
        readable = ReadableSerializer().deserialize((ours / name).read_text(encoding="utf-8"))
        assert plain == readable and len(plain["interactions"]) >= 1


def test_the_bench_server_takes_many_connections_at_once_without_accepting_them() -> None:
    """Eight fixtures connecting at once must not overflow its listen backlog: the kernel would drop
    the last handshakes, and their clients would retry a second later."""
    fake = server.BenchServer()
    fake.httpd.shutdown()  # nobody accepts from here on: only the backlog holds what arrives
    clients = [socket.socket() for _ in range(16)]
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", fake.httpd.server_port))
        deadline = time.monotonic() + 0.5  # well under the kernel's first retry of a dropped handshake (1 s)
        pending = list(clients)
        while pending and time.monotonic() < deadline:
            _, connected, _ = select.select([], pending, [], 0.05)
            pending = [c for c in pending if c not in connected]
        assert not pending, f"{len(pending)} of 16 connections not taken into the backlog"
    finally:
        for client in clients:
            client.close()
        fake.httpd.server_close()
