"""Shared by the MCP tests: the SDK-written test server as a stdio or HTTP server config, and process checks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import host_pid

SERVER = Path(__file__).with_name("server.py")


def stdio_config(*flags: str, **more: Any) -> dict[str, Any]:
    """The test server as a `mcp_servers` entry run with the Python that runs the tests."""
    return {"command": "{python}", "args": [str(SERVER), "stdio", *flags], **more}


def alive(said: str) -> bool:
    """Whether the process that said `said` (the server's ``_said``: its PID namespace and pid
    there) runs; a zombie waiting for its parent to reap it does not."""
    pid = host_pid(said)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return pid is not None and stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids(path: Path) -> list[str]:
    """What the server wrote to its PIDFILE: each process it noted, as it said it (see `alive`)."""
    return path.read_text().splitlines() if path.exists() else []


def wait_until_dead(found: list[str], seconds: float = 5.0) -> list[str]:
    """The processes still alive after up to `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(alive(p) for p in found):
        time.sleep(0.05)
    return [p for p in found if alive(p)]


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The test server over streamable HTTP on a free loopback port, expecting TOKEN as a bearer
    token: one for a module's tests (each opens a session of its own; the server keeps nothing else)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"PATH": "/usr/bin:/bin", "TOKEN": "http-secret-token-4242"}
    proc = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        end = time.monotonic() + 20
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > end or proc.poll() is not None:
                    raise RuntimeError("the HTTP test server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.kill()
        proc.wait()
