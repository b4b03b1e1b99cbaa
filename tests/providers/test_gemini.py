"""The `gemini` provider, over a real loopback socket: its URL, its key header, its errors."""

from __future__ import annotations

import pytest

from replio_replay._runtime.redact import Redactor
from replio_replay.config import Env, ProjectConfig
from replio_replay.errors import ProviderAuthError, ProviderHTTPError
from replio_replay.providers.base import Exchange
from replio_replay.providers.gemini import GeminiProvider
from replio_replay.providers.registry import create_provider
from tests.providers.samples import first_turn, settings

KEY = "AIzaSy-test-0123456789abcdefghij"
OK = {"candidates": [{"content": {"role": "model", "parts": [
    {"functionCall": {"name": "file_read", "args": {"path": "a"}}, "thoughtSignature": "c2ln"},
    {"functionCall": {"name": "grep", "args": {"pattern": "port"}}}]}, "finishReason": "STOP"}],
    "usageMetadata": {"promptTokenCount": 80, "candidatesTokenCount": 12, "totalTokenCount": 92}}


def test_posts_to_generate_content_with_the_key_only_in_its_header(llm_server):
    p = GeminiProvider(settings("gemini", model="models/gemini-2.5-flash", base_url=llm_server.url + "/v1beta",
                                api_key=KEY, api_key_env="GEMINI_API_KEY"))
    llm_server.reply(json=OK)
    response = p.generate(first_turn(), Exchange("fx"))
    seen = llm_server.requests[0]
    assert seen.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert seen.headers["x-goog-api-key"] == KEY and "authorization" not in seen.headers
    assert KEY not in seen.path and KEY not in seen.body.decode()
    assert "model" not in seen.json()  # the model is in the URL
    assert [(c.id, c.name) for c in response.tool_calls] == [("call_0_0", "file_read"), ("call_0_1", "grep")]
    assert response.usage.tokens == 92
    p.close()


@pytest.mark.parametrize("variables", [{"GEMINI_API_KEY": KEY}, {"GOOGLE_API_KEY": KEY},
                                       {"GEMINI_API_KEY": KEY, "GOOGLE_API_KEY": "other-key-0123456789"}])
def test_the_key_comes_from_gemini_api_key_else_google_api_key(llm_server, variables):
    env = Env({"GEMINI_BASE_URL": llm_server.url + "/v1beta", **variables})
    p = create_provider("gemini", config=ProjectConfig(), env=env)
    assert (p.model, p.settings.api_key) == ("gemini-2.5-flash", KEY)
    llm_server.reply(json=OK)
    p.generate(first_turn(), Exchange("fx"))
    assert llm_server.requests[0].headers["x-goog-api-key"] == KEY
    p.close()


def test_a_rejected_key_names_the_variable_and_never_shows_the_key(llm_server):
    env = Env({"GEMINI_BASE_URL": f"{llm_server.url}/v1beta?key={KEY}", "GEMINI_API_KEY": KEY})
    p = create_provider("gemini:gemini-2.5-pro", config=ProjectConfig(), env=env)
    llm_server.reply(status=403, json={"error": {"code": 403, "message": "Method doesn't allow unregistered callers.",
                                                 "status": "PERMISSION_DENIED"}})
    with pytest.raises(ProviderAuthError) as info:
        p.generate(first_turn(), Exchange("fx"))
    assert "check that GEMINI_API_KEY holds a valid key" in str(info.value)
    assert "generateContent?key=" in str(info.value) and "REDACTED" in str(info.value)
    assert KEY not in str(info.value)
    llm_server.reply(status=400, json={"error": {"code": 400, "message": f"API key not valid: {KEY}",
                                                 "status": "INVALID_ARGUMENT"}})
    with pytest.raises(ProviderHTTPError) as info:
        p.generate(first_turn(), Exchange("fx", redactor=Redactor.from_environment({"GEMINI_API_KEY": KEY})))
    assert "HTTP 400" in str(info.value) and KEY not in str(info.value)
    p.close()
