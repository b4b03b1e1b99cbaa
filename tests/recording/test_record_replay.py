"""Record against the loopback server, then replay offline: same results, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import vcr
import yaml
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.recording.serializer import ReadableSerializer
from replio_replay.tools.builtin import builtin_tools
from tests.support.llm_server import LLMServer
from tests.support.project import run_args


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def _record(project: Path, server: LLMServer) -> dict:
    code, out = _run(*run_args(project, "--base-url", f"{server.url}/v1", "--record-mode", "once"))
    assert code == 0, out
    return json.loads(out)


def _comparable(run: dict) -> list[dict]:
    keys = ("id", "trace", "names", "accuracy", "pass", "calls", "redundant", "errors", "tokens", "status",
            "answer")
    return [{k: f[k] for k in keys} for f in run["fixtures"]]


def test_record_then_replay_offline_gives_the_same_results(project: Path, agent: LLMServer) -> None:
    recorded = _record(project, agent)
    assert [f["names"] for f in recorded["fixtures"]] == [["file_read"], ["list_dir", "glob"]]
    cassettes = sorted((project / "cassettes" / "openai" / "test-model").glob("*.yaml"))
    assert [p.name for p in cassettes] == ["alpha.yaml", "beta.yaml"]
    sent = len(agent.requests)
    agent.close()

    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0, out
    replayed = json.loads(out)
    assert _comparable(replayed) == _comparable(recorded)
    assert [f["request_drift"] for f in replayed["fixtures"]] == [[], []]
    assert len(agent.requests) == sent


def test_an_unchanged_request_is_settled_without_deepdiff(project: Path, agent: LLMServer, monkeypatch) -> None:
    _record(project, agent)

    def no_deepdiff(*args, **kwargs):
        raise AssertionError("deepdiff ran on an unchanged request")

    monkeypatch.setattr("replio_replay.recording.requests.changes", no_deepdiff)
    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0, out
    assert [f["request_drift"] for f in json.loads(out)["fixtures"]] == [[], []]


def test_replaying_twice_is_byte_identical(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    first = _run(*run_args(project, "--record-mode", "none", "--jobs", "1"))
    second = _run(*run_args(project, "--record-mode", "none", "--jobs", "2"))
    assert first == second


def test_ci_environment_defaults_to_replay(project: Path, agent: LLMServer, monkeypatch) -> None:
    monkeypatch.setenv("CI", "true")
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1"))
    assert result.exit_code == 2
    assert agent.requests == []
    assert result.stderr == (f"replio: error: no cassettes for openai:test-model: {project}/cassettes/openai/test-model/ "
                             "does not exist; recorded: none yet; a replay needs them: record with --record-mode once "
                             "(this needs the provider to be reachable)\n")


def test_a_replay_of_a_model_never_recorded_is_one_error_with_the_nearest(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    agent.close()
    result = CliRunner().invoke(main, run_args(project, "--record-mode", "none", "--model", "test-modle"))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"replio: error: no cassettes for openai:test-modle: {project}/cassettes/openai/test-modle/ does not exist; "
        "did you mean 'openai:test-model'? recorded: openai:test-model; a replay needs them: record with "
        "--record-mode once (this needs the provider to be reachable)\n")
    (project / "cassettes" / "openai" / "test-model" / "beta.yaml").unlink()  # a folder with a cassette missing:
    code, out = _run(*run_args(project, "--record-mode", "none"))  # the fixture's own error, as before
    assert code == 1
    assert "no cassette at" in json.loads(out)["fixtures"][1]["error"]


def test_recording_a_near_miss_of_a_recorded_model_says_so(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    result = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1", "--model", "test-modle"))
    assert result.exit_code == 0, result.output
    assert ("replio: note: nothing recorded yet for openai:test-modle: did you mean 'test-model'? "
            "this run records it as a new model\n") in result.stderr
    again = CliRunner().invoke(main, run_args(project, "--base-url", f"{agent.url}/v1", "--model", "other"))
    assert "nothing recorded yet" not in again.stderr  # no near miss: a new model, nothing to say


def test_flag_beats_ci_environment(project: Path, agent: LLMServer, monkeypatch) -> None:
    monkeypatch.setenv("CI", "true")
    code, _ = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "once"))
    assert code == 0
    assert len(agent.requests) == 4


def test_changed_tool_description_is_request_drift_named_by_tool(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    old = next(t.description for t in builtin_tools() if t.name == "grep")
    (project / ".replio" / "tools.json").write_text(json.dumps({"override": {"grep": {
        "description": "Search with a regex."}}}))

    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0
    drift = json.loads(out)["fixtures"][0]["request_drift"]
    assert drift == [{"path": "tools[grep].description", "kind": "changed",
                      "old": old, "new": "Search with a regex.", "role": "agent"}]

    code, _ = _run(*run_args(project, "--record-mode", "none", "--strict"))
    assert code == 1


def test_missing_cassette_is_an_error_for_that_fixture_only(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    missing = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    missing.unlink()
    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 1
    alpha, beta = json.loads(out)["fixtures"]
    assert alpha["status"] == "error"
    assert str(missing) in alpha["error"] and "--record-mode once" in alpha["error"]
    assert beta["status"] == "ok" and beta["names"] == ["list_dir", "glob"]


def test_truncated_cassette_names_file_and_line(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    text = path.read_text()
    path.write_text(text[: len(text) // 2] + "\n  - request: [unclosed\n")
    code, out = _run(*run_args(project, "--record-mode", "none"))
    alpha, beta = json.loads(out)["fixtures"]
    assert code == 1
    assert alpha["status"] == "error"
    assert str(path) in alpha["error"] and "line" in alpha["error"]
    assert beta["status"] == "ok"


def test_wrong_shape_cassette_is_an_error(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "beta.yaml"
    path.write_text("interactions: 3\n")
    code, out = _run(*run_args(project, "--record-mode", "none"))
    beta = json.loads(out)["fixtures"][1]
    assert code == 1
    assert beta["status"] == "error" and "wrong shape" in beta["error"] and str(path) in beta["error"]


def test_conversation_longer_than_cassette_names_the_request(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    data = yaml.safe_load(path.read_text())
    data["interactions"] = data["interactions"][:1]
    path.write_text(yaml.safe_dump(data))
    code, out = _run(*run_args(project, "--record-mode", "none"))
    alpha = json.loads(out)["fixtures"][0]
    assert code == 1
    assert "request #2" in alpha["error"] and "--record-mode all --fixture alpha" in alpha["error"]


def test_new_episodes_records_requests_beyond_the_cassette(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    data = yaml.safe_load(path.read_text())
    data["interactions"] = data["interactions"][:1]
    path.write_text(yaml.safe_dump(data))
    before = len(agent.requests)
    code, _ = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "new_episodes"))
    assert code == 0
    assert len(agent.requests) == before + 1
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 2


def test_record_mode_all_records_again(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    before = len(agent.requests)
    code, _ = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "all"))
    assert code == 0
    assert len(agent.requests) == before + 4
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 2


def test_no_cassettes_neither_reads_nor_writes(project: Path, agent: LLMServer) -> None:
    code, out = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--no-cassettes"))
    assert code == 0
    assert not (project / "cassettes").exists()
    assert all(f["request_drift"] is None for f in json.loads(out)["fixtures"])


def test_cassette_is_readable_and_carries_provenance(project: Path, agent: LLMServer) -> None:
    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    data = yaml.safe_load(path.read_text())
    header = data["replio"]
    assert header["provider"] == "openai" and header["model"] == "test-model"
    assert header["base_url_host"] == agent.url.removeprefix("http://")
    assert {"fixture_hash", "tool_schema_hash", "replio_version", "recorded"} <= set(header)
    first = data["interactions"][0]
    assert first["request"]["body"]["json"]["model"] == "test-model"
    assert first["response"]["body"]["json"]["choices"][0]["finish_reason"] == "tool_calls"
    assert "\\n" not in path.read_text().split("interactions:")[1].split("messages:")[0]


def test_cassette_loads_through_vcrpy(project: Path, agent: LLMServer) -> None:
    import httpx

    _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    my_vcr = vcr.VCR(record_mode="none", match_on=["method", "path"])
    my_vcr.register_serializer("replio", ReadableSerializer())
    agent.close()
    with my_vcr.use_cassette(str(path), serializer="replio") as cassette:
        response = httpx.post(f"{agent.url}/v1/chat/completions", json={})
    assert len(cassette) == 2
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "file_read"


def test_recording_and_replay_go_through_vcrpy_cassettes_never_its_patchers(project: Path, agent: LLMServer,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from vcr.cassette import Cassette
    from vcr.patch import CassettePatcherBuilder

    def no_patchers(self: CassettePatcherBuilder) -> None:
        raise AssertionError("vcrpy's patchers were built: httpx would be patched for every fixture at once")

    appended: list[Cassette] = []
    played: list[Cassette] = []
    append, play = Cassette.append, Cassette.play_response
    monkeypatch.setattr(CassettePatcherBuilder, "build", no_patchers)
    monkeypatch.setattr(Cassette, "append", lambda self, *a: (appended.append(self), append(self, *a))[1])
    monkeypatch.setattr(Cassette, "play_response", lambda self, r: (played.append(self), play(self, r))[1])
    _record(project, agent)
    assert sorted(Path(c.path).name for c in appended) == ["alpha.yaml"] * 2 + ["beta.yaml"] * 2
    assert played == []
    agent.close()
    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0, out
    assert sorted(Path(c.path).name for c in played) == ["alpha.yaml"] * 2 + ["beta.yaml"] * 2
    assert all(c.all_played and c.write_protected for c in played)


def test_new_episodes_never_answers_a_request_with_one_recorded_in_the_same_run(project: Path,
                                                                                agent: LLMServer) -> None:
    """Every request goes to the same path: vcrpy would replay the interaction just recorded to the next one."""
    recorded = _record(project, agent)
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    path.write_text(path.read_text().split("interactions:")[0] + "interactions: []\n")
    before = len(agent.requests)
    code, out = _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--record-mode", "new_episodes"))
    assert code == 0, out
    assert len(agent.requests) == before + 2  # alpha's two turns, both sent; beta replayed
    assert _comparable(json.loads(out)) == _comparable(recorded)
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 2


def test_the_canonical_json_body_matcher_is_registered_the_vcrpy_way(tmp_path: Path) -> None:
    from vcr.matchers import requests_match
    from vcr.request import Request

    from replio_replay.recording.cassette import BODY_MATCHER, open_cassette
    from replio_replay.recording.modes import RecordMode
    from replio_replay.recording.persister import AtomicPersister

    cassette, config = open_cassette(tmp_path / "c.yaml", RecordMode.ONCE, ReadableSerializer(), AtomicPersister(),
                                     load=False)
    matcher = config.matchers[BODY_MATCHER]
    stored = Request("POST", "http://h/v1", b'{"a":1,"b":[2]}', {})
    assert requests_match(Request("POST", "http://h/v1", b'{"b": [2], "a": 1}', {}), stored, [matcher])
    assert not requests_match(Request("POST", "http://h/v1", b'{"a":1,"b":[3]}', {}), stored, [matcher])
    assert type(cassette) is vcr.cassette.Cassette and cassette.record_mode == vcr.mode.ONCE


@pytest.mark.parametrize("jobs", ["1", "8"])
def test_concurrent_recording_keeps_cassettes_apart(project: Path, agent: LLMServer, jobs: str) -> None:
    _run(*run_args(project, "--base-url", f"{agent.url}/v1", "--jobs", jobs))
    folder = project / "cassettes" / "openai" / "test-model"
    for fixture, word in (("alpha", "ALPHA"), ("beta", "BETA")):
        data = yaml.safe_load((folder / f"{fixture}.yaml").read_text())
        tasks = {i["request"]["body"]["json"]["messages"][1]["content"].split(":")[0]
                 for i in data["interactions"]}
        assert tasks == {word}


def test_compressed_bodies_are_stored_decoded(project: Path, llm_server: LLMServer) -> None:
    import gzip

    from tests.support.agents import openai_agent
    from tests.support.llm_server import Reply

    agent = openai_agent({"ALPHA": ["done"], "BETA": ["done"]})

    def gzipped(seen):
        reply = agent(seen)
        return Reply(body=gzip.compress(json.dumps(reply.json).encode()),
                     headers={"content-type": "application/json", "content-encoding": "gzip"})

    llm_server.handler = gzipped
    recorded = _record(project, llm_server)
    llm_server.close()
    path = project / "cassettes" / "openai" / "test-model" / "alpha.yaml"
    data = yaml.safe_load(path.read_text())
    response = data["interactions"][0]["response"]
    assert response["body"]["json"]["choices"][0]["message"]["content"] == "done"
    assert "content-encoding" not in response["headers"]
    code, out = _run(*run_args(project, "--record-mode", "none"))
    assert code == 0
    assert _comparable(json.loads(out)) == _comparable(recorded)


def _long_project(root: Path, server: LLMServer) -> list[str]:
    """A fixture that calls a stub 30 times, each told 99 KB: the conversation resends every earlier
    answer, so its requests, written out, hold 46 MB. The `run` arguments, without the record mode."""
    from tests.support.agents import openai_agent

    server.handler = openai_agent({"LONG": [[("lookup", {"n": n})] for n in range(30)] + ["Done."]})
    fixture = {"task": "LONG: look up 30 things.", "max_turns": 40, "expected": None,
               "tools": {"lookup": {"description": "Look a thing up.", "result": "a" * 99_000,
                                    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}
    (root / ".replio" / "eval").mkdir(parents=True)
    (root / ".replio" / "eval" / "long.json").write_text(json.dumps(fixture))
    (root / ".replio" / "config.json").write_text(json.dumps({"provider": "openai:test-model", "bundled": False}))
    return ["eval", "--path", str(root), "run", "--output", "json", "--base-url", f"{server.url}/v1"]


def test_a_long_run_with_a_large_stub_answer_records_and_replays(tmp_path: Path, llm_server: LLMServer) -> None:
    args = _long_project(tmp_path / "p", llm_server)
    code, out = _run(*args, "--record-mode", "once")
    recorded = json.loads(out)["fixtures"][0]
    assert (code, recorded["status"], recorded["calls"]) == (0, "ok", 30), out
    code, out = _run(*args, "--record-mode", "none")
    replayed = json.loads(out)["fixtures"][0]
    assert code == 0 and replayed["error"] is None, out
    assert replayed["request_drift"] == [] and replayed["answer"] == "Done." and replayed["calls"] == 30


def test_a_recording_a_replay_would_refuse_is_refused_as_it_is_written(tmp_path: Path, llm_server: LLMServer,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from replio_replay.recording import yamlcodec

    monkeypatch.setattr(yamlcodec, "MAX_EXPANDED", 1_000_000)  # the reader's bound, and so the writer's
    args = _long_project(tmp_path / "p", llm_server)
    code, out = _run(*args, "--record-mode", "once")
    long = json.loads(out)["fixtures"][0]
    cassette = tmp_path / "p" / "cassettes" / "openai" / "test-model" / "long.yaml"
    assert (code, long["status"]) == (1, "error") and not cassette.exists()
    assert long["error"] == (f"cassette {cassette} was not written: a replay would refuse it, as it expands its "
                             "aliases beyond 1,000,000 values (31 requests, each resending the conversation so far); "
                             "lower the fixture's max_turns or the size of what its tools return, and record again")


def test_what_the_serializer_writes_is_checked_with_the_readers_bounds() -> None:
    from replio_replay.errors import CassetteError
    from replio_replay.recording.yamlcodec import dump_yaml, refusal

    assert refusal(dump_yaml({"a": [1, "two", {"three": None}]})) is None
    deep: list = []
    for _ in range(150):
        deep = [deep]
    body = json.dumps({"choices": [], "extra": deep}).encode()
    interaction = {"request": {"method": "POST", "uri": "http://h/v1", "body": b"{}", "headers": {}},
                   "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": body}}}
    with pytest.raises(CassetteError, match=r"^cassette deep.yaml was not written: a replay would refuse it, as it "
                                            r"nests deeper than 100 levels at line \d+ \(1 request,"):
        ReadableSerializer(source="deep.yaml").serialize({"version": 1, "interactions": [interaction]})


def test_a_replay_under_another_base_url_path_names_the_paths(project: Path, agent: LLMServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess

    from tests.helpers import replio_command, replio_in_process

    args = run_args(project, "--provider", "llamacpp:test-model", "--fixture", "alpha")
    env = {**os.environ, "LLAMACPP_BASE_URL": f"{agent.url}/v1"}  # read by a real replio process
    recorded = subprocess.run([replio_command(), *args], capture_output=True, text=True, env=env, timeout=120)
    assert recorded.returncode == 0, recorded.stderr
    monkeypatch.setenv("LLAMACPP_BASE_URL", "http://127.0.0.1:9")  # the same server, its /v1 left out
    replayed = replio_in_process(*args)  # what the replay says: in the test's process
    alpha = json.loads(replayed.stdout)["fixtures"][0]
    assert replayed.returncode == 1 and alpha["status"] == "error"
    assert "went further" not in alpha["error"]
    assert ("request #1 (POST /chat/completions) has no recording" in alpha["error"]
            and "its path is not one the cassette holds (/v1/chat/completions): the provider's base URL has "
                "another path than when it was recorded (recorded under /v1, now under /)" in alpha["error"]), alpha
