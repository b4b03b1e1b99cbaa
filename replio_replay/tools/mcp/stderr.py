"""The tail of a stdio MCP server's stderr: read as it is written, only the last few KB kept.

The server writes into a pipe, never a file: a server that logs without end costs a thread
reading it and `KEEP` bytes of memory, not the disk. A daemon thread drains the pipe as data
comes (the read end is non-blocking; reading happens under a lock), and `text()` first drains
what is waiting itself, so it holds everything written before it was called. The thread ends,
and closes the pipe, once every process holding the write end has gone.
"""

from __future__ import annotations

import os
import re
import select
import threading
from typing import TextIO

__all__ = ["StderrTail"]

#: Bytes of the end of a server's stderr kept in memory.
KEEP = 8192
_CHUNK = 65536


class StderrTail:
    """A pipe whose write end (`errlog`) is a server's stderr, and the last `keep` bytes read from it."""

    def __init__(self, keep: int = KEEP) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        #: What the server is started with as its stderr; `spawned()` closes this copy.
        self.errlog: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self._fd = read
        self._keep = keep
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._ended = False
        self._dropped = False  # whether the start of what was read was let go
        threading.Thread(target=self._pump, name="replio-mcp-stderr", daemon=True).start()

    def spawned(self) -> None:
        """Drop our copy of the write end (the server holds its own), so the pipe ends when the server does.

        Also what to call when the server was never started: the thread then ends at once.
        """
        if not self.errlog.closed:
            self.errlog.close()

    def text(self) -> str:
        """What was kept, as text; when its start was let go, from the first whole word on (the
        end of a word cut in two, a token's say, could be a secret's)."""
        self._drain()
        with self._lock:
            text = self._tail.decode("utf-8", "replace")
            return _after_first_space(text) if self._dropped else text

    def _pump(self) -> None:
        while not self._ended:
            select.select([self._fd], [], [])
            self._drain()
        os.close(self._fd)  # here only: nothing else waits on the fd, so none waits on a reused number

    def _drain(self) -> None:
        """Read what is waiting in the pipe, keeping its last `keep` bytes; note its end."""
        with self._lock:
            while not self._ended:
                try:
                    chunk = os.read(self._fd, _CHUNK)
                except BlockingIOError:
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    self._ended = True
                    return
                self._tail += chunk
                if len(self._tail) > self._keep:
                    del self._tail[:-self._keep]
                    self._dropped = True


def _after_first_space(text: str) -> str:
    """`text` from its first whitespace on ('' when it has none)."""
    found = re.search(r"\s", text)
    return text[found.start():] if found else ""
