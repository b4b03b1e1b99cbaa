"""The documents a user copies from work as written: the README's table is what its first command
prints, the CI workflows run as written, and every code sample of the docs/ pages is checked (JSON
read by replio's models, Python run, `replio` commands parsed by the CLI, console transcripts run
and compared) by the marks `tests/support/markdown.py` describes. The reference pages that list
what the code holds (public names, environment variables, exit codes) are checked against it."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
import jsonschema_rs
import pytest
import yaml

from tests.support.example_replays import SharedReplays
from tests.support.markdown import Block, Mark, commands, read_page, replio_args, transcript
from tests.support.offline import pip

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / "docs" / "github-actions.yml"


def _steps() -> dict[str, str]:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    (job,) = jobs.values()
    return {step["name"]: step["run"] for step in job["steps"] if "run" in step}


#: The workflows' tests share one run of the single workflow's replay: on one xdist worker.
WORKFLOW_REPLAY = pytest.mark.xdist_group("workflow-replay")


@pytest.fixture(scope="module")
def single_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The single workflow's replay step run as written in a clone, once for the module: its test
    checks what it left, and the sharded workflow's merge is compared with its result."""
    project = tmp_path_factory.mktemp("single") / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    replio = str(Path(sys.executable).with_name("replio"))
    args = shlex.split(_steps()["Replay the fixtures"])
    assert args[0] == "replio"
    env = {**os.environ, "CI": "true"}
    done = subprocess.run([replio, *args[1:]], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    return project, done


@WORKFLOW_REPLAY
def test_the_workflow_replay_step_runs_as_written(single_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    project, done = single_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert ET.parse(project / "replio-junit.xml").getroot().get("failures") == "0"
    assert (project / "replio.json").is_file()


SHARDS = REPO / "docs" / "github-actions-shards.yml"


def _job(name: str) -> dict[str, Any]:
    return yaml.safe_load(SHARDS.read_text())["jobs"][name]


def _run(job: dict[str, Any], step: str) -> str:
    return next(s["run"] for s in job["steps"] if s.get("name") == step)


def _uses(job: dict[str, Any], action: str) -> dict[str, Any]:
    return next(s["with"] for s in job["steps"] if s.get("uses", "").startswith(action))


def test_the_sharded_workflow_installs_and_replays_like_the_single_one() -> None:
    replay, merge = _job("replay"), _job("merge")
    assert _run(replay, "Install") == _run(merge, "Install") == _steps()["Install"]
    assert merge["needs"] == "replay" and replay["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    single = _steps()["Replay the fixtures"].split("--junit-xml")[0].split()
    assert _run(replay, "Replay one shard").split()[:len(single)] == single  # the same replay, then its shard


@WORKFLOW_REPLAY
def test_the_sharded_workflow_runs_as_written_and_merges_into_the_single_run(
        tmp_path: Path, single_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """Each shard job in turn in one clone, its artifact moved where the download step puts it; then
    the merge and the report steps: bash runs each `run` as written, with `replio` first on PATH. The
    merge's result is the single workflow's."""
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    env = {**os.environ, "CI": "true", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def bash(command: str) -> subprocess.CompletedProcess[str]:
        assert "${{" not in command, command
        return subprocess.run(["bash", "-ec", command], cwd=project, capture_output=True, text=True, env=env,
                              timeout=120)

    replay, merge = _job("replay"), _job("merge")
    upload, download = _uses(replay, "actions/upload-artifact"), _uses(merge, "actions/download-artifact")
    for shard in replay["strategy"]["matrix"]["shard"]:
        done = bash(_run(replay, "Replay one shard").replace("${{ matrix.shard }}", str(shard)))
        assert done.returncode == 0, done.stdout + done.stderr
        artifact = project / download["path"] / upload["name"].replace("${{ matrix.shard }}", str(shard))
        assert fnmatch.fnmatch(artifact.name, download["pattern"])
        artifact.mkdir(parents=True)
        (project / upload["path"]).rename(artifact / upload["path"])
    for step in ("Merge the shards", "Build the HTML report"):
        done = bash(_run(merge, step))
        assert done.returncode == 0, done.stdout + done.stderr
    whole, done = single_run
    assert done.returncode == 0, done.stdout + done.stderr
    merged, single = json.loads((project / "replio.json").read_text()), json.loads((whole / "replio.json").read_text())
    assert merged["fixtures"] == single["fixtures"] and merged["summary"] == single["summary"]
    assert ET.parse(project / "replio-junit.xml").getroot().get("tests") == str(len(single["fixtures"]))
    assert all(f'data-fixture="{f["id"]}"' in (project / "replio.html").read_text() for f in single["fixtures"])


def _python_api_example() -> str:
    """The first code block of the Python API reference page."""
    return next(b.text for b in read_page(DOCS / "reference" / "python-api.md")
                if isinstance(b, Block) and b.lang == "python")


def test_the_python_api_example_runs_as_written_and_agrees_with_the_cli(tmp_path: Path) -> None:
    """The Python API page's example, run in a clone of the repository, prints what `run --output json` holds."""
    project = tmp_path / "clone"
    for part in ("cassettes", "golden", ".replio"):
        shutil.copytree(REPO / part, project / part)
    example = tmp_path / "example.py"
    example.write_text(_python_api_example(), encoding="utf-8")
    done = subprocess.run([sys.executable, str(example)], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    replio = str(Path(sys.executable).with_name("replio"))
    cli = subprocess.run([replio, "eval", "--path", ".", "run", "--record-mode", "none", "--output", "json"],
                         cwd=project, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    data = json.loads(cli.stdout)
    expected = [f"{r['provider']}:{r['model']} tools={r['tools']}: {sum(f['pass'] for f in r['fixtures'])} of "
                f"{len(r['fixtures'])} passed" for r in data.get("runs", [data])]
    assert done.stdout.splitlines() == expected


DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
#: What a clone of the repository holds for a page's commands to run in.
CLONE = ("cassettes", "golden", ".replio")


def _blocks(*langs: str) -> list[Block]:
    return [b for page in PAGES for b in read_page(page) if isinstance(b, Block) and b.lang in langs]


def _clone(into: Path, *, examples: bool = False) -> Path:
    """The repository's recordings and project, and its examples (33 MB: copied only for a sample
    that uses them)."""
    for part in (*CLONE, "examples") if examples else CLONE:
        shutil.copytree(REPO / part, into / part)
    return into


def _env(tmp_path: Path) -> dict[str, str]:
    """The reader's shell: the test's `replio` and `python` first on PATH, no provider settings,
    no CI, no terminal width, folders of its own."""
    drop = {"CI", "COLUMNS", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
            "LLAMACPP_BASE_URL", "OLLAMA_HOST", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL"}
    return {**{k: v for k, v in os.environ.items() if k not in drop},
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}


def _read_as(kind: str, data: Any, where: str) -> None:
    """Read `data` as replio reads a file of `kind`, and check it against the published schema."""
    from replio_replay.config import ProjectConfig
    from replio_replay.fixtures.model import load_fixture
    from replio_replay.tools.setfile import ToolSetFile

    readers = {"fixture": lambda d: load_fixture(d, source=where, default_id="sample"),
               "config": ProjectConfig.model_validate, "tool-set": ToolSetFile.model_validate}
    readers[kind](data)
    schema = json.loads((DOCS / "schema" / f"{kind}.schema.json").read_text(encoding="utf-8"))
    errors = [str(e) for e in jsonschema_rs.validator_for(schema).iter_errors(data)]
    assert errors == [], (where, errors)


@pytest.mark.parametrize("block", _blocks("json"), ids=str)
def test_every_json_sample_parses_and_reads_as_the_file_it_shows(block: Block) -> None:
    data = json.loads(block.text)
    if "validate" in block.marks:
        _read_as(block.marks["validate"], data, str(block))
    if "same-as" in block.marks:
        assert data == json.loads((REPO / block.marks["same-as"]).read_text(encoding="utf-8"))


def test_samples_of_each_file_a_user_writes_are_read_by_replio() -> None:
    assert {b.marks.get("validate") for b in _blocks("json")} >= {"fixture", "config", "tool-set"}


@pytest.mark.parametrize("block", [b for b in _blocks("python") if "file" not in b.marks], ids=str)
def test_every_python_sample_runs(block: Block, tmp_path: Path) -> None:
    """Each runs on its own in a clone of the repository (the Python API's example replays it)."""
    clone = _clone(tmp_path / "clone", examples="examples/" in block.text)
    done = subprocess.run([sys.executable, "-c", block.text], cwd=clone, capture_output=True,
                          text=True, timeout=120, env=_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def _parse(args: list[str]) -> click.Context:
    """What `replio ARGS` would run, parsed by the CLI as it would be (nothing is run)."""
    from replio_replay.cli import main

    command: click.Command = main
    name, ctx = "replio", None
    while True:
        ctx = command.make_context(name, list(args), parent=ctx)
        rest = [*ctx._protected_args, *ctx.args] if isinstance(command, click.Group) else []
        if not rest:
            return ctx
        found, sub, args = command.resolve_command(ctx, rest)  # type: ignore[attr-defined]
        assert sub is not None
        name, command = found or "", sub


def test_the_cli_parser_the_samples_are_checked_with_refuses_what_replio_refuses() -> None:
    assert _parse(["eval", "--path", ".", "run", "--tools", "a,b"]).params["tools"] == "a,b"
    with pytest.raises(click.NoSuchOption):
        _parse(["eval", "--path", ".", "run", "--tool", "a"])


@pytest.mark.parametrize("block", _blocks("sh", ""), ids=str)
def test_every_replio_command_in_a_shell_sample_parses(block: Block) -> None:
    for command in commands(block):
        for part in command.split("&&"):
            args = replio_args(part.strip())
            if args is not None:
                _parse(args)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the background command ended"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after 30 s")


def _shows(stdout: str, shown: str, where: str) -> None:
    """The output a transcript shows: all of it, or the lines before a line starting `...`."""
    lines = shown.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if line.startswith("...")), None)
    if cut is None:
        assert stdout == shown, where
    else:
        assert stdout.startswith("".join(lines[:cut])), where


#: The port the pages' loopback servers are shown on; each run takes a free one instead.
SHOWN_PORT = "8765"


#: A page's mark that its `## ` sections are independent: each runs in a clone of its own, as a
#: test of its own (so the workers share a long page).
APART = "each section apart"


def _parts(page: Path) -> list[Any]:
    """The page whole (section None), or each of its sections when it is marked `APART`."""
    items = read_page(page)
    if not any(isinstance(i, Mark) and i.what == APART for i in items):
        return [pytest.param(page, None, id=page.name)]
    return [pytest.param(page, n, id=f"{page.name}-section{n}")
            for n in sorted({_section(page, i.line) for i in items if isinstance(i, Block)})]


def _section(page: Path, line: int) -> int:
    """How many `## ` headings come before `line` (1-based) of `page`, outside code samples."""
    headings, fenced = 0, False
    for text in page.read_text(encoding="utf-8").split("\n")[:line - 1]:
        fenced = fenced != text.startswith("```")
        headings += not fenced and text.startswith("## ")
    return headings


def _part(page: Path, section: int | None) -> list[Block | Mark]:
    items = read_page(page)
    if section is None:
        return items
    assert all(i.what == APART for i in items if isinstance(i, Mark)), f"{page}: only {APART!r} when split"
    return [i for i in items if isinstance(i, Block) and _section(page, i.line) == section]


#: A replay of a committed example, alone or piped into a command: `replio eval --path examples/NAME run ARGS`.
EXAMPLE_REPLAY = re.compile(r"replio eval --path examples/([\w-]+) run((?: [^|;&<>`$()]+)?)(?: \| (.+))?")
#: Options that write a file a later command may read: a replay with one runs in the page's folder.
WRITES = {"--output-file", "--junit-xml", "--html", "--markdown", "--update-golden", "--rejudge"}


def _example_replay(command: str) -> tuple[str, list[str], str | None] | None:
    """The example, the arguments and what the output is piped into, of a command that replays a
    committed example and writes nothing, which the tests share (tests/support/example_replays.py)."""
    found = EXAMPLE_REPLAY.fullmatch(command)
    if found is None:
        return None
    args = shlex.split(found.group(2))
    records = any(mode != "none" for option, mode in zip(args, args[1:]) if option == "--record-mode")
    if records or WRITES & {a.split("=")[0] for a in args} or any(a.startswith("--record-mode=") for a in args):
        return None
    return found.group(1), args, found.group(3)


@pytest.mark.parametrize(("page", "section"), [part for p in PAGES if any(
    b.lang == "console" for b in read_page(p) if isinstance(b, Block)) for part in _parts(p)])
def test_the_console_samples_run_as_shown(page: Path, section: int | None, tmp_path: Path,
                                          example_replay: SharedReplays) -> None:
    """The page's files written and its commands run in order (or a section's, for a page marked
    `APART`), in an empty folder or a clone of the repository, each printing what the page shows;
    then the replio steps of a workflow it writes. A replay of a committed example that comes before
    any other command is the session's shared one (the e2e tests check its saved result), run
    offline under --strict: it must exit 0 and print what the page shows."""
    items = _part(page, section)
    empty = any(isinstance(i, Mark) and i.what == "empty folder" for i in items)
    work = tmp_path / "work"
    uses_examples = any(isinstance(i, Block) and "examples/" in i.text for i in items)
    work.mkdir() if empty else _clone(work, examples=uses_examples)
    port, env = str(_free_port()), _env(tmp_path)
    background: list[subprocess.Popen[bytes]] = []
    untouched = not empty  # the clone is as the repository holds it: nothing has run in it yet

    def stop() -> None:
        for process in background:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        background.clear()

    try:
        for item in items:
            if isinstance(item, Mark):
                if item.what == "stop the background commands":
                    stop()
            elif "file" in item.marks:
                untouched = False
                (work / item.marks["file"]).parent.mkdir(parents=True, exist_ok=True)
                (work / item.marks["file"]).write_text(item.text.replace(SHOWN_PORT, port), encoding="utf-8")
            elif item.lang == "console":
                for command, shown in transcript(item):
                    command = command.replace(SHOWN_PORT, port)
                    shared = _example_replay(command) if untouched else None
                    if shared is not None:
                        example, args, piped = shared
                        replayed = example_replay(example, *args)
                        assert replayed.returncode == 0, f"{item}: {command}\n{replayed.stdout}{replayed.stderr}"
                        done = replayed if piped is None else subprocess.run(
                            ["bash", "-c", piped], cwd=work, input=replayed.stdout, capture_output=True,
                            text=True, env=env, timeout=300)
                        assert done.returncode == 0, f"{item}: {command}\n{done.stdout}{done.stderr}"
                        _shows(done.stdout, shown, f"{item}: {command}")
                        continue
                    untouched = False
                    if command.endswith(" &"):
                        background.append(subprocess.Popen(["bash", "-c", command[:-2]], cwd=work, env=env,
                                                           start_new_session=True))
                        _wait_for(int(port), background[-1])
                        continue
                    done = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True,
                                          env=env, timeout=300)
                    assert done.returncode == 0, f"{item}: {command}\n{done.stdout}{done.stderr}"
                    _shows(done.stdout, shown, f"{item}: {command}")
    finally:
        stop()
    for workflow in [b for b in items if isinstance(b, Block) and b.marks.get("file", "").startswith(".github/")]:
        (job,) = yaml.safe_load(workflow.text)["jobs"].values()
        steps = [s["run"] for s in job["steps"] if s.get("run", "").startswith("replio ")]
        assert steps, f"{workflow}: no replio step"
        for step in steps:
            done = subprocess.run(["bash", "-ec", step], cwd=work, capture_output=True, text=True,
                                  env={**env, "CI": "true"}, timeout=300)
            assert done.returncode == 0, f"{workflow}: {step}\n{done.stdout}{done.stderr}"


def test_the_readme_starts_with_the_two_commands_and_the_docs_show_what_the_first_prints() -> None:
    """The README opens with the install-and-replay command and the test command; what the first prints
    is the home page's first console sample, which `test_the_console_samples_run_as_shown` runs and compares.
    The README stays under 250 lines: the long examples live in docs/examples.md, run the same way."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# replio-replay\n\n```sh\npip install -e . && replio eval --path . run ")
    first = readme.split("```sh\n", 1)[1].split("\n", 1)[0]
    args = replio_args(first.split("#")[0].split("&&")[1].strip())
    assert args == ["eval", "--path", ".", "run"]
    home = next(b for b in read_page(DOCS / "index.md") if isinstance(b, Block) and b.lang == "console")
    assert transcript(home)[0][0] == "replio eval --path . run" and "(docs/index.md)" in readme.split("\n## ", 1)[0]
    assert len(readme.splitlines()) < 250
    assert "(docs/examples.md)" in readme


def test_the_python_api_page_documents_every_public_name() -> None:
    import replio_replay

    page = (DOCS / "reference" / "python-api.md").read_text(encoding="utf-8")
    assert re.findall(r"^::: replio_replay\.(\w+)$", page, re.M) == replio_replay.__all__


def _variables_read() -> set[str]:
    """Every environment variable the package reads by name: the first argument of a `.get(...)` or
    `_xdg(...)` call and the key of a subscript, written as a constant in capitals, and each
    provider's base-URL and key variables (with the keys it falls back on)."""
    from replio_replay.providers import PROVIDERS, provider_class

    names: set[str] = set()
    for path in (REPO / "replio_replay").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "_xdg") \
                    and node.args and isinstance(node.args[0], ast.Constant):
                names.add(str(node.args[0].value))
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                names.add(str(node.slice.value))
    for name in PROVIDERS:
        cls = provider_class(name)
        names |= {cls.base_url_env or "", cls.api_key_env or "", *cls.api_key_env_fallbacks}
    return {n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]*_?[A-Z0-9]+", n) and n.upper() == n and len(n) > 1}


def test_the_environment_page_names_every_variable_the_code_reads() -> None:
    page = (DOCS / "reference" / "environment.md").read_text(encoding="utf-8")
    table = page.split("## What replio reads", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([A-Z_][A-Z0-9_]*)` \|", table, re.M))
    read = _variables_read()
    assert {"CI", "XDG_CACHE_HOME", "OPENAI_API_KEY"} <= read  # the scan finds what it must
    assert read - listed == set(), "document these in docs/reference/environment.md"
    assert listed - read == set(), "the page lists variables the code does not read"


def test_the_exit_codes_page_lists_every_code_the_cli_exits_with() -> None:
    """The codes given to `sys.exit` and `_exit` in the CLI and returned by `Outcome.exit_code`."""
    codes: set[int] = set()
    for module in ("cli.py", "run/suite.py"):
        for node in ast.walk(ast.parse((REPO / "replio_replay" / module).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "_exit") and node.args:
                codes |= {c.value for c in ast.walk(node.args[0]) if isinstance(c, ast.Constant)
                          and type(c.value) is int}
            if isinstance(node, ast.FunctionDef) and node.name == "exit_code":
                codes |= {c.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None
                          for c in ast.walk(r.value) if isinstance(c, ast.Constant) and type(c.value) is int}
    page = (DOCS / "reference" / "exit-codes.md").read_text(encoding="utf-8")
    assert {int(c) for c in re.findall(r"^\| `(\d+)` \|", page, re.M)} == codes


def test_the_matcher_page_names_every_operator_and_type_the_code_knows() -> None:
    from replio_replay._runtime.matchers import JSON_TYPES, OPERATORS

    page = (DOCS / "reference" / "matchers.md").read_text(encoding="utf-8")
    assert set(re.findall(r'"(\$\w+)"', page)) == set(OPERATORS)
    types = page.split('`{"$type": t}`', 1)[1].split("\n", 1)[0]
    assert set(re.findall(r"`(\w+)`", types)) == set(JSON_TYPES)


def test_the_plugin_page_builds_installs_and_runs_as_written(tmp_path: Path) -> None:
    """The page's package is built by the running environment's setuptools and installed by pip, offline
    (into a folder on PYTHONPATH, not the test's environment); `list` then prints what the page shows,
    and its Python tool answers a scripted run."""
    items = [b for b in read_page(DOCS / "how-to" / "writing-a-plugin.md") if isinstance(b, Block)]
    project, site = tmp_path / "project", tmp_path / "site"
    for block in (b for b in items if "file" in b.marks):
        (project / block.marks["file"]).parent.mkdir(parents=True, exist_ok=True)
        (project / block.marks["file"]).write_text(block.text, encoding="utf-8")
    built = pip("install", "--quiet", "--no-deps", "--no-build-isolation", "--target", str(site),
                str(project / "evals-plugin"), env=dict(os.environ))
    assert built.returncode == 0, built.stdout + built.stderr
    env = {**_env(tmp_path), "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    (shown,) = [b for b in items if "output-of" in b.marks]
    args = replio_args(shown.marks["output-of"])
    assert args is not None
    replio = str(Path(sys.executable).with_name("replio"))
    listed = subprocess.run([replio, *args], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == shown.text

    script = {"*": [{"tool_calls": [{"name": "word_count", "arguments": {"path": "notes.txt"}}]}, {"text": "4 words"}]}
    (project / "script.json").write_text(json.dumps(script), encoding="utf-8")
    config = json.loads((project / ".replio" / "config.json").read_text(encoding="utf-8"))
    config["providers"] = {"mock": {"script": str(project / "script.json")}}
    (project / ".replio" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    run = subprocess.run([replio, "eval", "--path", ".", "run", "--provider", "mock", "--output", "json"], cwd=project,
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    (fixture,) = json.loads(run.stdout)["fixtures"]
    assert fixture["pass"] and fixture["trace"][0]["result"] == "4", fixture


def test_ci_runs_the_readme_test_command_and_builds_the_docs_strictly() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    install, test = readme.split("```sh\n", 1)[1].split("\n")[1].split("#")[0].strip().split(" && ")
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert script[-1] == test
    assert install.replace("pip install", "python -m pip install --quiet") in script
    assert any(line.startswith("NO_MKDOCS_2_WARNING=1 mkdocs build --strict") for line in script)


def _hooks() -> Any:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mark", ["config.schema.json", "config.schema.json#/$defs/ProviderConfig"])
def test_the_docs_hook_makes_a_table_of_every_key_of_a_schema(mark: str) -> None:
    """The config page's key tables are made at build time from the published schema."""
    from replio_replay.config import ProjectConfig, ProviderConfig

    made = _hooks().on_page_markdown(f"before\n<!-- schema-table: {mark} -->\nafter\n")
    model = ProviderConfig if "$defs" in mark else ProjectConfig
    rows = re.findall(r"^\| `([^`]+)` \|", made, re.M)
    assert rows == [f.alias or name for name, f in model.model_fields.items()]
    assert made.startswith("before\n| key | type | default | meaning |") and made.endswith("|\nafter\n")
    assert f"<!-- schema-table: {mark} -->" in (DOCS / "reference" / "config.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("page", "schema"), [("fixture.md", "fixture.schema.json"),
                                              ("tool-set-file.md", "tool-set.schema.json")])
def test_the_key_tables_written_by_hand_name_every_key_of_the_schema(page: str, schema: str) -> None:
    text = (DOCS / "reference" / page).read_text(encoding="utf-8")
    table = text.split("| key | meaning |", 1)[1].split("\n\n", 1)[0]
    written = {key.split(".")[0] for key in re.findall(r"^\| `([\w.]+)`", table, re.M)}
    keys = set(json.loads((DOCS / "schema" / schema).read_text(encoding="utf-8"))["properties"]) - {"$schema"}
    assert written == keys


def _within(part: Any, whole: Any) -> bool:
    """`part` is `whole` with keys and list items left out (what an excerpt shows)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and _within(v, whole[k]) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and all(any(_within(p, w) for w in whole) for p in part)
    return bool(part == whole)


@pytest.mark.parametrize("block", _blocks("yaml"), ids=str)
def test_every_yaml_sample_parses_and_an_excerpt_is_of_its_file(block: Block) -> None:
    data = yaml.safe_load(block.text)
    if "excerpt-of" in block.marks:
        whole = yaml.safe_load((REPO / block.marks["excerpt-of"]).read_text(encoding="utf-8"))
        assert _within(data, whole)
        assert not _within({**data, "not-in-the-file": 1}, whole)


@pytest.mark.parametrize("block", [b for b in _blocks("sh", "") if re.search(r"\b(scripts|bench)/", b.text)], ids=str)
def test_the_repository_programs_a_shell_sample_runs_exist(block: Block) -> None:
    for program in re.findall(r"(?<![\w/])((?:scripts|bench)/[\w./-]+\.(?:sh|py))\b", block.text):
        assert (REPO / program).is_file(), f"{block}: {program} is not in the repository"


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    """The docs/ pages' links are checked by `mkdocs build --strict`; the README's here."""
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", (REPO / "README.md").read_text(encoding="utf-8"))
    relative = [link for link in links if "://" not in link]
    assert relative and [link for link in relative if not (REPO / link).exists()] == []
