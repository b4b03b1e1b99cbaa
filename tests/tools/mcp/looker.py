"""A real stdio MCP server (the official SDK) that looks around: what it finds in ``/proc`` and where
it can write. Used by test_confined.py.

    python looker.py
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("looker", version="1.0.0")


def _writes(path: str) -> bool:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("written")
        return True
    except OSError:
        return False


@server.tool(description="What this server finds in /proc, and whether it may write `outside`.")
def look(outside: str) -> str:
    keys, replio = 0, False
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                replio = replio or b"eval\0--path" in fh.read()
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read().split(b"\0")
        except OSError:
            continue
        keys += sum(1 for e in environ if e.startswith(b"OPENAI_API_KEY=sk-"))
    return json.dumps({"keys": keys, "replio_seen": replio, "own_key": "OPENAI_API_KEY" in os.environ,
                       "worktree": _writes("mine.txt"), "outside": _writes(outside)})


if __name__ == "__main__":
    server.run("stdio")
