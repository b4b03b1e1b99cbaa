"""The result model's readable side: tool names shown by their titles."""

from __future__ import annotations

from replio_replay.judge.results import FixtureResult, JudgeVerdict, RunResult, Summary


def test_reasons_show_titles_for_whole_tool_names_only() -> None:
    result = FixtureResult(id="fx", names=["math-factorial"], titles={"math-factorial": "math.factorial"},
                           reasons=["1 calls ['math-factorial'], expected 1 ['math-factorial-x'] (strict)",
                                    "call 1: math-factorial's argument 'n' is 6; x.math-factorial stays"])
    assert result.shown("math-factorial") == "math.factorial" and result.shown("grep") == "grep"
    assert result.shown_reasons == ["1 calls ['math.factorial'], expected 1 ['math-factorial-x'] (strict)",
                                    "call 1: math.factorial's argument 'n' is 6; x.math-factorial stays"]
    assert FixtureResult(id="fx", reasons=["r"]).shown_reasons == ["r"]


def test_the_judges_verdicts_are_in_the_json_only_when_judged_and_read_back() -> None:
    verdict = JudgeVerdict(rubric="a", verdict="no", reason="r", passed=False)
    error = verdict.model_copy(update={"verdict": "error", "raw": "not json"})
    run = RunResult(provider="p", model="m", summary=Summary(), fixtures=[
        FixtureResult(id="one", judge=verdict), FixtureResult(id="list", judge=[verdict, error]),
        FixtureResult(id="none")])
    data = run.to_json()
    assert data["fixtures"][0]["judge"] == {"rubric": "a", "verdict": "no", "reason": "r", "passed": False}
    assert [v.get("raw") for v in data["fixtures"][1]["judge"]] == [None, "not json"]
    assert "raw" not in data["fixtures"][1]["judge"][0] and "judge" not in data["fixtures"][2]
    assert RunResult.model_validate(data) == run


def test_a_fixtures_group_is_in_the_json_only_when_it_declares_one() -> None:
    run = RunResult(provider="p", model="m", summary=Summary(),
                    fixtures=[FixtureResult(id="alone"), FixtureResult(id="kin", group="family")])
    data = run.to_json()
    assert "group" not in data["fixtures"][0] and data["fixtures"][1]["group"] == "family"
    assert RunResult.model_validate(data) == run


def test_the_result_models_are_built_once_by_whichever_thread_comes_first() -> None:
    """In a fresh interpreter the models are deferred; sixteen threads making results at once
    build each model once (pydantic's own build is not thread-safe), and every result is whole."""
    import subprocess
    import sys

    code = """
import threading
from pydantic._internal import _model_construction as mc
from replio_replay.judge import results
from replio_replay.judge.results import FixtureResult, RunResult, Summary, TraceCall
assert not any(m.__pydantic_complete__ for m in (FixtureResult, RunResult, Summary, TraceCall))
built = []
complete = mc.complete_model_class
def counted(cls, *args, **kwargs):
    built.append(cls.__name__)
    return complete(cls, *args, **kwargs)
mc.complete_model_class = counted
from replio_replay.run.scoring import judge_transcript
from replio_replay.run.engine import Transcript
from replio_replay.fixtures.model import Fixture
fixture = Fixture.model_validate({"id": "fx", "task": "t"})
fixture.scripted_turns  # as a run's plan does, on its one thread, before any fixture runs
start = threading.Barrier(16)
made = []
def one():
    start.wait()
    made.append(judge_transcript(fixture, Transcript(answer="done")))
threads = [threading.Thread(target=one) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
assert len(made) == 16 and all(r.id == "fx" and r.answer == "done" for r in made), made
assert sorted(built) == sorted(set(built)) and "FixtureResult" in built, built
assert all(m.__pydantic_complete__ for m in (FixtureResult, RunResult, Summary, TraceCall))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
