"""Resolving a provider: flags > environment > .replio/config.json > defaults; keys only from the environment."""

from __future__ import annotations

import json

import pytest

from replio_replay.config import Env, ProjectConfig, load_project_config
from replio_replay.errors import ConfigError, UnknownProviderError
from replio_replay.providers import PROVIDERS, provider_class
from replio_replay.providers.anthropic import AnthropicProvider
from replio_replay.providers.base import Exchange
from replio_replay.providers.gemini import GeminiProvider
from replio_replay.providers.ollama import OllamaProvider
from replio_replay.providers.openai import LlamaCppProvider, OpenAIProvider
from replio_replay.providers.registry import create_provider
from replio_replay.providers.responses import ResponsesProvider
from tests.providers.samples import first_turn, schema_request

OK = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}


def write_config(tmp_path, data) -> ProjectConfig:
    (tmp_path / ".replio").mkdir(exist_ok=True)
    (tmp_path / ".replio" / "config.json").write_text(json.dumps(data))
    return load_project_config(tmp_path)


def test_every_registered_http_provider_imports_and_has_its_settings():
    assert provider_class("openai") is OpenAIProvider
    assert provider_class("llamacpp") is LlamaCppProvider
    assert provider_class("anthropic") is AnthropicProvider
    assert provider_class("ollama") is OllamaProvider
    assert set(PROVIDERS) >= {"openai", "llamacpp", "anthropic", "ollama", "mock"}
    assert (OpenAIProvider.base_url_env, OpenAIProvider.api_key_env) == (
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    )
    assert (AnthropicProvider.base_url_env, AnthropicProvider.api_key_env) == (
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
    )
    assert OllamaProvider.base_url_env == "OLLAMA_HOST"


def test_base_url_flag_beats_environment_beats_config_beats_default(tmp_path):
    config = write_config(
        tmp_path, {"providers": {"openai": {"base_url": "http://config.test/v1"}}}
    )
    env = Env({"OPENAI_BASE_URL": "http://env.test/v1"})
    assert create_provider(
        "openai", config=config, env=env, base_url="http://flag.test/v1"
    ).base_url == ("http://flag.test/v1")
    assert create_provider("openai", config=config, env=env).base_url == "http://env.test/v1"
    assert create_provider("openai", config=config, env=Env({})).base_url == "http://config.test/v1"
    assert (
        create_provider("openai", config=ProjectConfig(), env=Env({})).base_url
        == "https://api.openai.com/v1"
    )


def test_model_from_flag_spec_config_then_default(tmp_path):
    config = write_config(
        tmp_path, {"provider": "openai", "providers": {"openai": {"model": "from-config"}}}
    )
    env = Env({})
    assert create_provider(None, config=config, env=env).model == "from-config"
    assert create_provider("openai:from-spec", config=config, env=env).model == "from-spec"
    assert (
        create_provider("openai:from-spec", config=config, env=env, model="from-flag").model
        == "from-flag"
    )
    assert create_provider("openai", config=ProjectConfig(), env=env).model == "gpt-4o-mini"


def test_the_key_is_read_from_the_variable_the_config_names(tmp_path, llm_server):
    config = write_config(
        tmp_path,
        {
            "providers": {
                "openai": {"base_url": llm_server.url + "/v1", "api_key_env": "MY_GATEWAY_KEY"}
            }
        },
    )
    p = create_provider(
        "openai:m", config=config, env=Env({"MY_GATEWAY_KEY": "gw-123", "OPENAI_API_KEY": "no"})
    )
    assert p.settings.api_key_env == "MY_GATEWAY_KEY"
    llm_server.reply(json=OK)
    p.generate(first_turn(), Exchange("fx"))
    assert llm_server.requests[0].headers["authorization"] == "Bearer gw-123"
    p.close()


def test_the_config_file_may_not_hold_a_key(tmp_path):
    with pytest.raises(ConfigError, match=r"providers\.openai\.api_key: unknown key"):
        write_config(tmp_path, {"providers": {"openai": {"api_key": "sk-oops"}}})


@pytest.mark.parametrize(("name", "seconds"), [("llamacpp", 300), ("ollama", 300), ("openai", 60), ("anthropic", 60)])
def test_a_local_preset_waits_as_long_as_a_cpu_served_model_needs(name, seconds, tmp_path):
    """A model on this machine's CPU can take minutes to prefill a new system prompt; a config's
    `timeout` still beats the default."""
    spec = f"{name}:m"
    assert create_provider(spec, config=ProjectConfig(), env=Env({})).settings.timeout == seconds
    config = write_config(tmp_path, {"providers": {name: {"timeout": 12.5}}})
    assert create_provider(spec, config=config, env=Env({})).settings.timeout == 12.5


def test_sampling_retries_and_timeout_from_the_config_reach_the_request(tmp_path, llm_server):
    config = write_config(
        tmp_path,
        {
            "providers": {
                "ollama": {
                    "model": "qwen-test",
                    "base_url": llm_server.url,
                    "temperature": 0.7,
                    "seed": 42,
                    "max_tokens": 99,
                    "timeout": 12.5,
                    "retries": 0,
                }
            }
        },
    )
    p = create_provider("ollama", config=config, env=Env({}))
    assert (p.settings.timeout, p.settings.retries) == (12.5, 0)
    llm_server.reply(status=503, json={"error": "boom"})
    with pytest.raises(Exception, match=r"\(1 attempt\)"):
        p.generate(first_turn(), Exchange("fx"))
    assert llm_server.requests[0].json()["options"] == {
        "temperature": 0.7,
        "seed": 42,
        "num_predict": 99,
    }
    p.close()


def test_a_bad_base_url_from_the_environment_is_a_config_error():
    with pytest.raises(
        ConfigError,
        match=r"set it with --base-url, ANTHROPIC_BASE_URL or providers\.anthropic\.base_url",
    ):
        create_provider(
            "anthropic",
            config=ProjectConfig(),
            env=Env({"ANTHROPIC_BASE_URL": "api.anthropic.com"}),
        )


def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(UnknownProviderError) as info:
        create_provider("bard:pro", config=ProjectConfig(), env=Env({}))
    assert "anthropic, gemini, llamacpp, mock, ollama, openai, openai-responses" in str(info.value)
    assert "--provider NAME[:MODEL]" in str(info.value)


@pytest.mark.parametrize("spec", ["olama", "olama:qwen2.5", "openia"])
def test_an_unknown_provider_suggests_the_nearest(spec: str) -> None:
    with pytest.raises(UnknownProviderError) as info:
        create_provider(spec, config=ProjectConfig(), env=Env({}))
    near = "ollama" if spec.startswith("olama") else "openai"
    assert f"did you mean {near!r}? known providers: anthropic, gemini, llamacpp, mock, ollama, openai, openai-responses" in str(info.value)


def test_a_provider_named_in_the_config_is_checked_too(tmp_path):
    config = write_config(tmp_path, {"provider": "olama"})
    with pytest.raises(UnknownProviderError, match=r"unknown provider 'olama'; did you mean 'ollama'\?"):
        create_provider(None, config=config, env=Env({}))


def test_an_unknown_name_in_the_providers_table_is_a_config_error(tmp_path):
    config = write_config(tmp_path, {"provider": "openai", "providers": {"olama": {"model": "qwen"}}})
    with pytest.raises(ConfigError) as info:
        create_provider(None, config=config, env=Env({}))
    assert str(info.value) == (".replio/config.json: providers: unknown provider 'olama'; did you mean 'ollama'? "
                               "known providers: anthropic, gemini, llamacpp, mock, ollama, openai, openai-responses")


def test_openai_responses_and_gemini_read_their_variables_and_the_base_url_flag_beats_them():
    assert provider_class("openai-responses") is ResponsesProvider and provider_class("gemini") is GeminiProvider
    assert (ResponsesProvider.base_url_env, ResponsesProvider.api_key_env) == ("OPENAI_BASE_URL", "OPENAI_API_KEY")
    env = Env({"OPENAI_BASE_URL": "http://env.test/v1", "GEMINI_BASE_URL": "http://env.test/v1beta",
               "GOOGLE_API_KEY": "g-key-0123456789"})
    responses = create_provider("openai-responses:m", config=ProjectConfig(), env=env)
    assert responses.url == "http://env.test/v1/responses"
    gemini = create_provider("gemini:gemini-2.5-pro", config=ProjectConfig(), env=env)
    assert gemini.url == "http://env.test/v1beta/models/gemini-2.5-pro:generateContent"
    assert (gemini.settings.api_key, gemini.settings.api_key_env) == ("g-key-0123456789", "GOOGLE_API_KEY")
    flagged = create_provider("gemini:m", config=ProjectConfig(), env=env, base_url="http://flag.test/v1beta")
    assert flagged.url == "http://flag.test/v1beta/models/m:generateContent"
    assert create_provider("gemini", config=ProjectConfig(), env=Env({})).url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent")


def test_a_null_temperature_or_seed_in_the_config_sends_none(tmp_path, llm_server):
    config = write_config(tmp_path, {"providers": {"openai-responses": {"temperature": None, "seed": None},
                                                   "gemini": {"temperature": None}}})
    env = Env({"OPENAI_BASE_URL": llm_server.url + "/v1"})
    p = create_provider("openai-responses:o4-mini", config=config, env=env)
    assert (p.settings.temperature, p.settings.seed) == (None, None)
    llm_server.reply(json={"output": [], "status": "completed"})
    p.generate(first_turn(), Exchange("fx"))
    assert "temperature" not in llm_server.requests[0].json()
    p.close()
    gemini = create_provider("gemini:m", config=config, env=Env({}))
    assert gemini.settings.temperature is None and gemini.settings.seed == 0
    assert create_provider("openai-responses", config=ProjectConfig(), env=Env({})).settings.temperature == 0.0


def test_structured_output_is_on_but_for_the_llamacpp_preset_and_the_config_turns_it_either_way(tmp_path, llm_server):
    """llama.cpp's judges were recorded with JSON mode; a project may ask it for the schema, and
    turn it off for a compatible server that refuses one."""
    defaults = {name: create_provider(f"{name}:m", config=ProjectConfig(), env=Env({})).settings.structured_output
                for name in ("openai", "llamacpp", "anthropic", "gemini", "ollama", "openai-responses")}
    assert defaults == {"openai": True, "llamacpp": False, "anthropic": True, "gemini": True, "ollama": True,
                        "openai-responses": True}
    config = write_config(tmp_path, {"providers": {"llamacpp": {"structured_output": True, "base_url": llm_server.url},
                                                   "openai": {"structured_output": False}}})
    assert not create_provider("openai:m", config=config, env=Env({})).settings.structured_output
    llamacpp = create_provider("llamacpp:m", config=config, env=Env({}))
    llm_server.reply(json=OK)
    llamacpp.generate(schema_request(), Exchange("fx"))
    assert llm_server.requests[0].json()["response_format"]["type"] == "json_schema"
    llamacpp.close()
    with pytest.raises(ConfigError, match=r"providers\.openai\.structured_output"):
        write_config(tmp_path, {"providers": {"openai": {"structured_output": "yes"}}})
