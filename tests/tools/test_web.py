"""web_fetch: through the fixture's transport, over loopback only; failures are `Error:` results."""

from __future__ import annotations

import httpx
import pytest

from tests.support.llm_server import LLMServer
from tests.tools._tree import Run, Tree, make_runner


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)



def test_fetches_a_page(run: Run, llm_server: LLMServer) -> None:
    llm_server.reply(body=b"hello from the page")
    assert run("web_fetch", url=f"{llm_server.url}/docs?q=1") == "HTTP 200\nhello from the page"
    assert [(r.method, r.path) for r in llm_server.requests] == [("GET", "/docs?q=1")]


def test_an_http_error_status_is_reported_not_raised(run: Run, llm_server: LLMServer) -> None:
    llm_server.reply(status=404, body=b"no such page")
    assert run("web_fetch", url=f"{llm_server.url}/missing") == "HTTP 404\nno such page"


def test_the_body_is_capped(run: Run, llm_server: LLMServer) -> None:
    llm_server.reply(body=b"z" * 25_000)
    out = run("web_fetch", url=llm_server.url)
    assert out.endswith("\n(body cut at 20000 characters)")
    assert out.count("z") == 20_000


def test_it_sends_through_the_fixtures_transport(tree: Tree) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="from the transport")

    run = make_runner(tree, transport=httpx.MockTransport(handler))
    assert run("web_fetch", url="https://example.invalid/a") == "HTTP 200\nfrom the transport"
    assert seen == ["https://example.invalid/a"]


def test_a_refused_connection_is_an_error_result(run: Run, closed_port: int) -> None:
    out = run("web_fetch", url=f"http://127.0.0.1:{closed_port}/")
    assert out.startswith("Error: could not fetch http://127.0.0.1:")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "127.0.0.1/x", "../x"])
def test_only_http_urls(run: Run, url: str) -> None:
    assert run("web_fetch", url=url).startswith("Error: only http and https URLs can be fetched")


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/", "http://[::1", "http://127.0.0.1/\x00"])
def test_malformed_urls_are_error_results_not_exceptions(run: Run, url: str) -> None:
    assert run("web_fetch", url=url).startswith("Error: could not fetch")
