"""Sending a fixture's requests as one role (the agent, a simulated user, the judge): the provider
chosen for the role and the `generate` callable that sends through the fixture's session."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from .._runtime.redact import Redactor
from ..errors import ConfigError
from ..fixtures.cases import Case
from ..providers.base import ChatRequest, ChatResponse, Exchange, Provider
from ..recording.base import FixtureSession

__all__ = ["Generate", "chosen_provider", "role_sender", "sender"]

Generate = Callable[[ChatRequest], ChatResponse]


def chosen_provider(case: Case, field: str, spec: str | None, made: Mapping[str, Provider | str],
                    default: Provider) -> Provider:
    """The provider `spec` names (`made`: spec -> provider, or why it could not be made), or `default`
    without a spec; ConfigError naming the fixture and `field` when it could not be made."""
    if not spec:
        return default
    chosen = made.get(spec, default)
    if isinstance(chosen, str):
        raise ConfigError(f"fixture {case.fixture.id!r}: {field} {spec!r}: {chosen}")
    return chosen


def sender(case: Case, provider: Provider, exchange: Exchange) -> Generate:
    """One turn of `case` sent by `provider` through `exchange`, as the case's trial."""

    def generate(request: ChatRequest) -> ChatResponse:
        if case.trial != 1:
            request = dataclasses.replace(request, trial=case.trial)
        return provider.generate(request, exchange)

    return generate


def role_sender(case: Case, role: str, provider: Provider, session: FixtureSession, redactor: Redactor) -> Generate:
    """`sender` for the requests of `role` (not the agent's): through the transport `session` gives
    that role, so they are recorded in the fixture's cassette under it."""
    exchange = Exchange(case.fixture.id, session.transport_for(role, provider), redactor, role=role)
    return sender(case, provider, exchange)
