"""Which hosts a tool may reach over HTTP: not this machine, not the private network, not the
cloud metadata service, unless the config names them.

A model in a live run on a CI machine must not reach the services around it. Every request a
tool sends (redirects too) is checked before it leaves: the host, or every address its name
resolves to, must be public. The config's `web_allow` names hosts, addresses or networks
(`"127.0.0.1"`, `"docs.internal"`, `"10.0.0.0/8"`) that may be reached anyway.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

__all__ = ["forbidden_reason"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def forbidden_reason(host: str, allow: Iterable[str] = ()) -> str | None:
    """Why `host` may not be reached (None: it may): the kind of address it is, or resolves to."""
    host = host.strip("[]").lower().rstrip(".")
    allowed = [a.strip().lower() for a in allow]
    if host in allowed:
        return None
    for address in _addresses(host):
        if _allowed(address, allowed):
            continue
        kind = _kind(address)
        if kind is not None:
            return f"{host} is {kind} ({address})"
    return None


def _addresses(host: str) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    if host == "localhost" or host.endswith(".localhost"):
        return [ipaddress.ip_address("127.0.0.1")]
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return []  # a name that does not resolve is not a way in: the request fails by itself
    found = []
    for info in infos:
        try:
            found.append(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
        except ValueError:
            continue
    return found


def _allowed(address: IPAddress, allowed: list[str]) -> bool:
    for entry in allowed:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def _kind(address: IPAddress) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "this machine (a loopback address)"
    if address.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private or address.is_reserved:
        return "a private-network address"
    return None
