"""Tool-set files: where they are, their format, and reading one with its `extends` chain.

The project's default set is `.replio/tools.json` (or the file the config's `tools` names);
named variants are `.replio/tools/<name>.json`; `--tools` may also give a file path, named by
the path's digest unless it is one of those files (`locate`). A file
may `extends` another (a path relative to itself), so a variant states only what differs.
Unknown keys, wrong types and loops are errors naming the file and the field.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from .._runtime.jsonin import JsonProblem, read_json
from .._runtime.schemaline import SchemaLine
from .._runtime.wording import did_you_mean, validation_message
from ..agents.decl import AgentDecl
from ..errors import ToolSetError, UsageError
from ..prices import Price, PriceKey
from .declared import ToolDecls
from .environment import EnvironmentDecl
from .mcp.config import McpServer, ServerName
from .override import Override
from .toolset import DEFAULT_TOOLSET

__all__ = ["CONFIG_DIR", "DEFAULT_FILE", "VARIANT_DIR", "SetFile", "ToolSetFile", "given_by_path", "load_chain", "locate", "variants"]

CONFIG_DIR = Path(".replio")
DEFAULT_FILE = CONFIG_DIR / "tools.json"
VARIANT_DIR = Path(".replio") / "tools"
#: The names of tool sets given by a file path (`_path_name`), refused as variant names.
_BY_PATH = re.compile(r".*@[0-9a-f]{12}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ToolSetFile(_Strict):
    """The shape of a tool-set file."""

    schema_: SchemaLine = None
    extends: StrictStr | None = Field(None, description="Another tool-set file, relative to this one.")
    system_prompt: StrictStr | None = Field(None, min_length=1)
    disable: list[StrictStr] = Field(default_factory=list, description="Tools not offered at all.")
    override: dict[str, Override] = Field(default_factory=dict)
    tools: ToolDecls = Field(default_factory=dict, description="New stub, command or Python tools.")
    environments: dict[StrictStr, EnvironmentDecl] = Field(
        default_factory=dict, description="Stateful Python environments whose methods are tools.")
    mcp_servers: dict[ServerName, McpServer | None] = Field(
        default_factory=dict, description="MCP servers added to (or, null, removed from) the base's."
    )
    prices: dict[PriceKey, Price] = Field(
        default_factory=dict, description="`PROVIDER:MODEL` -> USD per million tokens, over the config's "
        "(and the base file's) for runs of this set.")
    agent: AgentDecl | None = Field(None, description="The user's own agent, run in place of replio's loop "
                                    "(over the config's; paths relative to this file).")


@dataclass(frozen=True)
class SetFile:
    """One file of a chain: where it is and what it says."""

    path: Path
    data: ToolSetFile


def locate(project: Path, name: str, configured: str | None = None) -> tuple[str, Path | None]:
    """(the set's name, its file) for `--tools NAME`; the default set may have no file (built-ins)."""
    if name == DEFAULT_TOOLSET:
        if configured:
            path = project / configured
            if not path.is_file():
                raise ToolSetError(f"{project / '.replio' / 'config.json'}: tools: {configured!r} is not a file")
            return DEFAULT_TOOLSET, path
        path = project / DEFAULT_FILE
        return DEFAULT_TOOLSET, path if path.is_file() else None
    if "/" not in name and "\\" not in name and not name.endswith(".json"):
        if given_by_path(name):
            raise UsageError(f"--tools {name}: a name ending in '@' and 12 hex digits is a tool set given by a file "
                             "path (named by the path's digest); give that file's path, or rename the variant")
        path = project / VARIANT_DIR / f"{name}.json"
        if not path.is_file():
            known = [DEFAULT_TOOLSET, *variants(project)]
            raise UsageError(f"no tool set named {name!r} (no file {path}); {did_you_mean(name, known)}"
                             f"known tool sets: {', '.join(known)}")
        return name, path
    path = Path(name)
    if not path.is_file():
        raise UsageError(f"--tools: no tool-set file at {path}")
    return _path_name(project, path, configured), path


def given_by_path(name: str) -> bool:
    """Whether `name` is that of a tool set given by a file path (`<stem>@<digest>`, see `_path_name`)."""
    return _BY_PATH.fullmatch(name) is not None


def _path_name(project: Path, path: Path, configured: str | None) -> str:
    """The name of the tool set in file `path`: the default's or a variant's when it is that file,
    else `<stem>@<digest of where it is>`, which no variant can be called (`_BY_PATH`), so its
    recordings never share a folder with another set's. The digest is of the resolved path
    (relative to the project inside it), not of the content, so editing the file keeps its folder
    (and its recordings turn stale, as a variant's do)."""
    real, root = path.resolve(), project.resolve()
    if real == (root / (configured or DEFAULT_FILE)).resolve():
        return DEFAULT_TOOLSET
    if path.suffix == ".json" and real == (root / VARIANT_DIR / path.name).resolve():
        return path.stem
    where = real.relative_to(root) if real.is_relative_to(root) else real
    return f"{real.stem[:40]}@{hashlib.sha256(where.as_posix().encode()).hexdigest()[:12]}"


def variants(project: Path) -> list[str]:
    """The names of the project's tool-set variants."""
    folder = project / VARIANT_DIR
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def load_chain(path: Path) -> list[SetFile]:
    """The file and every file it extends, the root first; ToolSetError names the broken one."""
    chain: list[SetFile] = []
    seen: list[Path] = []
    current: Path | None = path
    while current is not None:
        real = current.resolve()
        if real in seen:
            loop = " -> ".join(str(p) for p in [*seen, real])
            raise ToolSetError(f"{current}: extends: the tool sets extend each other in a loop ({loop})")
        seen.append(real)
        data = _read(current)
        chain.append(SetFile(current, data))
        current = (current.parent / data.extends) if data.extends else None
        if current is not None and not current.is_file():
            raise ToolSetError(f"{chain[-1].path}: extends: no tool-set file at {current}")
    return list(reversed(chain))


def _read(path: Path) -> ToolSetFile:
    try:
        raw = read_json(path.read_text(encoding="utf-8"))
    except JsonProblem as exc:
        raise ToolSetError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolSetError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(raw, dict):
        raise ToolSetError(f"{path}: a tool set must be a JSON object, not {type(raw).__name__}")
    try:
        return ToolSetFile.model_validate(raw)
    except ValidationError as exc:
        raise ToolSetError(f"{path}: {validation_message(exc, 'the tool-set format (docs/reference/tool-set-file.md)')}") from None
