"""Secrets out of every output: the one redaction step, applied where results leave the process.

The secrets are the values of the environment's key-like variables (`*_API_KEY`, `*_TOKEN`,
`*_SECRET`, `*_PASSWORD`, and every variable a provider or an MCP server is configured to read
from), the credential alone of such a value written as an auth header's ``Scheme credential``
(``Bearer <token>``; a Basic one's password too), and the passwords and key-like query
parameters (`SECRET_QUERY`) in base URLs. A value under 8 characters is a placeholder a local server
needs (`OPENAI_API_KEY=x`), not a secret: it is neither redacted nor refused in a cassette.
Each secret is also looked for as a server may echo it: URL-encoded and JSON-escaped.
Results are redacted once, as a run ends, before anything is written: goldens, JSON, JUnit,
tables, the pytest plugin's reports and error messages all come from the redacted results.

Text cut short during a run (a quoted answer, an error body, a tool result in the trace) is cut
with `Redactor.cut` alone: it redacts the whole text first, so no cut can split a secret into a
prefix the final redaction no longer recognises, and it masks a secret's prefix left where it cut.
Text cut where no redactor is at hand (a tool's output capped for the model, pydantic showing a
long value's start and end around ``...``) can still hold a part of a secret: a start or an end
of one of `MIN_FRAGMENT` characters or more is redacted wherever it appears, so is refused in a
cassette too. Shorter parts are left: they would also match public prefixes (``sk-ant-api03-``).
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel

__all__ = [
    "MIN_FRAGMENT", "MIN_PREFIX", "MIN_SECRET", "NO_SECRETS", "REDACTED", "SECRET_QUERY", "Redactor", "placeholder_names",
    "shown_url", "url_secrets", "without_credentials",
]

REDACTED = "[REDACTED]"
#: Shorter values are placeholders, not secrets.
MIN_SECRET = 8
#: A secret's start this long where text is cut is taken for the secret itself; shorter ones
#: (``sk-``) say nothing about it.
MIN_PREFIX = 4
#: A secret's start or end this long is redacted anywhere.
MIN_FRAGMENT = 16

_KEY_LIKE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
#: An auth header's value: a scheme word, then the credential.
_SCHEME_CREDENTIAL = re.compile(r"([A-Za-z][\w.-]*) +(\S+)")
_PERCENT = re.compile(r"%[0-9A-F]{2}")

M = TypeVar("M", bound=BaseModel)


#: Query parameters whose values are secrets (compared lower-case).
SECRET_QUERY = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "secret"})


def url_secrets(url: str | None) -> list[str]:
    """The password (or lone user token) in a URL's userinfo and its key-like query values."""
    if not url:
        return []
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
    except ValueError:
        return []
    found = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() in SECRET_QUERY and v]
    credential = parts.password or parts.username if "@" in parts.netloc else None
    return [credential, *found] if credential else found


def shown_url(url: str, mark: str = REDACTED) -> str:
    """`url` fit to be shown or stored: no userinfo, and `mark` for each key-like query value."""
    url = without_credentials(url) or url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.query:
        return url
    query = [(k, mark if k.lower() in SECRET_QUERY else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query)))


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
    #: Every secret, and the first and last `MIN_FRAGMENT` characters of each long one: where
    #: one of these is found, `_spans` looks at what surrounds it.
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _every: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)  # overlapping too
    _secrets_of: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        long_enough = [s for s in self.secrets if len(s) >= MIN_SECRET]
        wanted = sorted({form for s in long_enough for form in _encoded(s)}, key=len, reverse=True)
        object.__setattr__(self, "secrets", tuple(wanted))
        for secret in wanted:
            self._secrets_of.setdefault(secret, []).append(secret)
            # A value with spaces (``Bearer <token>``) has its credential as a secret of its own.
            if len(secret) > MIN_FRAGMENT and len(secret.split()) == 1:
                for anchor in {secret[:MIN_FRAGMENT], secret[-MIN_FRAGMENT:]}:
                    self._secrets_of.setdefault(anchor, []).append(secret)
        if wanted:
            literals = "|".join(map(re.escape, sorted(self._secrets_of, key=len, reverse=True)))
            object.__setattr__(self, "_pattern", re.compile(literals))
            object.__setattr__(self, "_every", re.compile(f"(?=({literals}))"))

    @classmethod
    def from_environment(cls, env: Mapping[str, str], *, names: Iterable[str] = (),
                         urls: Iterable[str | None] = ()) -> Redactor:
        """The secrets of `env` (key-like names, and `names`) and of the base URLs in `urls`."""
        chosen = {n for n in names if n} | {n for n in env if _KEY_LIKE.search(n)}
        values = [part for n in chosen if env.get(n) for part in _with_credential(env[n])]
        values += [s for url in urls for s in url_secrets(url)]
        return cls(tuple(values))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        """`value` with every secret replaced."""
        if self._pattern is None or not value or self._pattern.search(value) is None:
            return value
        out, done = [], 0
        for start, end in self._spans(value):
            out += [value[done:start], REDACTED]
            done = end
        return "".join([*out, value[done:]])

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where `text` holds a secret or a long start or end of one, overlapping ones joined."""
        found = []
        for match in self._every.finditer(text) if self._every is not None else ():
            literal, at = match.group(1), match.start()
            for secret in self._secrets_of[literal]:
                if secret.startswith(literal):
                    found.append((at, at + len(os.path.commonprefix([text[at:at + len(secret)], secret]))))
                if secret.endswith(literal):
                    end = at + len(literal)
                    before = text[max(0, end - len(secret)):end]
                    found.append((end - len(os.path.commonprefix([before[::-1], secret[::-1]])), end))
        joined: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if joined and start < joined[-1][1]:
                joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
            else:
                joined.append((start, end))
        return joined

    def found(self, text: str) -> bool:
        """Whether `text` holds a secret, or a start or end of one (`MIN_FRAGMENT`)."""
        return self._pattern is not None and self._pattern.search(text) is not None

    def cut(self, text: str, limit: int, more: str = "...") -> str:
        """`text` redacted, then cut to `limit` characters followed by `more` (where ``{left}``
        stands for how many were left out); a ``[REDACTED]`` is never split, and a secret's start
        (`MIN_PREFIX` characters or more) where the text is cut is redacted as the secret."""
        text = self.text(text)
        if len(text) <= limit:
            return text
        for found in re.finditer(re.escape(REDACTED), text[: limit + len(REDACTED)]):
            if found.start() < limit < found.end():
                limit = found.end()
        kept = self._masked_tail(text[:limit])
        return kept + more.replace("{left}", str(len(text) - limit)) if limit < len(text) else kept

    def _masked_tail(self, kept: str) -> str:
        """`kept` with a trailing start of a secret replaced: what follows it was cut off."""
        for secret in self.secrets:
            for size in range(min(len(secret) - 1, len(kept)), MIN_PREFIX - 1, -1):
                if kept.endswith(secret[:size]):
                    return kept[:-size] + REDACTED
        return kept

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


def _encoded(secret: str) -> set[str]:
    """`secret` and the forms a server may echo it in: URL-encoded (a query, a form body, either
    case of hex digits) and JSON-escaped (``\\/`` too), where they differ from the secret."""
    quoted = {quote(secret, safe=""), quote_plus(secret)}
    quoted |= {_PERCENT.sub(lambda m: m.group().lower(), q) for q in quoted}
    escaped = json.dumps(secret)[1:-1]
    return {secret, *quoted, escaped, escaped.replace("/", "\\/")}


def _with_credential(value: str) -> list[str]:
    """`value`, and its credential when it is written as an auth header's ``Scheme credential``: a
    server that echoes ``<token>`` of ``Bearer <token>`` hands out the secret all the same."""
    found = _SCHEME_CREDENTIAL.fullmatch(value.strip())
    if found is None:
        return [value]
    scheme, credential = found.groups()
    if scheme.lower() != "basic":
        return [value, credential]
    try:
        password = base64.b64decode(credential, validate=True).decode("utf-8").partition(":")[2]
    except (ValueError, UnicodeDecodeError):
        password = ""
    return [value, credential, *filter(None, [password])]


#: The redactor of a run without secrets, and the default wherever text is cut.
NO_SECRETS = Redactor()


def placeholder_names(env: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The variables among `names` that hold a value too short to be a secret."""
    return sorted(n for n in set(names) if n and env.get(n) and len(env[n]) < MIN_SECRET)
