"""A small MCP server written with the official SDK, for the tests: run as a program.

    python server.py stdio [--stall | --exit | --noisy | --daemon | --chatty N]
                                                  serve on stdin/stdout (--chatty: after
                                                  N lines `TOKEN=$TOKEN` that are not JSON-RPC)
    python server.py http PORT                    serve streamable HTTP on 127.0.0.1:PORT/mcp

Tools: echo (text), add (structured), blocks (many text blocks), fail (an error result), picture
(an image), slow (sleeps), crash (the process dies), spawn (starts a child that would outlive
it), daemon (starts `sleep 300` forked twice in a session of its own, as daemons do), note
(reads note.txt where it runs, then NOTE_SUFFIX), token (the TOKEN it was given), where (its
folder and the names in its environment). `echo`'s description is NOTE_DESCRIPTION when that
is set. With PIDFILE set, the server and the children `spawn` and `daemon` start append their
pids to it; `--daemon` starts a daemon before serving.
Over HTTP, a request must carry `Authorization: Bearer $TOKEN` when TOKEN is set. `--noisy`
writes 20 MB to stderr (first noting in STDERR_NOTE where its stderr goes), then exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from mcp.server.mcpserver import Image, MCPServer

server = MCPServer("test-server", version="1.2.3")

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
    "00000500010d0a2db40000000049454e44ae426082"
)


@server.tool(description=os.environ.get("NOTE_DESCRIPTION", "Echo the text back."))
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.", structured_output=True)
def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


@server.tool(description="Always fails.")
def fail(reason: str) -> str:
    raise ValueError(f"failed because {reason}")


@server.tool(description="COUNT text blocks of SIZE characters each, numbered.")
def blocks(count: int, size: int) -> list[str]:
    return [f"{i:06d}" + "x" * (size - 6) for i in range(count)]


@server.tool(description="A tiny picture.")
def picture() -> Image:
    return Image(data=PNG, format="png")


@server.tool(description="Sleep, then answer.")
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool(description="Die at once.")
def crash() -> str:
    sys.stderr.write("test-server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Start a child process that would outlive the server; answer its pid.")
def spawn() -> str:
    child = subprocess.Popen(["sleep", "300"])
    _note_pid(child.pid)
    return _said(child.pid)


@server.tool(description="Start a daemon that would outlive the server; answer its pid.")
def daemon() -> str:
    return _said(_daemon())


def _daemon() -> int:
    """Start `sleep 300` as a daemon does: forked twice, in a session of its own, stdio on /dev/null."""
    read, write = os.pipe()
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.write(write, str(os.getpid()).encode())
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)
    os.close(write)
    pid = int(os.read(read, 32))
    os.close(read)
    os.waitpid(first, 0)
    _note_pid(pid)
    return pid


def _said(pid: int) -> str:
    """`pid` (of this PID namespace: confined, the server has one of its own) as the tests find it
    (`tests.support.processes.host_pid`)."""
    return f"{os.readlink('/proc/self/ns/pid')} {pid}"


def _note_pid(pid: int) -> None:
    if os.environ.get("PIDFILE"):
        with open(os.environ["PIDFILE"], "a", encoding="ascii") as fh:
            fh.write(f"{_said(pid)}\n")


@server.tool(description="What note.txt in the working folder says.")
def note() -> str:
    with open("note.txt", encoding="utf-8") as fh:
        return fh.read() + os.environ.get("NOTE_SUFFIX", "")


@server.tool(description="The token the server was given.")
def token() -> str:
    return os.environ.get("TOKEN", "")


@server.tool(description="The server's working folder and the names in its environment.")
def where() -> str:
    return f"{os.path.basename(os.getcwd())}\n{' '.join(sorted(os.environ))}"


def _noisy() -> None:
    with open(os.environ["STDERR_NOTE"], "w", encoding="utf-8") as fh:
        fh.write(os.readlink("/proc/self/fd/2"))
    line = "test-server: chatter " + "x" * 1000 + "\n"
    for _ in range(20_000):
        sys.stderr.write(line)
    sys.stderr.write("test-server: 20 MB later, giving up\n")
    sys.exit(2)


def main() -> None:
    _note_pid(os.getpid())
    mode = sys.argv[1]
    if mode == "stdio":
        if "--exit" in sys.argv:
            sys.stderr.write("test-server: cannot start, no config\n")
            sys.exit(2)
        if "--noisy" in sys.argv:
            _noisy()
        if "--daemon" in sys.argv:
            _daemon()
        if "--stall" in sys.argv:
            time.sleep(600)
        if "--chatty" in sys.argv:
            lines = int(sys.argv[sys.argv.index("--chatty") + 1])
            sys.stdout.write(f"TOKEN={os.environ.get('TOKEN', '')}\n" * lines)
            sys.stdout.flush()
        server.run("stdio")
        return
    port = int(sys.argv[2])
    expected = os.environ.get("TOKEN")
    import uvicorn

    app = server.streamable_http_app()
    if expected:
        from starlette.responses import PlainTextResponse

        inner = app

        async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                if headers.get(b"authorization") != f"Bearer {expected}".encode():
                    await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
                    return
            await inner(scope, receive, send)

        app = guarded
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
