"""Whose request a recorded one is (the agent's, a simulated user's, a judge's), as vcrpy matches it.

One cassette holds every request of a fixture's conversation. A live request names its role in
the `providers.http.ROLE` extension; the cassette keeps it on the vcrpy request as the
`ROLE_HEADER` header (never sent to a server), the `same_role` matcher compares it, and the
readable serializer writes it as the request's ``role`` key, only when it is not `agent`: a
cassette recorded before roles reads and writes byte for byte as it did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AGENT", "JUDGE", "ROLE_HEADER", "dict_role", "role_of", "same_role", "stored", "unstored"]

#: The role of a request that names none: every cassette recorded before roles holds only these.
AGENT = "agent"
#: The role of an LLM judge's requests.
JUDGE = "judge"
#: Where a kept request holds its role in memory; never sent to a server, never written as a header.
ROLE_HEADER = "x-replio-role"


def role_of(request: Any) -> str:
    """Whose request a kept or live vcrpy request is: its `ROLE_HEADER`, else `agent`."""
    return str(request.headers.get(ROLE_HEADER, AGENT))


def same_role(r1: Any, r2: Any) -> None:
    """vcrpy matcher: both requests are the same role's; else AssertionError."""
    if role_of(r1) != role_of(r2):
        raise AssertionError(f"{r1!r} is the {role_of(r1)}'s request, the recorded one the {role_of(r2)}'s")


def dict_role(request: dict[str, Any]) -> str:
    """Whose request a vcrpy request dict (as a loaded cassette holds it) is: its `ROLE_HEADER`, else `agent`."""
    roles = [v for k, v in request.get("headers", {}).items() if k.lower() == ROLE_HEADER]
    return str(roles[0][0]) if roles and roles[0] else AGENT


def stored(request: dict[str, Any]) -> dict[str, Any]:
    """A vcrpy request dict as a cassette writes it: the role header out of `headers`, a `role`
    key first when it is not `agent`."""
    headers = {k: v for k, v in request.get("headers", {}).items() if k.lower() != ROLE_HEADER}
    role = dict_role(request)
    return {**({"role": role} if role != AGENT else {}), **request, "headers": headers}


def unstored(request: dict[str, Any], role: str) -> dict[str, Any]:
    """A checked request dict as vcrpy builds its request from: `role` in `headers` unless `agent`."""
    if role == AGENT:
        return request
    return {**request, "headers": {**request["headers"], ROLE_HEADER: [role]}}
