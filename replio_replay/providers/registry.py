"""Which providers exist and how a spec plus settings becomes a ready `Provider`."""

from __future__ import annotations

import importlib
from typing import Any

from .._runtime.wording import did_you_mean
from ..config import CONFIG_FILE, Env, ProjectConfig, ProviderConfig, parse_spec
from ..errors import ConfigError, UnknownProviderError
from .base import Provider, ProviderSettings

__all__ = ["PROVIDERS", "create_provider", "provider_class"]

#: name -> "module:Class", imported only when used (keeps start-up fast).
PROVIDERS: dict[str, str] = {
    "anthropic": "replio_replay.providers.anthropic:AnthropicProvider",
    "gemini": "replio_replay.providers.gemini:GeminiProvider",
    "llamacpp": "replio_replay.providers.openai:LlamaCppProvider",
    "mock": "replio_replay.providers.mock:MockProvider",
    "ollama": "replio_replay.providers.ollama:OllamaProvider",
    "openai": "replio_replay.providers.openai:OpenAIProvider",
    "openai-responses": "replio_replay.providers.responses:ResponsesProvider",
}

_HOW = "name one with --provider NAME[:MODEL] or set \"provider\" in .replio/config.json"


def provider_class(name: str) -> type[Provider]:
    """The class registered under `name`; UnknownProviderError lists the known ones."""
    target = PROVIDERS.get(name)
    if target is None:
        raise UnknownProviderError(f"unknown provider {name!r}; {_known(name)}; {_HOW}")
    module, _, attr = target.partition(":")
    cls: type[Provider] = getattr(importlib.import_module(module), attr)
    return cls


def _known(name: str) -> str:
    return f"{did_you_mean(name, PROVIDERS)}known providers: {', '.join(sorted(PROVIDERS))}"


def _key_env(cls: type[Provider], env: Env) -> str | None:
    """The provider's key variable: the first of its names that is set, else its main one."""
    names = [n for n in (cls.api_key_env, *cls.api_key_env_fallbacks) if n]
    return next((n for n in names if env.get(n)), cls.api_key_env)


#: Connection settings a project's config may set; of these, `temperature` and `seed` may be set to
#: null, which sends none (a model that takes only its own temperature refuses one).
_SETTINGS = frozenset({"temperature", "seed", "max_tokens", "timeout", "retries", "max_response_bytes",
                       "structured_output"})
_MAY_BE_NULL = frozenset({"temperature", "seed"})


def _configured(pc: ProviderConfig | None) -> dict[str, Any]:
    """The settings `pc` sets, a null kept only where it means "send none"."""
    given = pc.model_dump(exclude_unset=True) if pc else {}
    return {k: v for k, v in given.items() if k in _SETTINGS and (v is not None or k in _MAY_BE_NULL)}


def create_provider(
    spec: str | None,
    *,
    config: ProjectConfig,
    env: Env,
    model: str | None = None,
    base_url: str | None = None,
) -> Provider:
    """Resolve a provider from flags > environment > config file > defaults and build it."""
    for configured in config.providers:  # a typo there would quietly leave its settings unused
        if configured not in PROVIDERS:
            raise ConfigError(f"{CONFIG_FILE}: providers: unknown provider {configured!r}; {_known(configured)}")
    spec = spec or config.provider
    if not spec:
        raise UnknownProviderError(f"no provider named; known providers: {', '.join(sorted(PROVIDERS))}; {_HOW}")
    name, spec_model = parse_spec(spec)
    cls = provider_class(name)
    pc = config.providers.get(name)
    chosen_model = model or spec_model or (pc and pc.model) or cls.default_model
    if not chosen_model:
        raise UnknownProviderError(f"provider {name!r} needs a model; name one as {name}:MODEL or with --model")
    key_env = (pc and pc.api_key_env) or _key_env(cls, env)
    settings = ProviderSettings(
        name=name,
        model=chosen_model,
        base_url=(base_url or env.get(cls.base_url_env) or (pc and pc.base_url) or cls.default_base_url),
        api_key=env.get(key_env),
        api_key_env=key_env,
        **{"timeout": cls.default_timeout(), "structured_output": cls.default_structured_output, **_configured(pc)},
        options={"script": pc.script} if pc and pc.script else {},
        model_named=bool(model or spec_model or (pc and pc.model)),
    )
    return cls(settings)
