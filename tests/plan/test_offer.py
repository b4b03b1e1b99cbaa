"""What a fixture is offered: its own tools, `tools_offered` and prompt over a tool set, and the
tool names it mentions that the set cannot satisfy."""

from __future__ import annotations

import pytest

from replio_replay.errors import ToolSetError
from replio_replay.plan.offer import for_fixture, name_problems
from replio_replay.tools.toolset import ToolSet
from tests.helpers import builtin_toolset, make_fixture
from tests.tools.test_resolve import BUILTINS, link, resolve, stub, tool_of

# for_fixture --------------------------------------------------------------------------------------


def test_a_fixture_without_additions_gets_the_set_itself() -> None:
    base = builtin_toolset()
    assert for_fixture(base, make_fixture(), "/p/.replio/eval/fx.json") is base


def test_a_fixtures_own_tool_is_added() -> None:
    base = builtin_toolset()
    fixture = make_fixture(tools={"lookup": stub(result="shipped")})
    toolset = for_fixture(base, fixture, "/p/.replio/eval/fx.json")
    assert toolset.names == (*BUILTINS, "lookup")
    assert toolset.name == base.name
    assert toolset.system_prompt == base.system_prompt
    assert "lookup" in toolset.known
    lookup = tool_of(toolset, "lookup")
    assert lookup.source == "fixture 'fx' (/p/.replio/eval/fx.json)"
    assert lookup.invoke({}, None) == "shipped"  # type: ignore[arg-type]
    assert base.names == BUILTINS


def test_a_fixture_tool_colliding_with_a_set_tool_names_the_fixture_and_field() -> None:
    with pytest.raises(ToolSetError) as info:
        for_fixture(builtin_toolset(), make_fixture(tools={"grep": stub()}), "x.json")
    assert str(info.value).startswith("fixture 'fx' in tool set 'default': tools.grep: the tool set already has")


def test_a_fixture_tool_colliding_with_a_disabled_tool_is_an_error() -> None:
    base = resolve(link("/p/tools.json", disable=["grep"]), name="slim")
    with pytest.raises(ToolSetError, match=r"^fixture 'fx' in tool set 'slim': tools\.grep: the tool set already has"):
        for_fixture(base, make_fixture(tools={"grep": stub()}), "x.json")


def test_tools_offered_restricts_in_offer_order() -> None:
    fixture = make_fixture(tools={"lookup": stub()},
                           tools_offered=["lookup", "grep", "file_read"])
    toolset = for_fixture(builtin_toolset(), fixture, "x.json")
    assert toolset.names == ("file_read", "grep", "lookup")
    assert [spec["name"] for spec in toolset.specs] == ["file_read", "grep", "lookup"]
    assert toolset.known >= frozenset(BUILTINS) | {"lookup"}


def test_tools_offered_may_be_empty() -> None:
    toolset = for_fixture(builtin_toolset(), make_fixture(tools_offered=[]), "x.json")
    assert toolset.names == ()
    assert toolset.known == frozenset(BUILTINS)


def test_an_unknown_tools_offered_name_suggests_the_closest() -> None:
    with pytest.raises(ToolSetError) as info:
        for_fixture(builtin_toolset(), make_fixture(tools_offered=["grep", "gerp"]), "x.json")
    assert str(info.value) == (
        "fixture 'fx' in tool set 'default': tools_offered: no tool named 'gerp'; did you mean 'grep'?"
    )


def test_tools_offered_may_not_name_a_disabled_tool() -> None:
    base = resolve(link("/p/tools.json", disable=["grep"]))
    with pytest.raises(ToolSetError, match=r"^fixture 'fx' in tool set 't': tools_offered: no tool named 'grep'"):
        for_fixture(base, make_fixture(tools_offered=["grep"]), "x.json")


def test_a_fixture_system_prompt_wins() -> None:
    base = resolve(link("/p/tools.json", system_prompt="From the set."))
    toolset = for_fixture(base, make_fixture(system_prompt="From the fixture."), "x.json")
    assert toolset.system_prompt == "From the fixture."
    assert toolset.names == base.names
    assert toolset.digest != base.digest
    assert for_fixture(base, make_fixture(tools_offered=list(BUILTINS)), "x").system_prompt == (
        "From the set."
    )


# name_problems ------------------------------------------------------------------------------------


def slim() -> ToolSet:
    """The built-ins with grep disabled, named `slim`."""
    return resolve(link("/p/tools.json", disable=["grep"]), name="slim")


def test_a_fixture_naming_only_offered_tools_has_no_problems() -> None:
    fixture = make_fixture(
        expected=["glob", "file_read"],
        verifier={"exact": ["glob", "file_read"], "must_include": ["file_read"],
                  "avoid": ["run_command"], "args": {"file_read": {"path": "a.py"}}},
        tools_deny=["web_fetch"],
    )
    assert name_problems(fixture, slim()) == []


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"expected": ["file_read", "grep"]}, "expected"),
        ({"verifier": {"exact": ["grep"]}}, "verifier.exact"),
        ({"verifier": {"must_include": ["grep"]}}, "verifier.must_include"),
        ({"verifier": {"args": {"grep": {"pattern": "x"}}}}, "verifier.args"),
    ],
)
def test_a_required_tool_that_is_not_offered_is_a_problem(data: dict, field: str) -> None:
    assert name_problems(make_fixture(**data), slim()) == [
        f"{field}: 'grep' is not offered in tool set 'slim', so the check can never pass"
    ]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"expected": ["file_reed"]}, "expected"),
        ({"verifier": {"exact": ["file_reed"]}}, "verifier.exact"),
        ({"verifier": {"must_include": ["file_reed"]}}, "verifier.must_include"),
        ({"verifier": {"args": {"file_reed": {"path": "x"}}}}, "verifier.args"),
    ],
)
def test_a_required_typo_is_a_problem_with_a_suggestion(data: dict, field: str) -> None:
    assert name_problems(make_fixture(**data), slim()) == [
        f"{field}: no tool named 'file_reed' in tool set 'slim', so the check can never pass; "
        "did you mean 'file_read'?"
    ]


def test_exact_true_names_no_tools_itself() -> None:
    fixture = make_fixture(expected=["file_read"], verifier={"exact": True})
    assert name_problems(fixture, slim()) == []


@pytest.mark.parametrize(
    "data", [{"verifier": {"avoid": ["grep"]}}, {"tools_deny": ["grep"]}]
)
def test_avoiding_or_denying_a_disabled_tool_is_fine(data: dict) -> None:
    assert name_problems(make_fixture(**data), slim()) == []


@pytest.mark.parametrize(
    ("data", "field"),
    [({"verifier": {"avoid": ["run_comand"]}}, "verifier.avoid"),
     ({"tools_deny": ["run_comand"]}, "tools_deny")],
)
def test_avoiding_or_denying_a_typo_is_a_problem(data: dict, field: str) -> None:
    assert name_problems(make_fixture(**data), slim()) == [
        f"{field}: no tool named 'run_comand' in tool set 'slim', so it has no effect; "
        "check the spelling; did you mean 'run_command'?"
    ]


def test_a_name_repeated_in_a_field_is_reported_once() -> None:
    fixture = make_fixture(expected=["grep", "file_read", "grep"])
    assert len(name_problems(fixture, slim())) == 1


def test_problems_are_listed_per_field_in_order() -> None:
    fixture = make_fixture(
        expected=["grep"],
        verifier={"must_include": ["grep"], "avoid": ["nope_tool"]},
        tools_deny=["also_nope"],
    )
    fields = [p.split(":")[0] for p in name_problems(fixture, slim())]
    assert fields == ["expected", "verifier.must_include", "verifier.avoid", "tools_deny"]


def test_a_tool_left_out_by_tools_offered_is_not_offered() -> None:
    fixture = make_fixture(tools_offered=["file_read"], expected=["glob"],
                           verifier={"avoid": ["grep"]})
    toolset = for_fixture(builtin_toolset(), fixture, "x.json")
    assert name_problems(fixture, toolset) == [
        "expected: 'glob' is not offered in tool set 'default', so the check can never pass"
    ]


def test_a_fixtures_own_tool_satisfies_its_checks() -> None:
    fixture = make_fixture(tools={"lookup": stub()}, tools_offered=["lookup"],
                           expected=["lookup"], verifier={"must_include": ["lookup"]})
    assert name_problems(fixture, for_fixture(builtin_toolset(), fixture, "x.json")) == []
    problems = name_problems(fixture, builtin_toolset())
    assert problems[0].startswith("expected: no tool named 'lookup' in tool set 'default'")
