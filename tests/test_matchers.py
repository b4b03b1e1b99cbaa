"""Matchers: parse_matcher, Matcher.test, matches_all, shown, ArgExpectation in pydantic models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from replio_replay.fixtures.matchers import (
    OPERATORS,
    ArgExpectation,
    Matcher,
    matches,
    matches_all,
    parse_matcher,
    shown,
)

# parse_matcher ------------------------------------------------------------------------------------


@pytest.mark.parametrize("literal", [
    "text", "$regex", 0, 3.5, True, None, [1, "$min"], {}, {"plain": 1}, {"nested": {"$min": 1}},
])
def test_literals_pass_through_unchanged(literal: Any) -> None:
    parsed = parse_matcher(literal)
    assert parsed == literal
    assert not isinstance(parsed, Matcher)


def test_a_matcher_passes_through_as_itself() -> None:
    m = Matcher("$regex", "x")
    assert parse_matcher(m) is m


@pytest.mark.parametrize(("written", "expected"), [
    ({"$regex": "^a+$"}, Matcher("$regex", "^a+$")),
    ({"$contains": "needle"}, Matcher("$contains", "needle")),
    ({"$contains": ""}, Matcher("$contains", "")),
    ({"$min": 0}, Matcher("$range", (0, None))),
    ({"$max": 2.5}, Matcher("$range", (None, 2.5))),
    ({"$min": -1, "$max": 1}, Matcher("$range", (-1, 1))),
])
def test_each_operator_parses_into_a_matcher(written: dict[str, Any], expected: Matcher) -> None:
    assert parse_matcher(written) == expected


def test_an_unknown_operator_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        parse_matcher({"$regx": "a"})
    message = str(info.value)
    assert "'$regx'" in message
    for op in OPERATORS:
        assert repr(op) in message


def test_a_plain_key_beside_an_operator_is_unknown() -> None:
    with pytest.raises(ValueError, match="unknown check 'flags'"):
        parse_matcher({"$regex": "a", "flags": "i"})


@pytest.mark.parametrize(("written", "message"), [
    ({"$regex": 1}, "$regex needs a string, not int"),
    ({"$contains": ["a"]}, "$contains needs a string, not list"),
    ({"$contains": None}, "$contains needs a string, not NoneType"),
    ({"$min": "1"}, "$min needs a number, not str"),
    ({"$max": True}, "$max needs a number, not bool"),
    ({"$min": None}, "$min needs a number, not NoneType"),
])
def test_wrong_operand_types_are_refused(written: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_matcher(written)
    assert message in str(info.value)


@pytest.mark.parametrize("written", [
    {"$regex": "a", "$contains": "a"},
    {"$regex": "a", "$min": 1},
    {"$contains": "a", "$max": 1},
])
def test_text_and_other_checks_together_are_refused(written: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="give one check per object"):
        parse_matcher(written)


def test_an_invalid_regex_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        parse_matcher({"$regex": "(unclosed"})
    assert "invalid regular expression '(unclosed'" in str(info.value)


@pytest.mark.parametrize(("pattern", "lacking"), [
    ("(?is)(?=.*login)(?=.*py)", "lookahead assertions are not supported"),
    ("^(?!.*notes)", "lookahead assertions are not supported"),
    ("(?<=def )main", "lookbehind assertions are not supported"),
    (r"(a)\1", "backreferences are not supported"),
    ("(?P<q>a)(?P=q)", "backreferences are not supported"),
    ("(?>a+)b", "atomic groups are not supported"),
    ("a*+b", "possessive quantifiers are not supported"),
])
def test_what_re2_lacks_is_refused_saying_so_and_how_to_write_it(pattern: str, lacking: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_matcher({"$regex": pattern})
    message = str(info.value)
    assert message.startswith(f"invalid regular expression '{pattern}': {lacking} "
                              "($regex uses RE2 syntax, a linear-time engine); ")
    if "assertions" in lacking:
        assert message.endswith('write each condition as its own matcher: {"$all": [{"$regex": "a"}, '
                                '{"$regex": "b"}]}, and one that must not hold as {"$not": {"$regex": "c"}}')
    elif "backreferences" in lacking:
        assert message.endswith("; rewrite the pattern without them")


#: Patterns on which a backtracking engine (Python's `re`) takes exponential time, with the text
#: that makes it: 2^34 ways to split the a's; 28 letters then a character that no `\w` takes.
BACKTRACKING = [("^(a+)+$", "a" * 34 + "b"), (r"^(\w+\s?)+$", "abcdefghijklmnopqrstuvwxyzab!")]


def test_regex_takes_linear_time_on_patterns_that_make_others_backtrack() -> None:
    """In a child process: a backtracking engine would not return for hours (nor take a signal)."""
    code = (
        "import json, sys, time\n"
        "from replio_replay.fixtures.matchers import parse_matcher\n"
        "for pattern, text in json.loads(sys.argv[1]):\n"
        "    matcher = parse_matcher({'$regex': pattern})\n"
        "    start = time.perf_counter()\n"
        "    held = matcher.test(text) or matcher.test(text * 100)\n"
        "    print(held, time.perf_counter() - start)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", code, json.dumps(BACKTRACKING)], capture_output=True, text=True,
                          env=env, timeout=20)
    assert done.returncode == 0, done.stderr
    results = [line.split() for line in done.stdout.splitlines()]
    assert [held for held, _ in results] == ["False", "False"]
    assert all(float(seconds) < 0.05 for _, seconds in results), results


def test_regex_holding_a_large_text_whole_is_fast() -> None:
    text = ("a" * 999 + "\n") * 10_000  # 10 MB that the group repeats over, line after line
    matcher = parse_matcher({"$regex": r"^(\w+\s?)+$"})
    start = time.perf_counter()
    assert matcher.test(text)
    assert time.perf_counter() - start < 0.5  # captured groups would take RE2 about 2 s


def test_regex_matches_a_text_with_a_lone_surrogate() -> None:
    assert Matcher("$regex", "^a.b$").test("a\udcffb")  # one character, as Python counts it
    assert Matcher("$regex", "(?i)KEY").test("\ud800 key")


# Matcher.test -------------------------------------------------------------------------------------


def test_bounds_are_inclusive() -> None:
    m = Matcher("$range", (1, 3))
    assert [m.test(v) for v in (0.99, 1, 2.5, 3, 3.01)] == [False, True, True, True, False]
    assert Matcher("$range", (0, None)).test(10**12)
    assert not Matcher("$range", (None, 0)).test(0.001)


def test_bools_are_not_numbers_for_bounds() -> None:
    assert not Matcher("$range", (0, None)).test(True)
    assert not Matcher("$range", (None, 1)).test(False)
    assert not Matcher("$range", (0, 1)).test(True)


@pytest.mark.parametrize("actual", ["5", None, [5], {"n": 5}])
def test_bounds_never_match_non_numbers(actual: Any) -> None:
    assert not Matcher("$range", (0, 10)).test(actual)


@pytest.mark.parametrize("actual", [5, 1.5, True, None, ["abc"], {"abc": 1}])
def test_non_strings_never_match_text_checks(actual: Any) -> None:
    assert not Matcher("$regex", ".*").test(actual)
    assert not Matcher("$contains", "").test(actual)


def test_regex_searches_rather_than_matching_the_whole_text() -> None:
    assert Matcher("$regex", "b+").test("abbbc")
    assert not Matcher("$regex", "^b").test("abc")
    assert Matcher("$regex", "^abc$").test("abc")
    assert Matcher("$regex", "").test("")
    assert not Matcher("$regex", "^ok$").test("ok\n")  # RE2's `$` is the very end, as documented
    assert Matcher("$regex", "^ok\n?$").test("ok\n")


def test_contains_is_a_case_sensitive_substring() -> None:
    assert Matcher("$contains", "gift").test("a gift box")
    assert not Matcher("$contains", "gift").test("a Gift box")
    assert Matcher("$contains", "").test("anything")


def test_matches_uses_equality_for_literals() -> None:
    assert matches("A-1", "A-1")
    assert not matches("A-1", "a-1")
    assert matches([1, {"k": "v"}], [1, {"k": "v"}])
    assert not matches([1, 2], [2, 1])
    assert matches(Matcher("$regex", "^A"), "A-1")


# matches_all --------------------------------------------------------------------------------------


def test_matches_all_needs_every_named_argument() -> None:
    wanted = {"id": parse_matcher({"$regex": "^A-"}), "qty": parse_matcher({"$min": 1})}
    assert matches_all(wanted, {"id": "A-1", "qty": 2})
    assert matches_all(wanted, {"id": "A-1", "qty": 2, "other": "free"})
    assert not matches_all(wanted, {"id": "A-1", "qty": 0})
    assert not matches_all(wanted, {"id": "A-1"})


def test_a_missing_argument_fails_even_against_none() -> None:
    assert not matches_all({"note": None}, {})
    assert matches_all({"note": None}, {"note": None})


def test_nothing_wanted_matches_any_dict() -> None:
    assert matches_all({}, {})
    assert matches_all({}, {"a": 1})


@pytest.mark.parametrize("arguments", [None, [], ["id"], "id=A-1", 3])
def test_non_dict_arguments_fail(arguments: Any) -> None:
    assert not matches_all({}, arguments)
    assert not matches_all({"id": "A-1"}, arguments)


# shown --------------------------------------------------------------------------------------------


def test_shown_writes_matchers_back_as_operator_objects() -> None:
    wanted = {
        "id": parse_matcher({"$regex": "^A"}),
        "qty": parse_matcher({"$min": 0, "$max": 5}),
        "note": parse_matcher({"$contains": ""}),
        "exact": "literal",
        "deep": {"plain": [1, 2]},
    }
    assert shown(wanted) == {
        "id": {"$regex": "^A"},
        "qty": {"$min": 0, "$max": 5},
        "note": {"$contains": ""},
        "exact": "literal",
        "deep": {"plain": [1, 2]},
    }
    assert shown({}) == {}


# ArgExpectation -----------------------------------------------------------------------------------


class Expectations(BaseModel):
    args: dict[str, ArgExpectation]


WRITTEN: dict[str, Any] = {
    "path": {"$regex": "\\.py$"},
    "query": {"$contains": "main"},
    "limit": {"$min": 1, "$max": 50},
    "offset": {"$max": 0},
    "name": "exact text",
    "flags": ["a", "b"],
    "opts": {"plain": True},
    "nothing": None,
}


def test_arg_expectation_validates_into_matchers_and_literals() -> None:
    model = Expectations.model_validate({"args": WRITTEN})
    assert model.args["path"] == Matcher("$regex", "\\.py$")
    assert model.args["limit"] == Matcher("$range", (1, 50))
    assert model.args["name"] == "exact text"
    assert model.args["opts"] == {"plain": True}


def test_arg_expectation_dumps_as_the_user_wrote_it() -> None:
    model = Expectations.model_validate({"args": WRITTEN})
    assert model.model_dump(mode="json") == {"args": WRITTEN}
    assert model.model_dump() == {"args": WRITTEN}
    again = Expectations.model_validate(model.model_dump(mode="json"))
    assert again == model
    assert Expectations.model_validate_json(model.model_dump_json()) == model


def test_arg_expectation_refuses_a_bad_matcher_with_its_reason() -> None:
    with pytest.raises(ValidationError) as info:
        Expectations.model_validate({"args": {"path": {"$regx": "a"}}})
    assert "unknown check '$regx'" in str(info.value)
    assert "path" in str(info.value)


def test_literals_compare_as_json_values_not_python_ones() -> None:
    assert matches(1, 1.0)
    assert not matches(1, True) and not matches(True, 1)
    assert not matches(0, False)
    assert matches([1, {"a": True}], [1.0, {"a": True}])
    assert not matches([1, {"a": True}], [1, {"a": 1}])


# the operators BFCL's rules need, for everyone ------------------------------------------------------


@pytest.mark.parametrize(("written", "actual", "held"), [
    ({"$normalized": "New York, NY"}, "new york ny", True),
    ({"$normalized": "New York, NY"}, "NEW_YORK-NY.", True),
    ({"$normalized": "it's"}, 'it"s', True),
    ({"$normalized": "New York"}, "Newark", False),
    ({"$normalized": "5"}, 5, False),
    ({"$type": "integer"}, 3, True),
    ({"$type": "integer"}, 3.0, False),
    ({"$type": "integer"}, True, False),
    ({"$type": "float"}, 3.0, True),
    ({"$type": "float"}, 3, False),
    ({"$type": "number"}, 3, True),
    ({"$type": "boolean"}, 0, False),
    ({"$type": "null"}, None, True),
    ({"$all": [{"$type": "integer"}, 4]}, 4, True),
    ({"$all": [{"$type": "integer"}, 4]}, 4.0, False),
    ({"$items": [1, {"$normalized": "a b"}]}, [1, "AB"], True),
    ({"$items": [1, {"$normalized": "a b"}]}, ["AB", 1], False),
    ({"$items": [1, {"$normalized": "a b"}]}, [1, "AB", 2], False),
    ({"$items": []}, [], True),
    ({"$items": []}, "", False),
    ({"$object": {"a": 1, "b": {"$optional": 2}}}, {"a": 1}, True),
    ({"$object": {"a": 1, "b": {"$optional": 2}}}, {"a": 1, "b": 2}, True),
    ({"$object": {"a": 1, "b": {"$optional": 2}}}, {"a": 1, "b": 3}, False),
    ({"$object": {"a": 1, "b": {"$optional": 2}}}, {"b": 2}, False),
    ({"$object": {"a": 1}}, {"a": 1, "c": 0}, False),
    ({"$object": {"a": 1}}, [["a", 1]], False),
    ({"$optional": 2}, 2, True),
    ({"$optional": 2}, 3, False),
])
def test_the_bfcl_operators(written: dict[str, Any], actual: Any, held: bool) -> None:
    assert matches(parse_matcher(written), actual) is held


@pytest.mark.parametrize("written", [
    {"$type": "int"}, {"$normalized": 3}, {"$items": {"a": 1}}, {"$object": [1]}, {"$all": []},
])
def test_the_bfcl_operators_are_checked_when_they_load(written: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        parse_matcher(written)


def test_the_bfcl_operators_are_written_back_as_given() -> None:
    written = {"$optional": {"$all": [{"$type": "integer"}, {"$items": [{"$object": {"k": {"$normalized": "v"}}}]}]}}
    assert parse_matcher(written).to_json() == written


def test_an_optional_argument_may_be_missing_and_extra_ones_may_be_refused() -> None:
    wanted = {"a": 1, "b": parse_matcher({"$optional": 2})}
    assert matches_all(wanted, {"a": 1})
    assert not matches_all(wanted, {"b": 2})
    assert matches_all(wanted, {"a": 1, "z": 0})
    assert not matches_all(wanted, {"a": 1, "z": 0}, extra=False)
