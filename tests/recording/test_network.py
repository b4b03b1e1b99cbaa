"""Replay with record mode `none` opens no socket; web_fetch exchanges are recorded and replayed too."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.recording import network
from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer, Reply
from tests.support.project import run_args


def test_network_blocked_refuses_connections_and_restores(llm_server: LLMServer) -> None:
    host, port = llm_server.url.removeprefix("http://").split(":")
    with network.network_blocked():
        with pytest.raises(network.NetworkBlocked, match="record mode none"):
            socket.create_connection((host, int(port)), timeout=2)
    socket.create_connection((host, int(port)), timeout=2).close()


def test_replay_opens_no_socket_and_replays_web_fetch(project: Path, llm_server: LLMServer, monkeypatch) -> None:
    doc = f"{llm_server.url}/docs/notes"
    agent = openai_agent({"ALPHA": [[("web_fetch", {"url": doc})], "fetched"], "BETA": ["nothing"]})

    def handler(seen):
        if seen.method == "GET":
            return Reply(body=b"the recorded page", headers={"content-type": "text/plain"})
        return agent(seen)

    llm_server.handler = handler
    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "web_allow": ["127.0.0.1"]}))
    recorded = CliRunner().invoke(main, run_args(project, "--base-url", f"{llm_server.url}/v1"))
    assert recorded.exit_code == 0, recorded.output
    assert [s.method for s in llm_server.requests].count("GET") == 1
    llm_server.close()

    attempts = []
    real_refuse = network._refuse

    def tripwire(sock, address, *args):
        attempts.append(address)
        return real_refuse(sock, address, *args)

    monkeypatch.setattr(network, "_refuse", tripwire)
    config.write_text(json.dumps({k: v for k, v in json.loads(config.read_text()).items() if k != "web_allow"}))
    # A replayed fetch is answered by the cassette: the address check, done while recording, is not repeated.
    replay = CliRunner().invoke(main, run_args(project, "--record-mode", "none"))
    assert replay.exit_code == 0, replay.output
    assert attempts == []
    alpha = json.loads(replay.stdout)["fixtures"][0]
    assert alpha["names"] == ["web_fetch"] and alpha["errors"] == 0
    cassette = (project / "cassettes" / "openai" / "test-model" / "alpha.yaml").read_text()
    assert "the recorded page" in cassette
