"""One BFCL case as a fixture, and BFCL's matching rules as its verifier applies them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import BenchmarkError
from replio_replay.fixtures.bfcl.convert import NOT_RUN_RESULT, to_fixture
from replio_replay.fixtures.model import Fixture, load_fixture
from replio_replay.judge.results import TraceCall
from replio_replay.judge.verifier import Evidence, verify

DATA = Path(__file__).parent / "data"


def real(category: str, case_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A case of the test data and its possible answer."""
    def find(path: Path) -> dict[str, Any] | None:
        if not path.is_file():
            return None
        return next((json.loads(line) for line in path.read_text().splitlines() if json.loads(line)["id"] == case_id),
                    None)
    case = find(DATA / f"BFCL_v4_{category}.json")
    assert case is not None
    return case, find(DATA / "possible_answer" / f"BFCL_v4_{category}.json")


def fixture(properties: dict[str, Any], answer: dict[str, Any], *, required: tuple[str, ...] = (),
            category: str = "simple_python") -> Fixture:
    """The fixture of a one-function case `m.f` with these parameters and this possible answer."""
    case = {"id": "t_0", "question": [[{"role": "user", "content": "Do it."}]],
            "function": [{"name": "m.f", "description": "F.", "parameters": {
                "type": "dict", "properties": properties, "required": list(required)}}]}
    return load_fixture(to_fixture(case, {"id": "t_0", "ground_truth": [{"m.f": answer}]}, category), source="t")


def passes(fx: Fixture, *calls: tuple[str, Any], answer: str = "") -> bool:
    trace = [TraceCall(name=name, arguments=args, result=NOT_RUN_RESULT) for name, args in calls]
    passed, reasons = verify(fx, Evidence(trace, answer))
    assert passed is not bool(reasons)
    return passed


STRING = {"type": "string", "description": "s"}
INTEGER = {"type": "integer", "description": "i"}
FLOAT = {"type": "float", "description": "f"}


def test_a_real_case_becomes_a_single_response_fixture_of_stub_tools_only() -> None:
    case, answer = real("simple_python", "simple_python_1")
    data = to_fixture(case, answer, "simple_python")
    fx = load_fixture(data, source="t")
    assert fx.id == "bfcl-simple_python_1"
    assert fx.tags == ["bfcl", "simple_python"]
    assert fx.task == case["question"][0][0]["content"]
    assert fx.single_response and fx.system_prompt == ""
    assert list(fx.tools) == fx.tools_offered == ["math-factorial"]
    assert fx.tools["math-factorial"].parameters["type"] == "object"
    assert fx.verifier is not None and fx.verifier.match_expected
    assert passes(fx, ("math-factorial", {"number": 5}))
    assert not passes(fx, ("math-factorial", {"number": 6}))
    assert not passes(fx, ("math_factorial", {"number": 5}))


def test_a_system_message_becomes_the_fixtures_system_prompt() -> None:
    case, answer = real("live_simple", "live_simple_58-27-0")
    fx = load_fixture(to_fixture(case, answer, "live_simple"), source="t")
    assert fx.system_prompt == case["question"][0][0]["content"]
    assert fx.task == case["question"][0][1]["content"]


@pytest.mark.parametrize(("value", "held"), [
    ("San Francisco, CA", True), ("san francisco ca", True), ("San_Francisco.CA", True), ("San Jose", False), (5, False),
])
def test_strings_are_compared_after_bfcls_normalisation(value: Any, held: bool) -> None:
    fx = fixture({"city": STRING}, {"city": ["San Francisco, CA", "SF"]}, required=("city",))
    assert passes(fx, ("m-f", {"city": value})) is held


@pytest.mark.parametrize(("properties", "value", "held"), [
    (FLOAT, 3, True), (FLOAT, 3.0, True), (FLOAT, 3.5, False), (FLOAT, True, False),
    (INTEGER, 3, True), (INTEGER, 3.0, False), (INTEGER, "3", False),
    ({"type": "boolean"}, True, False), ({"type": "boolean"}, 1, False),
])
def test_an_int_is_taken_for_a_float_but_no_float_for_an_int(properties: dict[str, Any], value: Any, held: bool) -> None:
    answer = [False] if properties["type"] == "boolean" else [3]
    fx = fixture({"x": properties}, {"x": answer}, required=("x",))
    assert passes(fx, ("m-f", {"x": value})) is held


def test_an_integer_answer_for_a_string_parameter_wants_an_int() -> None:
    fx = fixture({"rooms": STRING}, {"rooms": [2]}, required=("rooms",))
    assert passes(fx, ("m-f", {"rooms": 2}))
    assert not passes(fx, ("m-f", {"rooms": 2.0}))
    assert not passes(fx, ("m-f", {"rooms": "2"}))


@pytest.mark.parametrize(("value", "held"), [
    ([1.0, 2.5], True), ([2.5, 1.0], False), ([1.0], False), ([1, 2.5], False), (["1.0", 2.5], False),
])
def test_list_order_counts_and_list_items_keep_their_type(value: Any, held: bool) -> None:
    fx = fixture({"xs": {"type": "array", "items": {"type": "float"}}}, {"xs": [[1.0, 2.5]]}, required=("xs",))
    assert passes(fx, ("m-f", {"xs": value})) is held


def test_strings_in_lists_are_normalised() -> None:
    fx = fixture({"xs": {"type": "array", "items": {"type": "string"}}}, {"xs": [["New York", "LA"]]})
    assert passes(fx, ("m-f", {"xs": ["new york", "la"]}))
    assert not passes(fx, ("m-f", {"xs": ["la", "new york"]}))


def test_an_empty_string_among_the_values_lets_the_parameter_be_left_out() -> None:
    fx = fixture({"unit": STRING, "n": INTEGER}, {"unit": ["units", ""], "n": [1]}, required=("n",))
    assert passes(fx, ("m-f", {"n": 1}))
    assert passes(fx, ("m-f", {"n": 1, "unit": "Units"}))
    assert not passes(fx, ("m-f", {"n": 1, "unit": "meters"}))


def test_a_parameter_without_an_empty_string_must_be_given_even_if_optional_in_the_function() -> None:
    fx = fixture({"unit": STRING, "n": INTEGER}, {"unit": ["units"], "n": [1]}, required=("n",))
    assert not passes(fx, ("m-f", {"n": 1}))


def test_a_required_parameter_stays_required_whatever_the_answer_says() -> None:
    fx = fixture({"formatted": {"type": "boolean"}}, {"formatted": [True, ""]}, required=("formatted",))
    assert passes(fx, ("m-f", {"formatted": True}))
    assert not passes(fx, ("m-f", {}))


def test_an_argument_the_answer_does_not_list_fails() -> None:
    fx = fixture({"n": INTEGER, "verbose": {"type": "boolean"}}, {"n": [1]}, required=("n",))
    assert not passes(fx, ("m-f", {"n": 1, "verbose": False}))


def test_an_object_takes_only_its_listed_keys() -> None:
    fx = fixture({"body": {"type": "dict", "properties": {}}},
                 {"body": [{"mode": ["COOL"], "temp": [22, ""]}]}, required=("body",))
    assert passes(fx, ("m-f", {"body": {"mode": "cool"}}))
    assert passes(fx, ("m-f", {"body": {"mode": "cool", "temp": 22}}))
    assert not passes(fx, ("m-f", {"body": {"mode": "cool", "fan": 1}}))
    assert not passes(fx, ("m-f", {"body": {"temp": 22}}))


def test_parallel_calls_match_in_any_order_one_to_one() -> None:
    case, answer = real("parallel", "parallel_0")
    fx = load_fixture(to_fixture(case, answer, "parallel"), source="t")
    assert fx.match.value == "unordered"
    swift, maroon = ("spotify-play", {"artist": "Taylor Swift", "duration": 20}), \
        ("spotify-play", {"artist": "Maroon 5", "duration": 15})
    assert passes(fx, swift, maroon)
    assert passes(fx, maroon, swift)
    assert not passes(fx, swift, swift)
    assert not passes(fx, swift)


def test_irrelevance_passes_only_without_a_call() -> None:
    case, answer = real("irrelevance", "irrelevance_0")
    assert answer is None
    fx = load_fixture(to_fixture(case, None, "irrelevance"), source="t")
    assert fx.expected == []
    assert passes(fx, answer="I cannot compute that with these tools.")
    name = next(iter(fx.tools))
    assert not passes(fx, (name, {}))


@pytest.mark.parametrize(("category", "case_id", "why"), [
    ("live_multiple", "live_multiple_964-207-0", "requires 'statement'"),
    ("live_multiple", "live_multiple_862-181-3", "'journey_start_time', which Trains_1_FindTrains does not declare"),
])
def test_a_case_bfcls_checker_can_never_accept_is_refused_naming_it(category: str, case_id: str, why: str) -> None:
    case, answer = real(category, case_id)
    with pytest.raises(BenchmarkError, match=why) as caught:
        to_fixture(case, answer, category)
    assert caught.value.case_id == case_id


def test_an_undeclared_optional_parameter_must_be_left_out() -> None:
    case, answer = real("parallel_multiple", "parallel_multiple_12")
    fx = load_fixture(to_fixture(case, answer, "parallel_multiple"), source="t")
    assert all("permeability" not in e.arguments for e in fx.expected or [] if not isinstance(e, str))


@pytest.mark.parametrize(("change", "why"), [
    (lambda c: c.update(question=[[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]),
     "more than one turn"),
    (lambda c: c.update(question=[[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]]),
     "messages are"),
    (lambda c: c["function"][0].update(name="get-weather"), "cannot be a tool name"),
    (lambda c: c.pop("function"), "missing field 'function'"),
])
def test_an_unconvertible_case_is_a_benchmark_error(change: Any, why: str) -> None:
    case, answer = real("simple_python", "simple_python_0")
    change(case)
    with pytest.raises(BenchmarkError, match=why):
        to_fixture(case, answer, "simple_python")


def test_a_missing_possible_answer_is_a_benchmark_error() -> None:
    case, _ = real("simple_python", "simple_python_0")
    with pytest.raises(BenchmarkError, match="no possible answer"):
        to_fixture(case, None, "simple_python")
