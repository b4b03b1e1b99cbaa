"""The web tool: `web_fetch`, an HTTP GET through the fixture's own transport (so it is recorded too)."""

from __future__ import annotations

from pydantic import Field

from .base import Params, Tool, ToolContext, ToolFailure, model_tool
from .permissions import Category

__all__ = ["web_tools"]

_BODY_CAP = 20_000


class FetchParams(Params):
    url: str = Field(description="The http or https URL to fetch.")


def web_fetch(p: FetchParams, ctx: ToolContext) -> str:
    import httpx

    if not p.url.startswith(("http://", "https://")):
        raise ToolFailure(f"only http and https URLs can be fetched, not {p.url!r}")
    try:
        response = ctx.http.get(p.url)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:  # ValueError: a bad IDNA host
        raise ToolFailure(f"could not fetch {p.url}: {exc}") from None
    text = response.text
    if len(text) > _BODY_CAP:
        text = text[:_BODY_CAP] + f"\n(body cut at {_BODY_CAP} characters)"
    return f"HTTP {response.status_code}\n{text}"


def web_tools() -> tuple[Tool, ...]:
    """The tools of this family, as offered by default."""
    return (
        model_tool("web_fetch", "Fetch a web page by URL and return its text.", Category.WEB, FetchParams, web_fetch),
    )
