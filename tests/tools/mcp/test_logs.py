"""The SDK's complaints about a stdio server's stdout: one redacted line each, a few per server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.agents import openai_agent
from tests.support.llm_server import LLMServer
from tests.tools.mcp.conftest import stdio_config

TOKEN = "sk-chat-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"  # longer than pydantic shows whole


def test_unparsable_lines_holding_a_secret_are_said_redacted_on_one_line_each(
        tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.handler = openai_agent({"NOTE": [[("note", {})], "The note says milk."]})
    project = tmp_path / "p"
    (project / ".replio" / "eval").mkdir(parents=True)
    (project / ".replio" / "eval" / "note.json").write_text(json.dumps({
        "task": "NOTE: use the tools.", "files": {"note.txt": "milk"}, "expected": ["note"],
        "tool_permission": {"mcp": "allow"}}))
    server = stdio_config("--chatty", "8", env={"TOKEN": {"from_env": "T_TOKEN"}})
    (project / ".replio" / "config.json").write_text(json.dumps({
        "provider": "openai:test-model", "mcp_servers": {"t": server}}))
    env = {**os.environ, "T_TOKEN": TOKEN, "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([str(Path(sys.executable).with_name("replio")), "eval", "--path", str(project), "run",
                           "--fixture", "note", "--no-cassettes", "--base-url", f"{llm_server.url}/v1"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "mcp server t" in line]
    assert said == 3 * ["replio: mcp server t: Failed to parse JSONRPC message from server (Invalid JSON: expected "
                        "value at line 1 column 1; the input: 'TOKEN=[REDACTED]')"] + [
        "replio: mcp server t: ... and 5 more messages like these from the MCP SDK"]
    assert "Traceback" not in done.stderr and TOKEN[:12] not in done.stderr + done.stdout
