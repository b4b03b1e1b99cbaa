"""The configuration of MCP servers, pure: a stdio command or a streamable-HTTP URL per name.

Servers are named in `.replio/config.json`, in tool-set files (so variants can differ in
servers) and in a fixture (its own, self-contained). A secret reaches a server only by the name
of the variable that holds it (`{"from_env": "VAR"}`), never written in a file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

from ..._runtime.redact import shown_url, url_secrets

__all__ = ["FromEnv", "argv", "HttpServer", "McpServer", "McpServers", "ServerChoice", "ServerName", "StdioServer", "resolve_values", "secret_names", "writable"]

#: Headers that carry credentials: their values must come from the environment.
_SECRET_HEADERS = {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "x-auth-token"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class FromEnv(_Strict):
    """A value read from the environment variable `from_env` when the server starts."""

    from_env: str = Field(min_length=1)


#: A value written in the file, or read from the environment (`{"from_env": "VAR"}`).
Value = Annotated[
    Union[Annotated[str, Tag("~text")], Annotated[FromEnv, Tag("~from_env")]],
    Discriminator(lambda v: "~text" if isinstance(v, str) else "~from_env" if isinstance(v, (dict, FromEnv)) else None,
                  custom_error_type="value", custom_error_message='must be text, or {"from_env": "VARIABLE"}'),
]


class _Server(_Strict):
    timeout: float = Field(30.0, gt=0, le=600, description="Seconds to start, list tools, or answer one call.")
    prefix: str = Field("", description="Put before each tool's name, so two servers' names cannot clash.")
    replay: Literal["cassette", "live"] = Field(
        "cassette", description="cassette: a replay serves this server from the recording; live: it starts it "
        "and compares what it says with the recording (request drift)."
    )

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, prefix: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_-]{0,32}", prefix):
            raise ValueError(f"prefix {prefix!r} may hold only letters, digits, '_' and '-' (up to 32), "
                             "as tool names may")
        return prefix


class StdioServer(_Server):
    """A server run as a program, one per fixture, in the fixture's worktree."""

    command: str = Field(min_length=1, description="The program; {python} is the Python that runs replio.")
    args: list[str] = Field(default_factory=list, description="Its arguments; {project} is the project's folder.")
    env: dict[str, Value] = Field(default_factory=dict, description="The server's environment: only these.")
    writable: list[str] = Field(default_factory=list, description="Folders the server may write besides its "
                                "worktree, absolute or under {project} (a log or cache folder): confined, it "
                                "writes nowhere else.")


class HttpServer(_Server):
    """A server reached over streamable HTTP."""

    url: str = Field(description="The MCP endpoint, e.g. http://127.0.0.1:8765/mcp.")
    headers: dict[str, Value] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not re.match(r"^https?://[^/\s]+", url):
            raise ValueError(f"url {url!r} is not an http:// or https:// address")
        if url_secrets(url):
            raise ValueError(f"url {shown_url(url)!r} carries a credential (a password, or a key-like query "
                             'parameter): give it as a header, {"Authorization": {"from_env": "VARIABLE"}}, '
                             "never in the file")
        return url

    @field_validator("headers")
    @classmethod
    def _secrets_from_env(cls, headers: dict[str, Value]) -> dict[str, Value]:
        for name, value in headers.items():
            if name.lower() in _SECRET_HEADERS and isinstance(value, str):
                raise ValueError(f"header {name!r} carries a credential: give it as "
                                 '{"from_env": "VARIABLE"}, never in the file')
        return headers


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "~http" if "url" in value else "~stdio"
    if isinstance(value, (StdioServer, HttpServer)):
        return "~http" if isinstance(value, HttpServer) else "~stdio"
    return None


# Tags start with "~": messages leave them out of a field's path (see `validation_message`).
#: A server: a command (`StdioServer`) or a URL (`HttpServer`), told apart by their keys.
McpServer = Annotated[
    Union[Annotated[StdioServer, Tag("~stdio")], Annotated[HttpServer, Tag("~http")]],
    Discriminator(_kind, custom_error_type="mcp_server",
                  custom_error_message='must be an object: {"command": ...} for a program, {"url": ...} for an HTTP server'),
]
#: A server's name: what drift messages, `mcp_servers` lists and cassettes call it.
ServerName = Annotated[str, AfterValidator(lambda name: _server_name(name))]


def _server_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
        raise ValueError(f"server name {name!r} may hold only letters, digits, '.', '_' and '-' (1 to 64)")
    return name
McpServers = dict[ServerName, McpServer]


def _listed(value: Any) -> str | None:
    return "~names" if isinstance(value, list) else "~servers" if isinstance(value, dict) else None


#: A fixture's choice: names of the tool set's servers, or servers of its own.
ServerChoice = Annotated[
    Union[Annotated[list[ServerName], Tag("~names")], Annotated[McpServers, Tag("~servers")]],
    Discriminator(_listed, custom_error_type="mcp_servers",
                  custom_error_message="must be a list of server names, or an object of servers of its own"),
]


def argv(server: StdioServer, project: Path | None = None) -> list[str]:
    """The program and its arguments: `{python}` is the Python that runs replio, `{project}` the
    project's folder (the server runs in the fixture's worktree, where relative paths resolve)."""
    def expand(text: str) -> str:
        text = text.replace("{python}", sys.executable)
        return text.replace("{project}", str(project)) if project is not None else text

    return [expand(server.command), *map(expand, server.args)]


def writable(server: StdioServer, project: Path | None, where: str) -> list[Path]:
    """The folders `server` may write besides its worktree, `{project}` expanded; ValueError naming
    `where` and the first that is not an existing folder's absolute path."""
    folders = []
    for name in server.writable:
        path = Path(name.replace("{project}", str(project)) if project is not None else name)
        if not path.is_absolute() or not path.is_dir():
            raise ValueError(f"{where}: writable {name!r} is not a folder ({path}); give an existing folder's absolute path, "
                             "or one under {project}")
        folders.append(path.resolve())
    return folders


def secret_names(server: StdioServer | HttpServer) -> list[str]:
    """The environment variables a server's configuration reads."""
    values = server.env.values() if isinstance(server, StdioServer) else server.headers.values()
    return [v.from_env for v in values if isinstance(v, FromEnv)]


def resolve_values(values: Mapping[str, Value], env: Mapping[str, str], where: str) -> dict[str, str]:
    """Each value, `from_env` ones read from `env`; ValueError naming `where` when one is unset."""
    out = {}
    for name, value in values.items():
        if isinstance(value, FromEnv):
            if value.from_env not in env:
                raise ValueError(f"{where}: {name} comes from the variable {value.from_env}, which is not set")
            out[name] = env[value.from_env]
        else:
            out[name] = value
    return out
