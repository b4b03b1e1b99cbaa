"""`--max-cost`: a live run's cost estimated before it starts, and the money it spends as it goes.

The estimate prices what each fixture will send to a provider now (under `--rejudge` its judge's
requests alone) by the token usage of its last recording's answers, and a fixture with no
recording at the mean of those with one; with no recording at all there is nothing to estimate
from, and only the spending is watched.

During the run, each answer that comes from a provider (never one a cassette replays) is priced
as it arrives, by the model that gave it (`Meter`). Once the spending reaches the limit, no new
live fixture starts: those not started end `cancelled` with `not run: --max-cost ... reached`;
the ones in flight finish and are kept. An answer whose cost cannot be counted (it gives no
prompt and completion token counts, `Usage.counted`) stops its fixture there, `cancelled` and
nothing of it recorded, and no new live fixture starts: spending that is not counted is not capped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import httpx

from .._runtime.wording import plural
from ..errors import ProviderResponseError, ReplioError
from ..prices import Price, cost, dollars
from ..providers.base import Provider, Usage
from ..providers.http import ROLE, HTTPProvider

__all__ = ["Budget", "Estimate", "Meter", "estimate", "role_name"]


@dataclass(frozen=True)
class Estimate:
    """What the live part of a run should cost: `usd` over `recorded` fixtures priced from their
    recordings and `unrecorded` ones priced at their mean (None: nothing recorded to go by)."""

    usd: float | None
    recorded: int
    unrecorded: int

    def describe(self) -> str:
        """How the figure was reached, for the messages that give it."""
        if self.usd is None:
            return f"{plural(self.unrecorded, 'fixture')} to record, none recorded before: no estimate"
        how = f"{plural(self.recorded, 'fixture')} priced by the token usage of their last recording"
        if self.unrecorded:
            how += f", {self.unrecorded} without a recording priced at their mean"
        return f"${dollars(self.usd)} ({how})"


def estimate(costs: Sequence[float | None]) -> Estimate:
    """The estimate from each live fixture's recorded cost (None: it has no recording to go by)."""
    known = [c for c in costs if c is not None]
    unrecorded = len(costs) - len(known)
    if not known:
        return Estimate(None if costs else 0.0, 0, unrecorded)
    return Estimate(round(sum(known) + unrecorded * sum(known) / len(known), 6), len(known), unrecorded)


@dataclass
class Budget:
    """The money a run may spend (`limit`, USD) and has spent, on the cases in `live` — (run label,
    fixture id, trial) — shared by every run of a plan and each of its worker threads. `uncounted`
    is the fixture an answer to which could not be counted, once there is one."""

    limit: float
    live: set[tuple[str, str, int]]
    spent: float = 0.0
    uncounted: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_live(self, cases: Iterable[tuple[str, str, int]]) -> None:
        """Count these cases as sent to a provider too (`--record-mode stale` records some again)."""
        with self._lock:
            self.live.update(cases)

    def stops(self, label: str, fixture_id: str, trial: int) -> bool:
        """Whether this case may not start: it would be sent to a provider, and the limit is reached
        or the spending is no longer counted."""
        with self._lock:
            spent = self.spent >= self.limit or self.uncounted is not None
            return spent and (label, fixture_id, trial) in self.live

    def spend(self, usd: float) -> None:
        """Count what one live answer cost."""
        with self._lock:
            self.spent = round(self.spent + usd, 6)

    def refuse(self, fixture_id: str) -> None:
        """The cost of an answer to fixture `fixture_id` could not be counted: no new live case starts."""
        with self._lock:
            self.uncounted = self.uncounted or fixture_id

    def reason(self) -> str:
        """Why a case was not run."""
        if self.uncounted is not None:
            return (f"--max-cost {dollars(self.limit)}: the cost of an answer to fixture {self.uncounted!r} could not "
                    "be counted (its error says why), so no more is recorded")
        return f"--max-cost {dollars(self.limit)} reached (${dollars(self.spent)} spent)"


class Meter:
    """One fixture's live answers, each priced (`price` of the provider that gave it) and charged to
    `budget` as it arrives: `watch` is the session's `Watch`. Once an answer's cost cannot be
    counted, `refused` says why, `uncounted` holds whose answer it was, and the fixture sends
    nothing more."""

    def __init__(self, budget: Budget, fixture_id: str, price: Callable[[Provider], Price | None]) -> None:
        self.budget = budget
        self.fixture_id = fixture_id
        self.price = price
        self.refused: str | None = None
        self.uncounted: set[str] = set()

    def watch(self, provider: Provider, transport: httpx.BaseTransport | None) -> httpx.BaseTransport | None:
        """`transport`, `provider`'s live connection, with each answer it brings charged."""
        if transport is None or not isinstance(provider, HTTPProvider):
            return transport  # it sends nothing over HTTP (the mock): it spends nothing
        return _Metered(transport, self, provider)

    def charge(self, provider: HTTPProvider, request: httpx.Request, body: bytes, content_type: str | None) -> None:
        """Charge the answer `body` that `provider`'s server gave to `request`; ProviderResponseError
        (the fixture stops) when what it cost cannot be counted."""
        role = str(request.extensions.get(ROLE, "agent"))
        model = f"{provider.settings.name}:{provider.model}"
        price = self.price(provider)
        whose = role_name(role)
        try:
            usage = provider.answer_usage(str(request.url), body, content_type)
        except ReplioError as exc:
            what = f"the {whose}'s answer from {model} could not be read ({exc})"
        else:
            if price is not None and usage.counted:
                self.budget.spend(cost(price, usage.prompt or 0, usage.completion or 0, usage.cached or 0))
                return
            what = f"{model} (the {whose}) has no price" if price is None \
                else f"the {whose}'s answer from {model} {uncounted_why(usage)}"
        self.uncounted.add(role)  # what it spent, answered but not charged, is unknown
        self.refused = (f"fixture {self.fixture_id!r}: {what}, so what it cost cannot be counted under --max-cost: "
                        "the recording stopped (without --max-cost it records, its cost unknown)")
        self.budget.refuse(self.fixture_id)
        raise ProviderResponseError(self.refused)


def role_name(role: str) -> str:
    """A role (`agent`, `user`, `judge`) as messages about its spending name it."""
    return "simulated user" if role == "user" else role


def uncounted_why(usage: Usage) -> str:
    """Why an answer's cost cannot be counted from `usage`, which is not `counted`."""
    if usage.prompt is None and usage.completion is None:
        if usage.total is not None:
            return "gave only a total token count, not its prompt and completion tokens"
        return "gave no prompt and completion token counts"
    missing = "prompt" if usage.prompt is None else "completion"
    return f"gave no {missing} token count as a whole number"


#: Response headers that no longer apply once the body is read (decoded, whole).
_READ_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class _Metered(httpx.BaseTransport):
    """A live connection whose successful answers `meter` charges before they are handed on."""

    def __init__(self, inner: httpx.BaseTransport, meter: Meter, provider: HTTPProvider) -> None:
        self.inner = inner
        self.meter = meter
        self.provider = provider

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.meter.refused is not None:
            raise ProviderResponseError(self.meter.refused)
        response = self.inner.handle_request(request)
        if not 200 <= response.status_code < 300:
            return response
        try:
            body = response.read()
        finally:
            response.close()
        self.meter.charge(self.provider, request, body, response.headers.get("content-type"))
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _READ_HEADERS]
        return httpx.Response(response.status_code, headers=headers, content=body, request=request,
                              extensions=response.extensions)

    def close(self) -> None:
        """The inner connection is the run's: it is not closed here."""
