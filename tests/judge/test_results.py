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
