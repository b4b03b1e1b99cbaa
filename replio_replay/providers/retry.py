"""The retry policy of provider requests: which failures are retried, how long to wait, how often.

Only what another try can fix is retried: a dropped connection, a connect timeout, 429 and
502-504, and (except against a local server) a request that got no answer in time. The wait
is exponential backoff with jitter, or the server's ``Retry-After`` when it sends one (unless
it asks for longer than replio waits); a replayed response is retried without waiting. `with_retries` runs one attempt after another until one
returns, raises a final error, or the attempts run out.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import ProviderError
from .base import ProviderSettings

__all__ = [
    "BACKOFF_BASE",
    "BACKOFF_MAX",
    "RETRY_AFTER_MAX",
    "RETRY_STATUSES",
    "Backoff",
    "Retryable",
    "Sleep",
    "retry_after_seconds",
    "with_retries",
]

T = TypeVar("T")

#: First backoff delay in seconds (doubled per retry, with jitter). Tests make it tiny;
#: a provider's ``settings.options["backoff_base"]`` overrides it.
BACKOFF_BASE = 0.5
#: No single backoff delay is longer than this.
BACKOFF_MAX = 20.0
#: A ``Retry-After`` longer than this is not waited for: the call fails at once, saying so.
RETRY_AFTER_MAX = 60.0
#: Statuses worth another try: rate limited, a gateway that could not reach the model, and
#: Anthropic's "overloaded" (529).
#: Other errors (a 500 saying the context is too large, a 400) would only fail again.
RETRY_STATUSES = frozenset({429, 502, 503, 504, 529})

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class Backoff:
    """How often and how long to wait between attempts."""

    retries: int = 3
    base: float = BACKOFF_BASE
    cap: float = BACKOFF_MAX
    retry_after_max: float = RETRY_AFTER_MAX
    #: Whether a request that got no answer in time is sent again. Not against a server on the
    #: same machine: it is still working on the first one, and a second only adds load.
    read_timeouts: bool = True

    @classmethod
    def from_settings(cls, settings: ProviderSettings, *, read_timeouts: bool = True) -> Backoff:
        """``settings.retries``; base delay ``options["backoff_base"]``, else `BACKOFF_BASE`."""
        return cls(
            retries=max(0, settings.retries),
            base=float(settings.options.get("backoff_base", BACKOFF_BASE)),
            cap=BACKOFF_MAX,
            retry_after_max=RETRY_AFTER_MAX,
            read_timeouts=read_timeouts,
        )

    def delay(self, attempt: int, rand: float) -> float:
        """Exponential backoff with jitter: in [d/2, d] for d = base * 2**attempt, capped."""
        ceiling = min(self.cap, self.base * (2**attempt))
        return ceiling / 2 + ceiling / 2 * rand


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


class Retryable(Exception):
    """One attempt failed in a way another attempt may cure; `final` is the error if none does."""

    def __init__(self, final: Callable[[str], ProviderError], wait: float | None = None) -> None:
        super().__init__()
        self.final = final
        self.wait = wait


def with_retries(
    attempt: Callable[[], T],
    backoff: Backoff,
    *,
    sleep: Sleep = time.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """`attempt()` until it returns; a `Retryable` failure is tried again after a wait.

    When the attempts run out, the last failure's final error is raised, saying how many
    attempts were made.
    """
    attempts = backoff.retries + 1
    for number in range(attempts):
        try:
            return attempt()
        except Retryable as failed:
            if number == attempts - 1:
                tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
                raise failed.final(tries) from None
            sleep(failed.wait if failed.wait is not None else backoff.delay(number, rand()))
    raise AssertionError("unreachable: the last attempt returns or raises")
