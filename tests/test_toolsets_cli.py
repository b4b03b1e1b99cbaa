"""Tool sets through the CLI against a loopback server: --tools, side by side, cross product, status, drift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from replio_replay.cli import main
from tests.support.llm_server import LLMServer, Reply, Seen
from tests.support.project import write_project

#: The variant's file_read description; the scripted agent reads files only when it sees it.
TUNED = "Read a text file ONCE and answer from it."


def _invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def _agent(seen: Seen) -> Reply:
    """Reads notes.txt and answers when file_read's description is the tuned one; else gives up."""
    body = seen.json()
    tools = {t["function"]["name"]: t["function"] for t in body.get("tools", [])}
    tuned = tools.get("file_read", {}).get("description") == TUNED
    done = any(m["role"] == "tool" for m in body["messages"])
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if tuned and not done:
        message["tool_calls"] = [{"id": "call_0", "type": "function",
                                  "function": {"name": "file_read", "arguments": '{"path": "notes.txt"}'}}]
    else:
        message["content"] = "It says hello." if tuned else "I cannot tell."
    return Reply(json={"choices": [{"index": 0, "message": message}], "model": body["model"],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The alpha/beta project with a `tuned` variant that changes file_read's description."""
    root = write_project(tmp_path / "proj")
    variant = root / ".replio" / "tools" / "tuned.json"
    variant.parent.mkdir()
    variant.write_text(json.dumps({"override": {"file_read": {"description": TUNED}}}))
    fixture = root / ".replio" / "eval" / "alpha.json"
    data = json.loads(fixture.read_text())
    data["verifier"] = {"must_include": ["file_read"]}
    fixture.write_text(json.dumps(data))
    return root


@pytest.fixture
def server(llm_server: LLMServer) -> LLMServer:
    llm_server.handler = _agent
    return llm_server


def _run(project: Path, server: LLMServer, *extra: str) -> Result:
    return _invoke("eval", "--path", str(project), "run", "--fixture", "alpha", "--fixture", "beta",
                   "--base-url", f"{server.url}/v1", *extra)


def test_one_tool_set_by_name_records_under_its_folder(project: Path, server: LLMServer) -> None:
    result = _run(project, server, "--tools", "tuned", "--output", "json")
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["tools"] == "tuned" and len(run["tools_hash"]) == 16
    alpha = run["fixtures"][0]
    assert alpha["names"] == ["file_read"] and alpha["pass"] is True
    assert alpha["trace"][0]["result"] == "     1  hello"
    folder = project / "cassettes" / "openai" / "test-model" / "tools=tuned"
    assert sorted(p.name for p in folder.glob("*.yaml")) == ["alpha.yaml", "beta.yaml"]
    assert not list((project / "cassettes" / "openai" / "test-model").glob("*.yaml"))
    assert "tools: tuned" in (folder / "alpha.yaml").read_text()


def test_two_tool_sets_side_by_side_with_the_flip_first(project: Path, server: LLMServer) -> None:
    result = _run(project, server, "--tools", "default,tuned", "--update-golden")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["metric", "openai:test-model", "openai:test-model", "tools=tuned"]
    flipped = next(line for line in lines if "alpha" in line)
    assert flipped.split()[:3] == ["*", "alpha", "FAIL"] and "pass" in flipped.split()
    assert lines.index(flipped) < next(i for i, line in enumerate(lines) if "beta" in line)
    cassettes = project / "cassettes" / "openai" / "test-model"
    assert (cassettes / "alpha.yaml").is_file() and (cassettes / "tools=tuned" / "alpha.yaml").is_file()
    goldens = project / "golden" / "openai" / "test-model"
    assert (goldens / "alpha.json").is_file() and (goldens / "tools=tuned" / "alpha.json").is_file()

    server.close()
    replayed = _run(project, server, "--tools", "default,tuned", "--record-mode", "none", "--output", "json",
                    "--strict")
    assert replayed.exit_code == 0, replayed.output
    runs = json.loads(replayed.stdout)["runs"]
    assert [(r["tools"], r["fixtures"][0]["pass"]) for r in runs] == [("default", False), ("tuned", True)]
    assert runs[0]["tools_hash"] != runs[1]["tools_hash"]


def test_a_tool_set_given_by_path_never_writes_another_sets_recordings(project: Path, server: LLMServer,
                                                                      tmp_path: Path) -> None:
    assert _run(project, server, "--update-golden").exit_code == 0
    assert _run(project, server, "--tools", "tuned", "--update-golden").exit_code == 0
    recordings = sorted(p for root in ("cassettes", "golden") for p in (project / root).rglob("*") if p.is_file())
    before = {p: p.read_bytes() for p in recordings}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for stem in ("default", "tuned"):  # named like the default set and like a variant
        (elsewhere / f"{stem}.json").write_text(json.dumps({"override": {"file_read": {"description": TUNED}}}))
        result = _run(project, server, "--tools", str(elsewhere / f"{stem}.json"), "--record-mode", "all",
                      "--update-golden", "--output", "json")
        assert result.exit_code == 0, result.output
        name = json.loads(result.stdout)["tools"]
        assert name.startswith(f"{stem}@") and name not in (stem, "default", "tuned")
        for root in ("cassettes", "golden"):
            folder = project / root / "openai" / "test-model" / f"tools={name.replace('@', '%40')}"
            assert sorted(p.stem for p in folder.iterdir()) == ["alpha", "beta"]
    assert {p: p.read_bytes() for p in recordings} == before


def test_compare_and_tools_run_the_cross_product(project: Path, server: LLMServer) -> None:
    with LLMServer() as second_server:
        second_server.handler = _agent
        _cross_product(project, server, second_server)


def _cross_product(project: Path, server: LLMServer, second_server: LLMServer) -> None:
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "LLAMACPP_BASE_URL": f"{second_server.url}/v1"}
    result = _invoke("eval", "--path", str(project), "run", "--fixture", "alpha",
                     "--compare", "openai:model-a,llamacpp:model-b", "--tools", "default,tuned",
                     "--output", "json", env=env)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [(r["provider"], r["model"], r["tools"]) for r in runs] == [
        ("openai", "model-a", "default"), ("openai", "model-a", "tuned"),
        ("llamacpp", "model-b", "default"), ("llamacpp", "model-b", "tuned"),
    ]
    assert [r["fixtures"][0]["pass"] for r in runs] == [False, True, False, True]
    for provider, model in (("openai", "model-a"), ("llamacpp", "model-b")):
        assert (project / "cassettes" / provider / model / "alpha.yaml").is_file()
        assert (project / "cassettes" / provider / model / "tools=tuned" / "alpha.yaml").is_file()


def test_an_unknown_tool_set_is_a_usage_error_naming_the_known_ones(project: Path) -> None:
    result = _invoke("eval", "--path", str(project), "run", "--tools", "tunned")
    assert result.exit_code == 2
    assert "no tool set named 'tunned'" in result.stderr and "default, tuned" in result.stderr


def test_a_broken_tool_set_file_is_a_config_error_naming_file_and_field(project: Path) -> None:
    (project / ".replio" / "tools" / "tuned.json").write_text(json.dumps({"overide": {}}))
    result = _invoke("eval", "--path", str(project), "run", "--tools", "tuned")
    assert result.exit_code == 2
    assert "tuned.json: overide: unknown key" in result.stderr


def test_a_stub_regex_re2_refuses_is_a_config_error_naming_file_and_field(project: Path) -> None:
    (project / ".replio" / "tools" / "tuned.json").write_text(json.dumps({"tools": {"lookup": {
        "description": "Look up.", "results": [{"when": {"q": {"$regex": "(a)\\1"}}, "result": "x"}],
    }}}))
    result = _invoke("eval", "--path", str(project), "run", "--tools", "tuned")
    assert result.exit_code == 2
    assert "tuned.json: tools.lookup" in result.stderr
    assert ("invalid regular expression '(a)\\1': backreferences are not supported "
            "($regex uses RE2 syntax, a linear-time engine)") in result.stderr
    assert "Traceback" not in result.output


def test_a_fixture_naming_a_tool_nobody_offers_is_reported_and_skipped(project: Path, server: LLMServer) -> None:
    fixture = project / ".replio" / "eval" / "beta.json"
    data = json.loads(fixture.read_text())
    data["expected"] = ["list_dir", "globb"]
    fixture.write_text(json.dumps(data))
    result = _run(project, server, "--output", "json")
    assert "fixture 'beta': expected: no tool named 'globb' in tool set 'default'" in result.stderr
    assert "did you mean 'glob'?" in result.stderr
    assert [f["id"] for f in json.loads(result.stdout)["fixtures"]] == ["alpha"]
    listed = _invoke("eval", "--path", str(project), "list", "--output", "json")
    assert any("globb" in p["message"] for p in json.loads(listed.stdout)["problems"])


def test_a_problem_of_one_tool_set_names_it_in_the_html_report(project: Path, server: LLMServer,
                                                              tmp_path: Path) -> None:
    variant = project / ".replio" / "tools" / "tuned.json"
    variant.write_text(json.dumps({"override": {"file_read": {"description": TUNED}}, "disable": ["glob"]}))
    fixture = project / ".replio" / "eval" / "beta.json"
    fixture.write_text(json.dumps({**json.loads(fixture.read_text()), "tools_offered": ["list_dir", "glob"]}))
    report = tmp_path / "report.html"
    result = _run(project, server, "--tools", "default,tuned", "--html", str(report))
    assert result.exit_code == 1
    said = "fixture 'beta' in tool set 'tuned': tools_offered: no tool named 'glob'"
    assert said in result.stderr
    problems = report.read_text(encoding="utf-8").split('<ul class="problems">')[1].split("</ul>")[0]
    assert said.replace("'", "&#39;") in problems


def test_request_drift_names_the_tool_and_the_changed_part(project: Path, server: LLMServer) -> None:
    assert _run(project, server, "--tools", "tuned").exit_code == 0
    variant = project / ".replio" / "tools" / "tuned.json"
    variant.write_text(json.dumps({"override": {"file_read": {"description": TUNED + " " + "x" * 100}}}))
    result = _run(project, server, "--tools", "tuned", "--record-mode", "none")
    assert "tools[file_read].description changed" in result.stdout
    assert "--record-mode all --fixture alpha --tools tuned" in result.stdout


def test_status_says_which_recording_is_stale_and_why(project: Path, server: LLMServer) -> None:
    assert _run(project, server, "--tools", "default,tuned").exit_code == 0

    def status() -> dict[tuple[str, str], Any]:
        out = _invoke("eval", "--path", str(project), "status", "--output", "json").stdout
        return {(e["tools"], e["fixture"]): e["stale"] for e in json.loads(out)["entries"]
                if e["fixture"] in ("alpha", "beta")}

    assert status() == {("default", "alpha"): [], ("default", "beta"): [],
                        ("tuned", "alpha"): [], ("tuned", "beta"): []}
    fixture = project / ".replio" / "eval" / "alpha.json"
    data = json.loads(fixture.read_text())
    fixture.write_text(json.dumps({**data, "task": data["task"] + " Be quick."}))
    variant = project / ".replio" / "tools" / "tuned.json"
    variant.write_text(json.dumps({"override": {"file_read": {"description": "Another text."}}}))
    assert status() == {
        ("default", "alpha"): ["fixture changed"], ("default", "beta"): [],
        ("tuned", "alpha"): ["fixture changed", "tool set 'tuned' changed"],
        ("tuned", "beta"): ["tool set 'tuned' changed"],
    }
    table = _invoke("eval", "--path", str(project), "status").stdout
    assert "openai:test-model tools=tuned" in table and "3 stale cassettes" in table
    # judging is not an input of the recording: a new verifier leaves it fresh
    fixture.write_text(json.dumps({**data, "verifier": {"max_calls": 1}}))
    assert status()[("default", "alpha")] == []


def test_recordings_of_a_tool_set_that_cannot_be_found_are_flagged_not_pruned(project: Path,
                                                                            server: LLMServer) -> None:
    assert _run(project, server, "--tools", "tuned").exit_code == 0
    (project / ".replio" / "tools" / "tuned.json").unlink()
    out = json.loads(_invoke("eval", "--path", str(project), "status", "--output", "json").stdout)
    (stale,) = [e["stale"] for e in out["entries"] if e["tools"] == "tuned" and e["fixture"] == "alpha"]
    assert "no tool set named 'tuned'" in stale[0]
    assert out["orphans"] == []
    _invoke("eval", "--path", str(project), "status", "--prune")
    assert (project / "cassettes" / "openai" / "test-model" / "tools=tuned" / "alpha.yaml").is_file()


def test_strict_fails_a_variant_without_goldens_and_says_why(project: Path, server: LLMServer) -> None:
    assert _run(project, server, "--update-golden").exit_code == 0  # the default set's goldens only
    result = _run(project, server, "--tools", "default,tuned", "--strict")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "replio: exit 1: 2 fixtures without a golden (--strict; approve with --update-golden): "
        "alpha (openai:test-model tools=tuned), beta (openai:test-model tools=tuned)")
    lines = result.stdout.splitlines()
    alpha = next(line for line in lines if line.startswith("* alpha "))
    beta = next(line for line in lines if line.startswith("  beta "))
    assert alpha.split()[2:] == ["FAIL", "ok", "0.00", "0c", "pass", "ok", "1.00", "1c", "no", "golden"]
    assert beta.split()[1:] == ["pass", "ok", "0.00", "0c", "pass", "ok", "0.00", "1c", "no", "golden"]

def test_strict_with_one_tool_set_names_the_fixtures_without_a_golden(project: Path, server: LLMServer) -> None:
    result = _run(project, server, "--strict")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "replio: exit 1: 2 fixtures without a golden (--strict; approve with --update-golden): alpha, beta")


@pytest.mark.parametrize(("value", "said"), [("default,,", "entries 2, 3 are empty"), ("default,", "entry 2 is empty"),
                                             (",", "entries 1, 2 are empty"), ("", "entry 1 is empty")])
def test_an_empty_tool_set_entry_is_refused_by_position(project: Path, value: str, said: str) -> None:
    for flag in ("--tools", "--compare"):
        result = _invoke("eval", "--path", str(project), "run", flag, value)
        assert result.exit_code == 2, result.output
        assert f"Error: {flag} {value!r}: {said}; separate the names by single commas" in result.stderr


@pytest.mark.parametrize(("command", "said"), [
    (["python3", "./count.py"], "tools.count.command: './count.py' ({folder}/count.py) does not exist"),
    (["./count.py"], "tools.count.command: the program './count.py' ({folder}/count.py) does not exist"),
    (["replio-no-such-program", "-v"], "tools.count.command: the program 'replio-no-such-program' is not on PATH"),
])
def test_a_command_tool_whose_program_is_missing_fails_its_tool_set_at_load(project: Path, server: LLMServer,
                                                                            command: list[str], said: str) -> None:
    variant = project / ".replio" / "tools" / "counting.json"
    variant.write_text(json.dumps({"tools": {"count": {"description": "Count.", "command": command}}}))
    result = _run(project, server, "--tools", "default,counting")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"replio: error: {variant}: {said.format(folder=variant.parent)}")
    assert result.stderr.count("\n") == 1 and server.requests == []
    (variant.parent / "count.py").write_text("print(3)\n")
    (variant.parent / "count.py").chmod(0o755)
    if command[0] != "replio-no-such-program":  # the program there, the set loads and runs
        assert _run(project, server, "--tools", "counting").exit_code == 0


def test_a_command_tool_the_set_disables_is_not_looked_for(project: Path, server: LLMServer) -> None:
    base = project / ".replio" / "tools" / "base.json"
    base.write_text(json.dumps({"tools": {"count": {"description": "Count.", "command": ["./gone.py"]}}}))
    (project / ".replio" / "tools" / "lean.json").write_text(json.dumps({"extends": "base.json",
                                                                        "disable": ["count"]}))
    assert _run(project, server, "--tools", "lean").exit_code == 0


def test_a_fixtures_own_command_tool_whose_script_is_missing_skips_that_fixture_at_load(project: Path,
                                                                                         server: LLMServer) -> None:
    fixture = project / ".replio" / "eval" / "counting.json"
    fixture.write_text(json.dumps({"task": "Count.", "tool_permission": {"bash": "allow"}, "expected": ["count"],
                                   "tools": {"count": {"description": "Count.", "command": ["python3", "./count.py"]}}}))
    said = (f"skipped {fixture}: fixture 'counting': tools.count.command: './count.py' "
            f"({fixture.parent}/count.py) does not exist")
    listed = _invoke("eval", "--path", str(project), "list")
    assert listed.exit_code == 1 and said in listed.stderr
    ran = _run(project, server, "--fixture", "counting", "--output", "json")
    assert ran.exit_code == 1 and said in ran.stderr
    assert [f["id"] for f in json.loads(ran.stdout)["fixtures"]] == ["alpha", "beta"]
    (fixture.parent / "count.py").write_text("print(3)\n")
    assert _invoke("eval", "--path", str(project), "list").exit_code == 0


def test_status_says_a_tool_set_given_by_path_is_checked_by_giving_its_path(project: Path, server: LLMServer,
                                                                             tmp_path: Path) -> None:
    lean = tmp_path / "lean.json"
    lean.write_text(json.dumps({"disable": ["web_fetch"]}))
    recorded = _run(project, server, "--tools", str(lean), "--output", "json")
    name = json.loads(recorded.stdout)["tools"]
    status = _invoke("eval", "--path", str(project), "status", "--output", "json")
    stale = [e["stale"] for e in json.loads(status.stdout)["entries"] if e["tools"] == name and e["cassette"]]
    assert stale == [[f"tool set cannot be resolved: {name!r} was given by a file path, which its name does not "
                      "say; check it with run --tools PATH --record-mode stale"]] * 2
