"""The project's `.replio/config.json`: its shape, and reading it with errors that name the file.

Settings are resolved once, flags > environment (`replio_replay.env`) > this file > defaults,
by `replio_replay.settings`.
The file never holds an API key, only the name of the variable to read it from (`api_key_env`).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .env import Env, global_fixture_dir
from .errors import ConfigError

__all__ = [
    "CONFIG_FILE",
    "Env",
    "ProjectConfig",
    "ProviderConfig",
    "global_fixture_dir",
    "load_project_config",
    "parse_spec",
]

CONFIG_FILE = Path(".replio") / "config.json"


class ProviderConfig(BaseModel):
    """Per-provider settings in the config file's `providers` table."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(None, description="Name of the variable holding the key.")
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0)
    retries: int | None = Field(None, ge=0)
    max_response_bytes: int | None = Field(None, ge=1, description="The largest response body accepted.")
    script: str | None = Field(None, description="mock only: a JSON script of turns per fixture.")


class ProjectConfig(BaseModel):
    """The shape of `.replio/config.json`."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    provider: str | None = Field(None, description="Default provider spec, NAME[:MODEL].")
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    max_turns: int = Field(12, ge=1)
    max_calls: int = Field(40, ge=1)
    tool_timeout: float = Field(30.0, gt=0, le=3600, allow_inf_nan=False,
                                description="Seconds one tool call may take; a fixture may lower it.")
    jobs: int | None = Field(None, ge=1)
    cassettes: str | None = None
    golden: str | None = None
    record_mode: str | None = None
    require_pass: list[str] = Field(default_factory=list)
    tools: str | None = Field(None, description="The default tool-set file, relative to the project.")


def load_project_config(project: Path) -> ProjectConfig:
    """Read `<project>/.replio/config.json`; defaults when it does not exist."""
    path = project / CONFIG_FILE
    if not path.is_file():
        return ProjectConfig()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        from .fixtures.model import validation_message

        raise ConfigError(f"{path}: {validation_message(exc, 'the config file shape')}") from None
    for pc in config.providers.values():
        if pc.script:  # relative to the project, not to wherever replio was started
            pc.script = str(project / pc.script)
    return config


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[:MODEL]` -> (name, model or None); the model may itself contain colons."""
    name, _, model = spec.strip().partition(":")
    return name.strip(), (model.strip() or None)
