"""Secrets: headers and query parameters removed before recording, and the last-line check that
no live key appears anywhere in a cassette about to be written."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._runtime.redact import Redactor, shown_url

__all__ = ["REDACTED", "SECRET_HEADERS", "find_secret", "scrub_headers", "scrub_url"]

REDACTED = "REDACTED"

#: Request and response headers never written to a cassette (compared lower-case).
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
    "openai-organization", "openai-project", "anthropic-organization-id", "cookie", "set-cookie",
    "x-auth-token",
})


def scrub_headers(headers: dict[str, Any]) -> dict[str, Any]:
    """The headers without the secret ones."""
    return {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}


def scrub_url(url: str) -> str:
    """The URL without credentials: no userinfo, key-like query parameters replaced by REDACTED."""
    return shown_url(url, REDACTED)


def find_secret(data: Any, secrets: Redactor) -> str | None:
    """The path of the first value in `data` that holds one of `secrets` or a long part of one,
    in any spelling (`Redactor.found`; bytes in every encoding JSON may use), else None."""
    if not secrets:
        return None
    for path, value in _leaves(data, ""):
        if secrets.found(value):
            return path or "(root)"
    return None


def _leaves(node: Any, path: str) -> Iterator[tuple[str, str | bytes]]:
    if isinstance(node, dict):
        for k, v in node.items():
            sub = f"{path}.{k}" if path else str(k)
            yield sub, str(k)
            yield from _leaves(v, sub)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{path}[{i}]")
    elif isinstance(node, bytes):
        yield path, node
    elif node is not None:
        yield path, str(node)
