"""Secrets out of every output: the one redaction step, applied where results leave the process.

The secrets are the values of the environment's key-like variables (`*_API_KEY`, `*_TOKEN`,
`*_SECRET`, `*_PASSWORD`, and every variable a provider or an MCP server is configured to read
from), the credential alone of such a value written as an auth header's ``Scheme credential``
(``Bearer <token>``; a Basic one's password too), and the passwords and key-like query
parameters (`SECRET_QUERY`) in base URLs. A value under 8 characters is a placeholder a local server
needs (`OPENAI_API_KEY=x`), not a secret: it is neither redacted nor refused in a cassette.
Each secret is also looked for in every spelling a server, a tool or a model may write it in
(`spellings`): URL-encoded, JSON-escaped, every byte percent-encoded or every character
``\\u``-escaped (escapes' hex digits in any case), as standard or URL-safe base64 from any byte offset (a
match redacts the whole base64 token around it), as hex in either case, and as its UTF-16 or UTF-32
bytes read one per character; bytes (a cassette's body) are read in every encoding JSON may use.
Results are redacted once, as a run ends, before anything is written: goldens, JSON, JUnit,
HTML, Markdown, tables, the pytest plugin's reports and error messages all come from the redacted
results (and a progress line, shown while the run goes on, from its fixture's result redacted).

Text cut short during a run (a quoted answer, an error body, a tool result in the trace) is cut
with `Redactor.cut` alone: it redacts the whole text first, so no cut can split a secret into a
prefix the final redaction no longer recognises, and it masks a secret's prefix left where it cut.
Text cut where no redactor is at hand (a tool's output capped for the model, pydantic showing a
long value's start and end around ``...``) can still hold a part of a secret: a start or an end
of one of `MIN_FRAGMENT` characters or more is redacted wherever it appears, so is refused in a
cassette too. Shorter parts are left: they would also match public prefixes (``sk-ant-api03-``).

Lengths count the secret's characters in every spelling, never the spelling's: a start or an end
is its first or last `MIN_FRAGMENT` characters spelled (of an ASCII secret: 20 or 21 characters of
base64, 32 of hex), and a start at a cut its first `MIN_PREFIX` characters spelled. So no spelling
makes a shorter part of a secret count, and a public prefix is as safe in base64 as written out.
The shortest base64 looked for is the core of a secret of `MIN_SECRET` characters: 10 characters,
60 of its 64 bits, at each of the three offsets.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel

from .spellings import SPELLINGS, base64_token, escapes_upper, readings

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
class _Form:
    """A secret as one spelling writes it."""

    text: str
    #: Its start this long (the secret's first `MIN_PREFIX` characters, spelled) where text is cut is a secret.
    least: int
    #: A match stands for the whole base64 token around it.
    base64: bool


@dataclass(frozen=True)
class Redactor:
    """Replaces every secret, in every spelling, in text and data with ``[REDACTED]``."""

    #: The secrets (those of `MIN_SECRET` characters or more), longest first.
    secrets: tuple[str, ...] = ()
    #: Every spelling of every secret, longest first.
    _forms: tuple[_Form, ...] = field(default=(), init=False, repr=False, compare=False)
    #: Each text looked for (a form, or a form's spelled first or last `MIN_FRAGMENT` characters of
    #: the secret) and the forms it starts or ends: where it is found, `_spans` looks around it.
    _forms_of: dict[str, list[_Form]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _every: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)  # overlapping too
    #: Something looked for has no character below U+0100 (a password in CJK, say): see `readings`.
    _wide_only: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        secrets = sorted({s for s in self.secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        forms: dict[str, _Form] = {}
        owners: dict[str, set[str]] = {}  # each text looked for -> the forms it starts or ends
        for secret in secrets:
            for form, fragments in _spelled(secret):
                known = forms.get(form.text, form)  # two spellings may agree (a key with nothing to escape)
                forms[form.text] = _Form(form.text, min(form.least, known.least), form.base64 or known.base64)
                for literal in (form.text, *fragments):
                    owners.setdefault(literal, set()).add(form.text)
        object.__setattr__(self, "secrets", tuple(secrets))
        object.__setattr__(self, "_forms", tuple(sorted(forms.values(), key=lambda f: len(f.text), reverse=True)))
        self._forms_of.update({literal: [forms[t] for t in sorted(texts)] for literal, texts in owners.items()})
        object.__setattr__(self, "_wide_only", any(min(literal) >= "\u0100" for literal in owners))
        if forms:
            literals = _alternatives(owners)
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
        if self._pattern is None or not value:
            return value
        upper = escapes_upper(value)  # ``%6b`` is ``%6B``: see `spellings`
        if self._pattern.search(value) is None and (upper is value or self._pattern.search(upper) is None):
            return value
        out, done = [], 0
        for start, end in self._spans(value, upper):
            out += [value[done:start], REDACTED]
            done = end
        return "".join([*out, value[done:]])

    def _spans(self, original: str, upper: str) -> list[tuple[int, int]]:
        """Where `original` (or `upper`, it with its escapes in upper case) holds a secret or a long
        start or end of one (the whole base64 token around one spelled in base64), overlapping ones joined."""
        found = []
        for text in (original, upper) if upper is not original else (original,):
            found += self._found_in(text)
        joined: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if joined and start < joined[-1][1]:
                joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
            else:
                joined.append((start, end))
        return joined

    def _found_in(self, text: str) -> list[tuple[int, int]]:
        found = []
        for match in self._every.finditer(text) if self._every is not None else ():
            literal, at = match.group(1), match.start()
            for form in self._forms_of[literal]:
                spans = []
                if form.text.startswith(literal):
                    spans.append((at, at + len(os.path.commonprefix([text[at:at + len(form.text)], form.text]))))
                if form.text.endswith(literal):
                    end = at + len(literal)
                    before = text[max(0, end - len(form.text)):end]
                    spans.append((end - len(os.path.commonprefix([before[::-1], form.text[::-1]])), end))
                found += [base64_token(text, *span) if form.base64 else span for span in spans]
        return found

    def found(self, value: str | bytes) -> bool:
        """Whether `value` holds a secret, or a start or end of one (`MIN_FRAGMENT`), in any
        spelling; bytes in any encoding JSON may use (their `readings`)."""
        if self._pattern is None:
            return False
        texts = readings(value, wide_only=self._wide_only) if isinstance(value, bytes) else [value]
        return any(self._pattern.search(text) is not None or self._pattern.search(escapes_upper(text)) is not None
                   for text in texts)

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
        """`kept` with a trailing start of a secret (in any spelling; in base64, from the token's
        start) replaced: what follows it was cut off."""
        if not kept:
            return kept
        for probe in dict.fromkeys((kept, escapes_upper(kept))):  # its escapes as they are, and in upper case
            for form in self._forms:
                # the starts of the form that end in the probe's last character, longest first
                size = form.text.rfind(probe[-1], 0, len(form.text) - 1) + 1
                while size >= form.least:
                    if probe.endswith(form.text[:size]):
                        start = len(kept) - size
                        return kept[:base64_token(kept, start, start)[0] if form.base64 else start] + REDACTED
                    size = form.text.rfind(probe[-1], 0, size - 1) + 1
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


def _spelled(secret: str) -> Iterator[tuple[_Form, tuple[str, ...]]]:
    """`secret` in each spelling, each with the spelling of its first and last `MIN_FRAGMENT`
    characters (none for a short secret, or one with spaces: ``Bearer <token>`` starts with a
    public word, and its credential is a secret of its own)."""
    fragmented = len(secret) > MIN_FRAGMENT and len(secret.split()) == 1
    head, tail = secret[:MIN_FRAGMENT], secret[-MIN_FRAGMENT:]
    tail_at = len(secret[:-MIN_FRAGMENT].encode("utf-8"))
    for spelling in SPELLINGS:
        form = _Form(spelling.write(secret, 0), len(spelling.write(secret[:MIN_PREFIX], 0)), spelling.base64)
        yield form, (spelling.write(head, 0), spelling.write(tail, tail_at)) if fragmented else ()


def _alternatives(literals: Iterable[str]) -> str:
    """A regular expression matching any of `literals`, as a trie: at each position the search
    follows one branch per character instead of trying every literal in turn."""
    trie: dict[str, Any] = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branches(trie)


def _branches(node: dict[str, Any]) -> str:
    """The expression of a trie's node: a run of single characters, then its branches (optional
    where a literal ends there)."""
    run = ""
    while len(node) == 1 and "" not in node:  # one way on: no group needed
        char, node = next(iter(node.items()))
        run += re.escape(char)
    parts = [re.escape(char) + _branches(child) for char, child in sorted(node.items()) if char]
    if not parts:
        return run
    body = parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"
    return run + (f"(?:{body})?" if "" in node else body)


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
