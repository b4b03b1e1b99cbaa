"""The `agent` key of `.replio/config.json` and of tool-set files, and `--agent`: the declaration and
the `AgentSpec` it resolves to.

An agent is a command (`{"command": ["python", "agent.py"]}`) or a Python function
(`{"python": "agent.py:run"}`, called in a child process of its own). A command's arguments that
name files are relative to the tool-set file that declares it (in `.replio/config.json`, to the
project, as the config's other paths are; for `--agent`, to the current folder), and
are made absolute, since the agent runs in each fixture's worktree; `python` or `python3` as the
program is the interpreter replio runs under, so the agent sees the packages installed beside
replio. Resolving checks what can be checked before anything is sent (a missing file, a program
not found or not executable, a function the file does not define) and raises ToolSetError naming
the file and field.

The spec's `fingerprint` covers what was declared and the content of the files it names (and of
`sources`, globs the user adds for code the agent imports): a change to the agent's code makes its
recordings stale, as a changed tool description does.
"""

from __future__ import annotations

import ast
import difflib
import glob
import hashlib
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, model_validator

from ..errors import ToolSetError, UsageError

__all__ = ["DEFAULT_AGENT_TIMEOUT", "AgentDecl", "AgentSpec", "agent_from_flag", "resolve_agent"]

#: Seconds an agent may take for one fixture (all its user turns) when its declaration gives none.
DEFAULT_AGENT_TIMEOUT = 300.0
#: The programs that mean the interpreter replio runs under.
_PYTHONS = frozenset({"python", "python3"})
#: File name endings that mark an argument as a file the agent needs (so a missing one is an error).
_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh", ".rb", ".jar")


class AgentDecl(BaseModel):
    """An agent as declared in JSON: a `command` or a `python` function, not both."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, allow_inf_nan=False)

    command: list[StrictStr] | None = Field(None, min_length=1, description="The argv, no shell; file "
                                            "arguments relative to the declaring file.")
    python: StrictStr | None = Field(None, min_length=3, description="PATH.py:function taking the task (str) "
                                     "and returning the answer (str), called in a child process.")
    timeout: float = Field(DEFAULT_AGENT_TIMEOUT, gt=0, le=86_400,
                           description="Seconds the agent may take for one fixture, all its turns.")
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict,
                                            description="Variables added to the agent's environment.")
    sources: list[StrictStr] = Field(default_factory=list, description="Globs (relative to the declaring file) "
                                     "of the agent's code besides the files it names: a change makes recordings stale.")
    writable: list[StrictStr] = Field(default_factory=list, description="Folders (relative to the declaring file) "
                                      "the agent may write besides its worktree and its home, a log or cache folder: "
                                      "confined, it can write nowhere else.")
    volatile: list[StrictStr] = Field(default_factory=list, description="Request fields the agent varies from run "
                                      "to run, as request drift names them (`*` for any characters, e.g. "
                                      "`messages[*].content`): left out of request drift.")

    @model_validator(mode="after")
    def _one_kind(self) -> AgentDecl:
        if (self.command is None) == (self.python is None):
            raise ValueError("give either command (an argv list) or python (PATH.py:function), not both or neither")
        return self


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent: the argv it starts with (absolute paths), its bounds and environment."""

    argv: tuple[str, ...]
    timeout: float
    env: tuple[tuple[str, str], ...]
    #: What was declared, for messages and the tool set's digest: the argv as written, or PATH:function.
    shown: str
    fingerprint: str
    #: The file and field it was declared in (`.replio/config.json: agent`, `--agent`).
    where: str
    #: Request-drift paths it varies (`recording.requests.volatile_pattern`).
    volatile: tuple[str, ...] = ()
    #: Each source file (as `_fingerprint` names it) and a hash of its content: what a cassette's
    #: header keeps, so `status` can name the file that changed since a recording.
    files: tuple[tuple[str, str], ...] = ()
    #: Folders it may write besides its worktree and home (absolute; they exist).
    writable: tuple[Path, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """What the tool set's digest holds of the agent, what changes what it sends: never a machine's paths."""
        return {"agent": self.shown, "env": dict(self.env), "code": self.fingerprint}


def resolve_agent(decl: AgentDecl, base_dir: Path, where: str) -> AgentSpec:
    """The agent `decl` declares in the file `where` names (`base_dir` its folder); ToolSetError when
    it cannot start as declared."""
    if decl.python is not None:
        argv, named, shown = _python(decl.python, base_dir, where)
    else:
        assert decl.command is not None
        argv, named = _command(decl.command, base_dir, f"{where}.command")
        shown = shlex.join(decl.command)
    files = sorted({*named, *_globbed(decl.sources, base_dir, f"{where}.sources")})
    hashed = _hashed(files, base_dir)
    return AgentSpec(argv, decl.timeout, tuple(sorted(decl.env.items())), shown,
                     _fingerprint(hashed), where, tuple(decl.volatile), _each(hashed),
                     tuple(_folder(f, base_dir, f"{where}.writable") for f in decl.writable))


def _folder(name: str, base_dir: Path, where: str) -> Path:
    """Folder `name` (relative to `base_dir`), absolute; ToolSetError when there is none."""
    path = (base_dir / os.path.expanduser(name)).resolve()
    if not path.is_dir():
        raise ToolSetError(f"{where}: {name!r} ({path}) is not a folder; create it, or give a folder relative "
                           f"to {base_dir}")
    return path


def agent_from_flag(value: str) -> AgentSpec:
    """`--agent 'python agent.py'`: the command split as a shell would, files relative to the current folder."""
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise UsageError(f"--agent {value!r}: {exc}; quote it as a shell would") from None
    if not argv:
        raise UsageError("--agent: give the agent's command, e.g. --agent 'python agent.py'")
    try:
        return resolve_agent(AgentDecl(command=argv), Path.cwd(), "--agent")
    except ToolSetError as exc:
        raise UsageError(str(exc)) from None


def _command(command: list[str], base_dir: Path, where: str) -> tuple[tuple[str, ...], list[Path]]:
    """The argv with file arguments made absolute, and the files it names."""
    named: list[Path] = []
    out: list[str] = []
    for i, arg in enumerate(command):
        path = _named_file(arg, base_dir)
        if path is not None:
            out.append(str(path))
            named.append(path)
        elif _looks_like_file(arg) and (i > 0 or os.sep in arg):
            raise ToolSetError(f"{where}: {arg!r} ({(base_dir / arg).resolve()}) does not exist; the agent's "
                               f"paths are relative to {base_dir}")
        else:
            out.append(arg)
    program = command[0]
    if program in _PYTHONS:
        out[0] = sys.executable
    elif out[0] == program and shutil.which(program) is None:
        raise ToolSetError(f"{where}: the program {program!r} is not on PATH; install it, or give its path")
    elif out[0] != program and not os.access(out[0], os.X_OK):
        raise ToolSetError(f"{where}: the program {program!r} ({out[0]}) is not executable; make it so "
                           f"(chmod +x), or run it through its interpreter, e.g. [\"python\", \"{program}\"]")
    return tuple(out), named


def _named_file(arg: str, base_dir: Path) -> Path | None:
    """The file or folder `arg` names beside the declaring file, absolute; None when it names none."""
    if arg.startswith("-") or "://" in arg or "=" in arg or not arg.strip():
        return None
    path = (base_dir / arg).resolve()
    return path if path.exists() else None


def _looks_like_file(arg: str) -> bool:
    """Whether `arg` is surely meant as a file (so a missing one is the user's mistake, not an argument)."""
    if arg.startswith("-") or "://" in arg or "=" in arg:
        return False
    return arg.startswith(("./", "../")) or arg.endswith(_SOURCE_SUFFIXES)


def _python(spec: str, base_dir: Path, where: str) -> tuple[tuple[str, ...], list[Path], str]:
    """The child's argv for `PATH.py:function`, checked without running the user's code."""
    file, colon, function = spec.rpartition(":")
    field = f"{where}.python"
    if not colon or not file or not function.isidentifier():
        raise ToolSetError(f"{field}: {spec!r} is not PATH.py:function (e.g. \"agent.py:run\")")
    path = (base_dir / file).resolve()
    if not path.is_file():
        raise ToolSetError(f"{field}: {file!r} ({path}) does not exist; the agent's paths are relative to "
                           f"{base_dir}")
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError) as exc:
        raise ToolSetError(f"{field}: {file!r} cannot be read as Python: {exc}") from None
    if function not in _top_level_names(tree):
        raise ToolSetError(f"{field}: {file!r} defines no function {function!r}; {_instead(tree, function, spec)}")
    argv = (sys.executable, "-m", "replio_replay.agents.pychild", str(path), function)
    return argv, [path], spec


def _instead(tree: ast.Module, function: str, spec: str) -> str:
    """What to write instead of `spec`: the nearest function the file defines, else how to define one."""
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    near = difflib.get_close_matches(function, defined, n=1)
    file = spec.rpartition(":")[0]
    if near:
        return f"did you mean {file}:{near[0]}?"
    if defined:
        return f"it defines {', '.join(defined[:6])}: name one of them, or define the agent's function"
    return "define `def run(task: str) -> str` at the top level of the file, and name it (\"" + file + ":run\")"


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _globbed(patterns: list[str], base_dir: Path, where: str) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        matched = [Path(p).resolve() for p in glob.glob(str(base_dir / pattern), recursive=True)]
        files = [p for p in matched if p.is_file()]
        if not files:
            raise ToolSetError(f"{where}: {pattern!r} matches no file (relative to {base_dir})")
        found += files
    return found


def _hashed(files: list[Path], base_dir: Path) -> list[tuple[str, bytes]]:
    """Each named file by its path relative to `base_dir` where it can be, with its content."""
    out = []
    for path in files:
        if not path.is_file():
            continue  # a folder the command names (a package run with -m): its `sources` say what matters
        shown = path.relative_to(base_dir.resolve()) if path.is_relative_to(base_dir.resolve()) else Path(path.name)
        out.append((shown.as_posix(), path.read_bytes()))
    return out


def _fingerprint(hashed: list[tuple[str, bytes]]) -> str:
    """A hash of the named files (`_hashed`): their names and contents."""
    digest = hashlib.sha256()
    for shown, content in hashed:
        digest.update(shown.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()[:16]


def _each(hashed: list[tuple[str, bytes]]) -> tuple[tuple[str, str], ...]:
    """Each file's name and a short hash of its content."""
    return tuple((shown, hashlib.sha256(content).hexdigest()[:16]) for shown, content in hashed)
