"""web_fetch: through the fixture's transport; this machine and private networks only when allowed;
failures are `Error:` results."""

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


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/", "http://localhost/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/",
    "http://10.1.2.3/", "http://192.168.0.1/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/",
])
def test_this_machine_and_private_networks_are_refused(tree: Tree, url: str) -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(200, text="internal secrets")

    out = make_runner(tree, transport=httpx.MockTransport(handler))("web_fetch", url=url)
    assert out.startswith(f"Error: refused to fetch {url}")
    assert "web_allow" in out
    assert sent == []


def test_a_redirect_to_a_private_address_is_refused(tree: Tree) -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(302, headers={"location": "http://169.254.169.254/latest/meta-data/"})

    out = make_runner(tree, transport=httpx.MockTransport(handler))("web_fetch", url="http://93.184.215.14/start")
    assert out.startswith("Error: refused to fetch http://169.254.169.254/latest/meta-data/")
    assert sent == ["http://93.184.215.14/start"]


@pytest.mark.parametrize("allow", [("10.1.2.3",), ("10.0.0.0/8",), ("internal.example",)])
def test_the_config_may_allow_a_private_host_by_name(tree: Tree, allow: tuple[str, ...],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("socket.getaddrinfo", lambda host, port: [(2, 1, 6, "", ("10.1.2.3", 0))])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="ok")

    host = "internal.example" if "internal.example" in allow else "10.1.2.3"
    run = make_runner(tree, transport=httpx.MockTransport(handler), web_allow=allow)
    assert run("web_fetch", url=f"http://{host}/") == "HTTP 200\nok"


def test_a_name_resolving_to_a_private_address_is_refused(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("socket.getaddrinfo", lambda host, port: [(2, 1, 6, "", ("10.9.9.9", 0))])
    out = make_runner(tree, transport=httpx.MockTransport(lambda r: httpx.Response(200)))(
        "web_fetch", url="http://sneaky.example/")
    assert out.startswith("Error: refused to fetch http://sneaky.example/: sneaky.example is a private-network")
