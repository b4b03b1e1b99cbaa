"""The MCP SDK's log records while a run lasts: one redacted line each on stderr, a few per server.

The SDK logs what it cannot handle (a line a stdio server wrote to stdout that is not JSON-RPC,
a notification it cannot validate) with a traceback each, which Python's last-resort handler
prints whole. What a server writes can hold anything it was given, secrets included, and
pydantic's own message shows a long line's start and end around ``...``, which no redaction
recognises. So while a run lasts the SDK's loggers write through `SdkLog`: the problem and the
whole offending input on one line, redacted and then cut, at most `PER_SERVER` lines per server,
and as the run ends one line per server saying how many more there were.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..._runtime.redact import Redactor

__all__ = ["PER_SERVER", "SDK_LOGGERS", "SdkLog", "routed"]

#: The loggers the SDK writes to (its session module logs as "client").
SDK_LOGGERS = ("mcp", "client")
#: Lines said per server in one run; the rest are counted.
PER_SERVER = 3
#: Characters of one line's detail.
_DETAIL = 300
#: The name `McpConnection` gives the thread its server's session runs in.
_THREAD_PREFIX = "replio-mcp-"


class SdkLog(logging.Handler):
    """Writes each SDK record as one redacted line to stderr, at most `PER_SERVER` per server."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__(logging.WARNING)
        self.redactor = redactor
        self.seen: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        server = _server(record)
        self.seen[server] += 1
        if self.seen[server] <= PER_SERVER:
            _say(f"{server}: {self.redactor.cut(_detail(record), _DETAIL)}")

    def summary(self) -> list[str]:
        """One line per server whose lines were not all said."""
        return [f"{server}: ... and {n - PER_SERVER} more messages like these from the MCP SDK"
                for server, n in sorted(self.seen.items()) if n > PER_SERVER]


@contextmanager
def routed(redactor: Redactor) -> Iterator[SdkLog]:
    """The SDK's records go through `SdkLog` (and nowhere else) until the block ends."""
    handler = SdkLog(redactor)
    loggers = [logging.getLogger(name) for name in SDK_LOGGERS]
    kept = [(lg.propagate, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
        if lg.level == logging.NOTSET:
            lg.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        for lg, (propagate, level) in zip(loggers, kept):
            lg.removeHandler(handler)
            lg.propagate, lg.level = propagate, level
        for line in handler.summary():
            _say(line)


def _server(record: logging.LogRecord) -> str:
    thread = record.threadName or ""
    return f"mcp server {thread[len(_THREAD_PREFIX):]}" if thread.startswith(_THREAD_PREFIX) else "mcp"


def _detail(record: logging.LogRecord) -> str:
    """The record's message and what it is about, on one line: a validation error's whole input
    (pydantic's message shortens it), else the exception's text."""
    text = record.getMessage()
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None:
        text += f" ({_about(exc)})"
    return " ".join(text.split())


def _about(exc: BaseException) -> str:
    errors: Any = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else None
    except Exception:  # noqa: BLE001 - not pydantic's: its text below
        found = None
    if isinstance(found, list) and found and isinstance(found[0], dict):
        first = found[0]
        return f"{first.get('msg', type(exc).__name__)}; the input: '{first.get('input')}'"
    return f"{type(exc).__name__}: {exc}"


def _say(line: str) -> None:
    print(f"replio: {line}", file=sys.stderr, flush=True)
