"""Secrets out of every output: the one redaction step, applied where results leave the process.

The secrets are the values of the environment's key-like variables (`*_API_KEY`, `*_TOKEN`,
`*_SECRET`, `*_PASSWORD`, and every variable a provider is configured to read its key from)
and the passwords in base URLs. A value under 8 characters is a placeholder a local server
needs (`OPENAI_API_KEY=x`), not a secret: it is neither redacted nor refused in a cassette.
Results are redacted once, as a run ends, before anything is written: goldens, JSON, JUnit,
tables, the pytest plugin's reports and error messages all come from the redacted results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel

__all__ = ["MIN_SECRET", "REDACTED", "Redactor", "placeholder_names", "url_password", "without_credentials"]

REDACTED = "[REDACTED]"
#: Shorter values are placeholders, not secrets.
MIN_SECRET = 8

_KEY_LIKE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


def url_password(url: str | None) -> str | None:
    """The password (or lone user token) in a URL's userinfo, if any."""
    if not url or "@" not in url:
        return None
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
    except ValueError:
        return None
    return parts.password or parts.username


def without_credentials(url: str | None) -> str | None:
    """`url` with its userinfo (``user:password@``) removed."""
    if not url or "@" not in url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url.rsplit("@", 1)[-1]
    if ":" in host:
        host = f"[{host}]"
    return parts._replace(netloc=f"{host}:{port}" if port else host).geturl()


@dataclass(frozen=True)
class Redactor:
    """Replaces every secret in text and data with ``[REDACTED]``."""

    secrets: tuple[str, ...] = ()
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        wanted = sorted({s for s in self.secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        object.__setattr__(self, "secrets", tuple(wanted))
        if wanted:
            object.__setattr__(self, "_pattern", re.compile("|".join(map(re.escape, wanted))))

    @classmethod
    def from_environment(cls, env: Mapping[str, str], *, names: Iterable[str] = (),
                         urls: Iterable[str | None] = ()) -> Redactor:
        """The secrets of `env` (key-like names, and `names`) and of the base URLs in `urls`."""
        chosen = {n for n in names if n} | {n for n in env if _KEY_LIKE.search(n)}
        values = [env[n] for n in chosen if env.get(n)]
        values += [p for p in map(url_password, urls) if p]
        return cls(tuple(values))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        """`value` with every secret replaced."""
        if self._pattern is None or not value:
            return value
        return self._pattern.sub(REDACTED, value)

    def data(self, value: Any) -> Any:
        """A copy of JSON-like `value` with every secret replaced, in keys and values."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value

    def model(self, value: M) -> M:
        """A pydantic result with every secret replaced (itself when there is nothing to hide)."""
        if self._pattern is None:
            return value
        updates = {}
        for name in type(value).model_fields:
            current = getattr(value, name)
            new = self._any(current)
            if new is not current:
                updates[name] = new
        return value.model_copy(update=updates) if updates else value

    def _any(self, value: Any) -> Any:
        """`value` redacted; the very same object when nothing in it changed."""
        if isinstance(value, BaseModel):
            return self.model(value)
        if isinstance(value, str):
            new = self.text(value)
            return value if new == value else new
        if isinstance(value, list):
            items = [self._any(v) for v in value]
            return value if all(a is b for a, b in zip(items, value)) else items
        if isinstance(value, dict):
            pairs = [(self._any(k), self._any(v)) for k, v in value.items()]
            same = all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items()))
            return value if same else dict(pairs)
        return value


def placeholder_names(env: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The variables among `names` that hold a value too short to be a secret."""
    return sorted(n for n in set(names) if n and env.get(n) and len(env[n]) < MIN_SECRET)
