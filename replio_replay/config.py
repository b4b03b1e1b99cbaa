"""The project's `.replio/config.json`: its shape, and reading it with errors that name the file.

Settings are resolved once, flags > environment (`replio_replay._runtime.env`) > this file > defaults,
by `replio_replay.plan.settings`.
The file never holds an API key, only the name of the variable to read it from (`api_key_env`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._runtime.env import Env
from ._runtime.jsonin import JsonProblem, read_json
from ._runtime.schemaline import SchemaLine
from ._runtime.wording import validation_message
from .agents.decl import AgentDecl
from .errors import ConfigError
from .prices import Price, PriceKey
from .tools.mcp.config import McpServers

__all__ = [
    "CONFIG_FILE",
    "Env",
    "MAX_TRIALS",
    "ProjectConfig",
    "ProviderConfig",
    "load_project_config",
    "parse_spec",
]

CONFIG_FILE = Path(".replio") / "config.json"
#: The most times a fixture may run (`trials`, `--trials`); a saved result holds no more.
MAX_TRIALS = 100


class ProviderConfig(BaseModel):
    """Per-provider settings in the config file's `providers` table."""

    model_config = ConfigDict(extra="forbid", defer_build=True, allow_inf_nan=False)

    model: str | None = Field(None, min_length=1, description="The model when the spec names none.")
    base_url: str | None = Field(None, min_length=1, description="Below --base-url and the environment.")
    api_key_env: str | None = Field(None, min_length=1, description="Name of the variable holding the key.")
    temperature: float | None = Field(None, ge=0, le=10, description="Sampling temperature (default 0).")
    seed: int | None = Field(None, ge=-(2**63), lt=2**63, description="Sent where the API takes a seed.")
    max_tokens: int | None = Field(None, ge=1, le=10_000_000, description="The longest response asked for.")
    timeout: float | None = Field(None, gt=0, le=86_400, description="Seconds one request may take, whole.")
    retries: int | None = Field(None, ge=0, le=100, description="Tries again after a failure another try can fix.")
    max_response_bytes: int | None = Field(None, ge=1, le=2**40, description="The largest response body accepted.")
    structured_output: bool | None = Field(
        None, strict=True, description="Ask a judge for its verdict as structured output (a JSON schema) where the API "
        "takes one (default true; false for llamacpp); false: its JSON mode, or the prompt alone.")
    script: str | None = Field(None, description="mock only: a JSON script of model turns (its responses, in order) per fixture, "
                        "relative to the project.")


class ProjectConfig(BaseModel):
    """The shape of `.replio/config.json`."""

    model_config = ConfigDict(extra="forbid", defer_build=True, allow_inf_nan=False)

    schema_: SchemaLine = None
    provider: str | None = Field(None, description="Default provider spec, NAME[:MODEL].")
    providers: dict[str, ProviderConfig] = Field(default_factory=dict, description="Provider name -> its settings.")
    judge: str | None = Field(None, min_length=1, description="The LLM judge's provider spec, NAME[:MODEL], for "
                              "fixtures whose judge names none (default: the run's provider and model).")
    max_turns: int = Field(12, ge=1, le=10_000, description="Model responses a fixture may take.")
    max_calls: int = Field(40, ge=1, le=100_000, description="Tool calls a fixture may make.")
    tool_timeout: float = Field(30.0, gt=0, le=3600, allow_inf_nan=False,
                                description="Seconds one tool call may take; a fixture may lower it.")
    jobs: int | None = Field(None, ge=1, le=1024, description="Fixtures run at once (default: 4 live, 1 for a replay or a local preset).")
    trials: int = Field(1, ge=1, le=MAX_TRIALS, description="Times each fixture runs (see pass^k).")
    cassettes: str | None = Field(None, description="The cassette folder (default cassettes).")
    golden: str | None = Field(None, description="The golden folder (default golden).")
    record_mode: str | None = Field(None, description="none, once, new_episodes, all or stale (default once).")
    require_pass: list[str] = Field(default_factory=list, description="Fixtures whose verifier failure fails the run.")
    tokens_tolerance: float | None = Field(
        None, ge=0, description="How far (relative) a fixture's token count may move from its golden's before "
        "it counts as drift; null: token counts are reported, never drift by themselves.",
    )
    tools: str | None = Field(None, description="The default tool-set file, relative to the project.")
    web_allow: list[str] = Field(
        default_factory=list, description="Private hosts, addresses or networks tools may fetch from."
    )
    mcp_servers: McpServers = Field(default_factory=dict, description="MCP servers whose tools every tool set offers.")
    bundled: bool = Field(True, strict=True, description="false: leave the bundled catalog out (as --no-bundled).")
    prices: dict[PriceKey, Price] = Field(
        default_factory=dict, description="`PROVIDER:MODEL` -> USD per million tokens (input, output, "
        "cached_input); over the dated defaults of `replio_replay.prices`.")
    baseline: str | None = Field(
        None, min_length=1, description="A saved result (run --output-file) each run is compared with, "
        "relative to the project; --baseline wins.")
    agent: AgentDecl | None = Field(
        None, description="The user's own agent, run in place of replio's loop for every tool set that declares "
        "none (paths relative to the project); --agent wins.")
    plugins: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="The installed plugins (entry-point names) this project uses; absent: none.")


def load_project_config(project: Path) -> ProjectConfig:
    """Read `<project>/.replio/config.json`; defaults when it does not exist."""
    path = project / CONFIG_FILE
    if not path.is_file():
        return ProjectConfig()
    try:
        data = read_json(path.read_text(encoding="utf-8"))
    except JsonProblem as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {validation_message(exc, 'the config file shape (docs/reference/config.md)')}") from None
    for pc in config.providers.values():
        if pc.script:  # relative to the project, not to wherever replio was started
            pc.script = str(project / pc.script)
    return config


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[:MODEL]` -> (name, model or None); the model may itself contain colons."""
    name, _, model = spec.strip().partition(":")
    return name.strip(), (model.strip() or None)
