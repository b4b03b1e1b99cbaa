"""The CLI through click's runner: `eval list` and `eval run`, outputs, problems and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from replio_replay._runtime.env import Env
from replio_replay.cli import main
from replio_replay.judge.results import FixtureResult, RunResult, Summary
from replio_replay.report.text import write_run
from tests.helpers import bundled_ids, call, turn, write_json

CATALOG_IDS = sorted(bundled_ids())
FIXTURE_KEYS = {"id", "trace", "names", "accuracy", "pass", "calls", "redundant", "errors", "tokens", "status", "error"}
SUMMARY_KEYS = {"fixtures", "accuracy", "pass_rate", "calls", "redundant", "errors", "tokens"}

SCRIPT = {
    "read-file-lines": [turn(call("file_read", path="config/server.toml"), usage={"prompt": 50, "completion": 10}),
                        turn(text="8743", usage={"prompt": 80, "completion": 2, "total": 90})],
    "hello": [turn(call("list_dir"), call("list_dir")), turn(text="a README")],
    "needs-grep": [turn(text="I will not search.")],
    "looper": [turn(call("list_dir", depth=i)) for i in range(1, 20)],
}


@pytest.fixture
def mock_project(tmp_path: Path) -> Path:
    """A project whose config plays SCRIPT through the mock provider, with two local fixtures."""
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json",
               {"provider": "mock", "providers": {"mock": {"script": "script.json"}}, "max_turns": 4})
    write_json(root / "script.json", SCRIPT)
    write_json(root / ".replio" / "eval" / "hello.json", {
        "description": "Say what is here.", "task": "What is in this project?",
        "files": {"README.md": "hi\n"}, "expected": ["list_dir"],
    })
    write_json(root / ".replio" / "eval" / "needs-grep.json", {
        "description": "Must grep.", "task": "Find x.", "verifier": {"must_include": ["grep"]},
    })
    write_json(root / ".replio" / "eval" / "looper.json", {"task": "Loop.", "files": {"a.txt": "a"}})
    return root


def invoke(project: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["eval", "--path", str(project), *args], catch_exceptions=False)


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert "\n" not in message
    assert message.startswith("replio: error: ")
    assert "Traceback" not in result.output
    return message



# list ----------------------------------------------------------------------------------------------


def test_list_table_shows_id_source_tags_and_description(mock_project: Path) -> None:
    write_json(Env.current().global_fixture_dir / "from-home.json", {"task": "t", "description": "My global one."})
    result = invoke(mock_project, "list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["id", "source", "tags", "description"]
    assert set(lines[1]) <= {"-", " "}
    starts = [lines[0].index(h) for h in ("source", "tags", "description")]

    def cells(line: str) -> list[str]:
        edges = [0, *starts, len(line)]
        return [line[a:b].strip() for a, b in zip(edges, edges[1:])]

    rows = {cells(line)[0]: cells(line)[1:] for line in lines[2:]}
    assert rows["hello"] == ["local", "-", "Say what is here."]
    assert rows["from-home"] == ["global", "-", "My global one."]
    assert rows["grep-symbol"][:2] == ["replio-core-eval", "builtin"]
    assert rows["git-last-commit"][1] == "git,mcp"
    assert list(rows) == sorted(rows)
    assert result.stderr == ""


def test_list_reports_broken_files_on_stderr_and_lists_the_rest(mock_project: Path) -> None:
    broken = mock_project / ".replio" / "eval" / "broken.json"
    write_json(broken, {"task": "t", "verifier": {"must_inclde": ["grep"]}})
    result = invoke(mock_project, "list")
    assert result.exit_code == 1  # a fixture file that cannot be loaded fails, as it fails a run
    assert result.stderr == (
        f"skipped {broken}: verifier.must_inclde: unknown key; "
        "check the spelling against the fixture format (docs/reference/fixture.md)\n"
        "replio: exit 1: 1 problem in the fixtures: those named were skipped\n"
    )
    *table, last = result.stdout.splitlines()
    assert any(line.startswith("hello ") for line in table) and "broken" not in "\n".join(table)
    assert last == f"skipped 1 (see stderr for why): {broken}"


@pytest.mark.parametrize("command", ["list", "run"])
def test_a_fixture_whose_regex_re2_refuses_is_skipped_and_named(mock_project: Path, command: str) -> None:
    broken = mock_project / ".replio" / "eval" / "lookahead.json"
    write_json(broken, {"task": "t", "verifier": {"answer": {"$regex": "(?s)(?=.*a)(?=.*b)"}}})
    result = invoke(mock_project, command, *(["--fixture", "hello"] if command == "run" else []))
    assert (f"skipped {broken}: verifier.answer: invalid regular expression '(?s)(?=.*a)(?=.*b)': "
            "lookahead assertions are not supported ($regex uses RE2 syntax, a linear-time engine); "
            'write each condition as its own matcher: {"$all": ') in result.stderr
    rows = result.stdout.splitlines()
    assert any(row.startswith("hello ") for row in rows)
    assert not any(row.startswith("lookahead") for row in rows)
    assert rows[-1] == f"skipped 1 (see stderr for why): {broken}"
    assert "Traceback" not in result.output


def test_list_json(mock_project: Path) -> None:
    (mock_project / ".replio" / "eval" / "bad.json").write_text("{nope")
    result = invoke(mock_project, "list", "--output", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {"fixtures", "problems", "plugins"}
    assert data["plugins"] == {"active": [], "installed": []}
    by_id = {f["id"]: f for f in data["fixtures"]}
    assert [f["id"] for f in data["fixtures"]] == sorted(CATALOG_IDS + ["hello", "looper", "needs-grep"])
    assert by_id["hello"] == {"id": "hello", "source": "local", "description": "Say what is here.", "tags": []}
    assert by_id["grep-symbol"]["source"] == "replio-core-eval"
    assert all(set(f) == {"id", "source", "description", "tags"} for f in data["fixtures"])
    assert data["problems"] == [{
        "file": str(mock_project / ".replio" / "eval" / "bad.json"),
        "message": "not valid JSON at line 1, column 2: Expecting property name enclosed in double quotes",
    }]


def test_list_in_a_folder_without_fixtures_shows_the_catalog(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    data = json.loads(invoke(tmp_path / "empty", "list", "--output", "json").stdout)
    assert [f["id"] for f in data["fixtures"]] == CATALOG_IDS
    assert data["problems"] == []


@pytest.mark.parametrize("command", ["list", "run", "status", "diff"])
def test_a_path_that_is_not_a_folder_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    result = invoke(tmp_path / "missing", command)
    assert result.exit_code == 2
    assert result.stderr == (f"replio: error: --path {tmp_path / 'missing'}: no such folder; give the project's "
                             "folder (the one that holds .replio/, or any folder to use only the bundled catalog)\n")


# run -----------------------------------------------------------------------------------------------


def test_run_json_with_the_mock_provider(mock_project: Path) -> None:
    result = invoke(mock_project, "run", "--fixture", "read-file-lines", "--fixture", "hello", "--output", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert {"provider", "model", "tools", "tools_hash", "fixtures", "summary"} <= set(data)
    assert data["tools"] == "default"
    assert (data["provider"], data["model"]) == ("mock", "scripted")
    assert [f["id"] for f in data["fixtures"]] == ["hello", "read-file-lines"]
    for fx in data["fixtures"]:
        assert FIXTURE_KEYS <= set(fx)
    hello, rfl = data["fixtures"]
    assert [(c["name"], c["arguments"]) for c in hello["trace"]] == [("list_dir", {}), ("list_dir", {})]
    assert hello["trace"][0]["result"].startswith("./\n")
    assert hello["names"] == ["list_dir", "list_dir"]
    assert (hello["accuracy"], hello["pass"], hello["calls"], hello["redundant"]) == (0.0, True, 2, 1)
    assert (hello["status"], hello["error"], hello["errors"]) == ("ok", None, 0)
    assert [(c["name"], c["arguments"]) for c in rfl["trace"]] == [("file_read", {"path": "config/server.toml"})]
    assert "port" in rfl["trace"][0]["result"]
    assert (rfl["accuracy"], rfl["pass"], rfl["tokens"]) == (1.0, True, 60 + 90)
    assert set(data["summary"]) >= SUMMARY_KEYS
    assert data["summary"]["fixtures"] == 2
    assert data["summary"]["accuracy"] == 0.5
    assert data["summary"]["pass_rate"] == 1.0
    assert data["summary"]["calls"] == 3
    assert data["summary"]["redundant"] == 1


def test_run_table_is_plain_text_when_piped(mock_project: Path) -> None:
    result = invoke(mock_project, "run", "--fixture", "hello", "--fixture", "needs-grep")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "mock:scripted"
    header = lines[1].split()
    assert header[:8] == ["fixture", "status", "pass", "accuracy", "calls", "redundant", "errors", "tokens"]
    assert header[-1] == "names"
    row = next(line for line in lines if line.startswith("hello "))
    assert row.split()[:8] == ["hello", "ok", "pass", "0.00", "2", "1", "0", "30"]
    assert row.endswith("list_dir > list_dir")
    assert next(line for line in lines if line.startswith("needs-grep ")).split()[:4] == [
        "needs-grep", "ok", "FAIL", "-",
    ]
    assert any(line.startswith("2 fixtures  accuracy 0.00 [0.00, 0.79]  pass rate 0.50 [0.09, 0.91]  calls 2  redundant 1") for line in lines)
    assert "  needs-grep: must_include: grep was not called" in lines
    assert not set("│┃━─┏") & set(result.stdout)


def test_a_terminal_gets_a_rich_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    run = RunResult(provider="mock", model="scripted",
                    fixtures=[FixtureResult(id="hello", names=["list_dir"], calls=1, passed=True)],
                    summary=Summary(fixtures=1, pass_rate=1.0, calls=1))
    out = io.StringIO()
    write_run(run, out, rich=True)
    text = out.getvalue()
    assert "hello" in text and "list_dir" in text
    assert set("┃━│─") & set(text)


def test_run_whatever_the_score_exits_0(mock_project: Path) -> None:
    result = invoke(mock_project, "run", "--fixture", "needs-grep", "--fixture", "looper", "--output", "json")
    assert result.exit_code == 0, result.stderr
    fixtures = {f["id"]: f for f in json.loads(result.stdout)["fixtures"]}
    assert fixtures["needs-grep"]["pass"] is False
    assert fixtures["looper"]["status"] == "truncated"
    assert fixtures["looper"]["calls"] == 4  # max_turns 4 from the project config


def test_run_reports_a_broken_fixture_and_runs_the_others(mock_project: Path) -> None:
    config = mock_project / ".replio" / "config.json"  # the project's own fixtures: test_list_json lists the catalog's
    write_json(config, {**json.loads(config.read_text()), "bundled": False})
    broken = mock_project / ".replio" / "eval" / "broken.json"
    write_json(broken, {"task": ["not", "text"]})
    result = invoke(mock_project, "run", "--output", "json")
    assert result.exit_code == 1, result.stderr  # a broken fixture never leaves CI silently
    assert f"skipped {broken}: task: " in result.stderr
    data = json.loads(result.stdout)
    assert [f["id"] for f in data["fixtures"]] == ["hello", "looper", "needs-grep"]
    assert [p["file"] for p in data["problems"]] == [str(broken)]
    junit = invoke(mock_project, "run", "--fixture", "hello", "--output", "junit").stdout  # problems whatever runs
    assert 'name="replio.problems"' in junit and f'name="{broken}"' in junit


def test_the_run_table_names_the_skipped_files_and_the_exit_says_why(mock_project: Path) -> None:
    broken = mock_project / ".replio" / "eval" / "broken.json"
    write_json(broken, {"task": ["not", "text"]})
    result = invoke(mock_project, "run", "--fixture", "hello")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == f"skipped 1 (see stderr for why): {broken}"
    assert result.stderr.splitlines()[-1] == "replio: exit 1: 1 problem in the fixtures (skipped, named above)"


def test_a_fixture_ending_in_error_exits_1(mock_project: Path, closed_port: int) -> None:
    result = invoke(mock_project, "run", "--fixture", "hello", "--provider", "openai:some-model",
                    "--base-url", f"http://127.0.0.1:{closed_port}/v1", "--output", "json")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    data = json.loads(result.stdout)
    assert (data["provider"], data["model"]) == ("openai", "some-model")
    (fx,) = data["fixtures"]
    assert fx["status"] == "error"
    assert "127.0.0.1" in fx["error"]
    assert fx["errors"] == 1 and fx["pass"] is False


def test_an_error_shows_in_the_table_too(mock_project: Path, closed_port: int) -> None:
    result = invoke(mock_project, "run", "--fixture", "hello", "--provider", "openai:m",
                    "--base-url", f"http://127.0.0.1:{closed_port}/v1")
    assert result.exit_code == 1
    assert "  hello: error: " in result.stdout
    assert result.stderr.splitlines()[-1] == "replio: exit 1: 1 fixture ended in error (or cancelled): hello"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--fixture", "nope"], "unknown fixture 'nope'"),
        (["--fixture", "hello", "--fixture", "also-nope"], "unknown fixture 'also-nope'"),
        (["--provider", "nope"], "unknown provider 'nope'"),
        (["--provider", "nope:model"], "unknown provider 'nope'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(mock_project: Path, args: list[str], words: str) -> None:
    result = invoke(mock_project, "run", *args)
    assert words in one_line_error(result)
    assert result.stdout == ""


def test_no_provider_anywhere_exits_2(tmp_path: Path) -> None:
    result = invoke(tmp_path, "run", "--fixture", "grep-symbol")
    assert "no provider named" in one_line_error(result)


def test_a_broken_config_exits_2(mock_project: Path) -> None:
    (mock_project / ".replio" / "config.json").write_text('{"provider": "mock", "max_turn": 3}')
    message = one_line_error(invoke(mock_project, "run", "--fixture", "hello"))
    assert "config.json" in message and "max_turn" in message


@pytest.mark.parametrize(("command", "broken"), [
    (command, broken) for broken in ("config.json", "tools.json", "tools/fast.json")
    for command in ("list", "status", "diff", "run")
    if (command, broken) != ("list", "tools/fast.json")  # list lists what the default tool set offers
])
def test_a_broken_config_or_tool_set_is_a_configuration_error_for_every_command(
        mock_project: Path, command: str, broken: str) -> None:
    config = mock_project / ".replio" / "config.json"
    if broken == "config.json":
        config.write_text('{"provider": "mock", "max_turn": 3}')
    else:
        write_json(mock_project / ".replio" / broken, {"tools": {"x": {"description": 5}}})
    if broken == "tools/fast.json":  # a variant: run and diff use it when asked; status when it has recordings
        cassette = mock_project / "cassettes" / "mock" / "scripted" / "tools=fast" / "hello.yaml"
        cassette.parent.mkdir(parents=True)
        cassette.write_text("interactions: []\n")
    flags = ("--tools", "fast") if broken == "tools/fast.json" and command in ("run", "diff") else ()
    result = invoke(mock_project, command, *flags)
    message = one_line_error(result)
    assert result.stdout == ""
    assert broken in message and ("max_turn" in message or "tools.x.description" in message)


MOCK_NOTE = ("replio: note: mock:scripted plays its script and records nothing: no cassette is read or written "
             "for it (status shows its cassettes as `scripted`)\n")


def test_a_mock_run_says_once_that_it_records_nothing_and_status_does_not_call_it_missing(mock_project: Path) -> None:
    ran = invoke(mock_project, "run", "--fixture", "hello", "--fixture", "needs-grep", "--record-mode", "once",
                 "--update-golden")
    assert ran.exit_code == 0, ran.stderr
    assert ran.stderr == MOCK_NOTE
    assert not (mock_project / "cassettes").exists()
    for quiet in (("--no-cassettes",), ("--record-mode", "none"), ()):  # no recording asked for: nothing to say
        assert invoke(mock_project, "run", "--fixture", "hello", *quiet).stderr == ""
    config = mock_project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "record_mode": "all"}))
    assert invoke(mock_project, "run", "--fixture", "hello").stderr == MOCK_NOTE
    status = invoke(mock_project, "status", "--fixture", "hello", "--fixture", "needs-grep")
    rows = [line.split() for line in status.stdout.splitlines()[2:]]
    assert rows == [["mock:scripted", "hello", "scripted", "yes", "-", "-"],
                    ["mock:scripted", "needs-grep", "scripted", "yes", "-", "-"]]
    entries = json.loads(invoke(mock_project, "status", "--output", "json", "--fixture", "hello").stdout)["entries"]
    assert [(e["fixture"], e["cassette"], e["scripted"]) for e in entries] == [("hello", None, True)]


def test_a_bad_flag_value_is_a_usage_error(mock_project: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "--path", str(mock_project), "run", "--output", "xml"])
    assert result.exit_code == 2
    assert "--output" in result.stderr


def test_help_and_version() -> None:
    assert "eval" in CliRunner().invoke(main, ["--help"]).stdout
    version = CliRunner().invoke(main, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("replio, version ")


@pytest.mark.parametrize("flag", ["--output-file", "--junit-xml", "--html"])
def test_an_output_file_that_cannot_be_written_is_one_line_and_exit_2(mock_project: Path, flag: str) -> None:
    blocker = mock_project / "not-a-folder"
    blocker.write_text("a file where a folder would be\n")
    target = blocker / "out.txt"
    result = invoke(mock_project, "run", "--fixture", "hello", flag, str(target))
    assert result.exit_code == 2
    assert one_line_error(result).startswith(f"replio: error: {target}: cannot be written (")
    saved = mock_project / "saved.json"
    assert invoke(mock_project, "run", "--fixture", "hello", "--output-file", str(saved)).exit_code == 0
    for command in (["report", str(saved), "-o", str(target)], ["merge", str(saved), "-o", str(target)]):
        again = CliRunner().invoke(main, ["eval", "--path", str(mock_project), *command])
        assert again.exit_code == 2 and one_line_error(again).startswith(f"replio: error: {target}: cannot be written (")


def test_a_reader_that_stopped_ends_replio_quietly_with_141(tmp_path: Path) -> None:
    """`replio ... | head`: the reader closes the pipe; replio says nothing and ends as SIGPIPE would (128 + 13)."""
    import subprocess

    from tests.helpers import replio_command

    process = subprocess.Popen([replio_command(), "eval", "--path", str(tmp_path), "list"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before replio writes a line
    err = process.stderr.read()
    assert process.wait(timeout=60) == 141 and err == b""
