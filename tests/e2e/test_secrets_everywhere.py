"""A server that echoes the key back: the key reaches no file the run writes, and no output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import write_project

KEY = "sk-test-echoed-0123456789abcdef"
PASSWORD = "url-password-4f9e2c7a"


def _echoing(seen: Seen) -> Reply:
    """Puts the bearer key it was sent into tool arguments and the answer; fails BETA with it."""
    key = seen.headers.get("authorization", "").removeprefix("Bearer ")
    body = seen.json()
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if task.startswith("BETA"):
        return Reply(500, json={"error": {"message": f"invalid request from key {key}"}})
    done = any(m["role"] == "tool" for m in body["messages"])
    message: dict[str, Any] = {"role": "assistant", "content": f"the key is {key}" if done else None}
    if not done:
        message["tool_calls"] = [{"id": "c1", "type": "function", "function": {
            "name": "file_read", "arguments": json.dumps({"path": f"notes-{key}.txt"})}}]
    return Reply(json={"choices": [{"index": 0, "message": message}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _replio(project: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "XDG_CONFIG_HOME": str(tmp / "xdg"),
           "XDG_CACHE_HOME": str(tmp / "cache"), "TMPDIR": str(tmp / "t")}
    env.pop("CI", None)
    (tmp / "t").mkdir(exist_ok=True)
    replio = str(Path(sys.executable).with_name("replio"))
    return subprocess.run([replio, "eval", "--path", str(project), "run", "--fixture", "alpha",
                           "--fixture", "beta", *args], env=env, capture_output=True, text=True, timeout=120)


def _everything_written(*folders: Path) -> str:
    return "".join(p.read_bytes().decode("utf-8", "replace") for f in folders for p in f.rglob("*") if p.is_file())


def test_an_echoed_key_appears_nowhere(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = _echoing
    project = write_project(tmp_path / "proj")
    out_dir = tmp_path / "artifacts"
    base = llm_server.url.replace("http://", f"http://user:{PASSWORD}@") + "/v1"
    runs = [
        _replio(project, tmp_path, "--base-url", base, "--update-golden", "--output", "json",
                "--output-file", str(out_dir / "run.json"), "--junit-xml", str(out_dir / "junit.xml")),
        _replio(project, tmp_path, "--base-url", base, "--no-cassettes", "--update-golden"),
        _replio(project, tmp_path, "--base-url", base, "--no-cassettes", "--output", "junit"),
    ]
    assert llm_server.requests, "the server was never reached"
    assert all(seen.headers["authorization"] == f"Bearer {KEY}" for seen in llm_server.requests)
    report = json.loads(runs[0].stdout)
    alpha, beta = report["fixtures"]
    assert "[REDACTED]" in alpha["answer"] and "[REDACTED]" in json.dumps(alpha["trace"])
    assert beta["status"] == "error"  # the key in its error response kept its cassette from disk
    written = _everything_written(project, out_dir)
    outputs = "".join(r.stdout + r.stderr for r in runs)
    assert "invalid request from key [REDACTED]" in runs[1].stdout  # the live error, redacted
    for secret in (KEY, PASSWORD):
        assert secret not in written, f"{secret} reached a file"
        assert secret not in outputs, f"{secret} reached stdout or stderr"
    assert (out_dir / "run.json").is_file() and (out_dir / "junit.xml").is_file()
    # a cassette holding the key is refused (the fixture ends in error); a plain live run approves
    assert not list((project / "cassettes").rglob("*.yaml"))
    assert [p.name for p in (project / "golden").rglob("*.json")] == ["alpha.json"]


def test_a_placeholder_key_does_not_block_recording(tmp_path: Path, llm_server: LLMServer) -> None:
    from tests.support.agents import openai_agent

    llm_server.handler = openai_agent({"ALPHA": ["x marks the spot"], "BETA": ["x"]})
    project = write_project(tmp_path / "proj")
    env = {**os.environ, "OPENAI_API_KEY": "x", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    env.pop("CI", None)
    done = subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), "run",
                           "--fixture", "alpha", "--fixture", "beta", "--base-url", f"{llm_server.url}/v1"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("OPENAI_API_KEY holds fewer than 8 characters") == 1
    assert sorted(p.name for p in (project / "cassettes").rglob("*.yaml")) == ["alpha.yaml", "beta.yaml"]
