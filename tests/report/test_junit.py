"""JUnit XML through the CLI, parsed back and checked against the schema's required parts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from replio_replay.cli import main
from tests.support.llm_server import LLMServer
from tests.support.project import run_args


def _junit_args(project: Path, *extra: str) -> list[str]:
    args = run_args(project, *extra)
    args[args.index("--output") + 1] = "junit"
    return args


def test_junit_output_has_the_required_elements(project: Path, agent: LLMServer) -> None:
    url = f"{agent.url}/v1"
    CliRunner().invoke(main, run_args(project, "--base-url", url, "--update-golden"), catch_exceptions=False)
    golden = project / "golden" / "openai" / "test-model" / "alpha.json"
    data = json.loads(golden.read_text())
    data["answer"] = "approved earlier"
    golden.write_text(json.dumps(data))
    (project / "cassettes" / "openai" / "test-model" / "beta.yaml").write_text("interactions: [\n")
    agent.close()

    result = CliRunner().invoke(main, _junit_args(project, "--record-mode", "none"))
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "openai:test-model"
    for element in (root, suite):
        assert {"tests", "failures", "errors"} <= set(element.attrib)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"alpha", "beta"}
    for case in cases.values():
        assert case.get("classname") == "replio.openai.test-model"
        assert case.get("time") is not None
    failure = cases["alpha"].find("failure")
    assert failure is not None and "answer_changed" in failure.text
    assert failure.get("message") == "alpha: drift from golden (1 change)"
    error = cases["beta"].find("error")
    assert error is not None and "does not parse" in error.get("message")
    props = {p.get("name"): p.get("value") for p in cases["alpha"].find("properties")}
    assert props["calls"] == "1" and props["names"] == "file_read" and props["pass"] == "true"


def test_junit_xml_and_output_file_alongside_the_table(project: Path, agent: LLMServer, tmp_path: Path) -> None:
    junit, out = tmp_path / "report.xml", tmp_path / "run.json"
    args = run_args(project, "--base-url", f"{agent.url}/v1", "--junit-xml", str(junit), "--output-file", str(out))
    args[args.index("--output") + 1] = "table"
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0
    assert "openai:test-model" in result.stdout and "fixture" in result.stdout
    assert ET.parse(junit).getroot().get("tests") == "2"
    assert [f["id"] for f in json.loads(out.read_text())["fixtures"]] == ["alpha", "beta"]


def test_reasons_go_to_system_out_and_fail_only_when_required(project: Path, agent: LLMServer) -> None:
    fixture = project / ".replio" / "eval" / "alpha.json"
    fixture.write_text(json.dumps({**json.loads(fixture.read_text()), "verifier": {"must_include": ["grep"]}}))
    url = f"{agent.url}/v1"
    result = CliRunner().invoke(main, _junit_args(project, "--base-url", url))
    cases = {c.get("name"): c for c in ET.fromstring(result.stdout).iter("testcase")}
    assert cases["alpha"].find("system-out").text == "must_include: grep was not called\n"
    assert cases["alpha"].find("failure") is None  # a measurement, not a failed test
    assert cases["beta"].find("system-out") is None
    assert all(float(c.get("time")) > 0 for c in cases.values())  # each fixture's real duration

    config = project / ".replio" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "require_pass": ["alpha"]}))
    result = CliRunner().invoke(main, _junit_args(project, "--record-mode", "none"))
    cases = {c.get("name"): c for c in ET.fromstring(result.stdout).iter("testcase")}
    failure = cases["alpha"].find("failure")
    assert failure is not None and "the verifier failed: must_include: grep was not called" in failure.text
    assert cases["alpha"].find("system-out").text == "must_include: grep was not called\n"


def test_an_unjudged_fixture_is_a_skipped_testcase_and_require_pass_fails_it() -> None:
    from replio_replay.judge.metrics import summarize
    from replio_replay.judge.results import FixtureResult, RunResult
    from replio_replay.report.junit import junit_xml

    unjudged = FixtureResult(id="imported", passed=False, unjudged=True, drift=[])
    run = RunResult(provider="openai", model="m", fixtures=[unjudged], summary=summarize([unjudged]))
    root = ET.fromstring(junit_xml([run]))
    case = root.find(".//testcase")
    assert case is not None and case.find("skipped") is not None and case.find("failure") is None
    assert root.get("skipped") == "1" and root.find("testsuite").get("skipped") == "1"  # type: ignore[union-attr]
    required = ET.fromstring(junit_xml([run], require_pass=["imported"])).find(".//testcase/failure")
    assert required is not None and "unjudged: it has no verifier yet" in (required.text or "")
