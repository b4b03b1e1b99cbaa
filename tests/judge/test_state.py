"""State checks: `state` matchers over the environments' end state and `state_from_calls`, with their reasons."""

from __future__ import annotations

from typing import Any

import pytest

from replio_replay._runtime.redact import NO_SECRETS, Redactor
from replio_replay.judge.state import state_checks, state_path
from replio_replay.judge.turns import TurnEvidence, turn_reasons
from replio_replay.judge.verifier import Evidence, verify
from tests.helpers import make_fixture

END = {"shop": {"orders": {"A-1042": {"status": "cancelled", "total": 30}, "A.1": {"status": "open"}},
                "log": ["cancelled A-1042"], "currency": "EUR"}}


def _verify(verifier: dict[str, Any], state: Any = END, reference: Any = None,
            redactor: Redactor | None = None) -> tuple[bool, list[str]]:
    evidence = Evidence(state=state, reference_state=reference, redactor=redactor or NO_SECRETS)
    return verify(make_fixture(verifier=verifier), evidence)


@pytest.mark.parametrize(("key", "parts"), [
    ("shop.orders.A-1042.status", ["shop", "orders", "A-1042", "status"]),
    (r"shop.orders.A\.1.status", ["shop", "orders", "A.1", "status"]),
    (r"shop.files.a\\b", ["shop", "files", "a\\b"]),
    ("shop", ["shop"]),
])
def test_a_state_path_splits_at_dots_not_written_escaped(key: str, parts: list[str]) -> None:
    assert state_path(key) == parts


def test_state_matchers_pass_on_the_end_state() -> None:
    assert _verify({"state": {
        "shop.orders.A-1042.status": "cancelled",
        r"shop.orders.A\.1.status": {"$not": "cancelled"},
        "shop.log.0": {"$regex": "^cancelled"},
        "shop.orders.A-1042.total": {"$min": 10},
        "shop.orders.B-9": {"$optional": "open"},
    }}) == (True, [])


def test_state_mismatches_name_the_path_and_both_values() -> None:
    passed, reasons = _verify({"state": {"shop.orders.A-1042.status": "open", "shop.currency": {"$regex": "^USD"}}})
    assert not passed
    assert reasons == ['state.shop.orders.A-1042.status: expected "open", it is "cancelled"',
                       'state.shop.currency: expected {"$regex": "^USD"}, it is "EUR"']


def test_a_path_that_leads_nowhere_says_where_it_stops() -> None:
    _, reasons = _verify({"state": {"shop.orders.B-9.status": "open", "depot.x": 1, "shop.log.3": "x",
                                    "shop.currency.code": "EUR"}})
    assert reasons == [
        "state.shop.orders.B-9.status: shop.orders has no such key (it has: A-1042, A.1)",
        "state.depot.x: no environment of that name (the fixture has: shop)",
        "state.shop.log.3: shop.log is a list of 1; index it with a number below 1",
        "state.shop.currency.code: shop.currency is str, not an object to look into",
    ]


def test_the_name_alone_is_the_whole_state() -> None:
    assert _verify({"state": {"shop": END["shop"]}})[0]
    passed, reasons = _verify({"state": {"shop": {**END["shop"], "currency": "USD"}}})
    assert not passed and reasons[0].startswith('state.shop: expected {"orders"')


def test_state_without_environments_is_a_reason_not_a_pass() -> None:
    assert _verify({"state": {"shop.currency": "EUR"}}, state=None) == (False, [
        'state: the fixture offers no environment, so there is no state to check; declare one in "environments"'])


def test_a_secret_in_the_state_is_redacted_in_reasons() -> None:
    state = {"vault": {"token": "sk-live-abcdef0123456789"}}
    _, reasons = _verify({"state": {"vault.token": "none"}}, state=state,
                         redactor=Redactor(("sk-live-abcdef0123456789",)))
    assert "sk-live" not in reasons[0] and reasons[0].startswith('state.vault.token: expected "none", it is ')


def test_state_from_calls_passes_when_the_end_states_are_equal() -> None:
    assert _verify({"state_from_calls": [{"name": "cancel_order", "arguments": {"order_id": "A-1042"}}]},
                   reference=END) == (True, [])


def test_state_from_calls_fails_naming_path_and_values() -> None:
    reference = {"shop": {**END["shop"], "orders": {**END["shop"]["orders"], "A-1042": {"status": "open",
                                                                                          "total": 30}}}}
    passed, reasons = _verify({"state_from_calls": []}, reference=reference)
    assert not passed
    assert reasons == ['state_from_calls: shop.orders.A-1042.status is "cancelled", the reference calls leave "open"']


def test_state_from_calls_lists_at_most_three_differences() -> None:
    reference = {"shop": {"a": 1, "b": 2, "c": 3, "d": 4}}
    _, reasons = _verify({"state_from_calls": []}, state={"shop": {"a": 0, "b": 0, "c": 0}}, reference=reference)
    assert reasons == ["state_from_calls: shop.a is 0, the reference calls leave 1",
                       "state_from_calls: shop.b is 0, the reference calls leave 2",
                       "state_from_calls: shop.c is 0, the reference calls leave 3",
                       "state_from_calls: and 1 more differences"]


def test_a_reference_call_that_failed_is_the_reason() -> None:
    why = "state_from_calls[1] (cancel_order) raised ValueError: order A-1043 is shipped, not open"
    assert _verify({"state_from_calls": [{"name": "cancel_order"}]}, reference=why) == (False, [why])


def test_each_state_check_has_the_verdict_its_reasons_give_for_reports() -> None:
    fixture = make_fixture(
        verifier={"state": {"shop.orders.A-1042.status": "cancelled", "shop.orders.A-1042": {"$object": {}},
                            "shop.currency": "USD"},
                  "state_from_calls": [{"name": "cancel_order"}], "results_from_calls": True},
        turns=[{"user": "And then?", "verifier": {"state": {"shop.log.0": {"$regex": "^cancelled"}}}},
               {"user": "Last?", "verifier": {"state": {"shop.currency": "EUR"}}}])
    evidence = Evidence(state=END, reference_state=END, reference_results=["done"])
    ends = [TurnEvidence(calls=0, answer="a", state=END), TurnEvidence(calls=0, answer="b", state=END)]
    reasons = turn_reasons(fixture, ends, evidence) + verify(fixture, evidence)[1]
    assert reasons == ["turn 3: not reached; the conversation ended after turn 2",
                       'state.shop.orders.A-1042: expected {"$object": {}}, it is {"status": "cancelled", "total": 30}',
                       'state.shop.currency: expected "USD", it is "EUR"',
                       "results_from_calls: the reference makes 1 call(s) here; the model made none"]
    assert [(c.turn, c.check, c.expected, c.passed) for c in state_checks(fixture, reasons) or []] == [
        (None, "state.shop.orders.A-1042.status", "cancelled", True),  # not failed by its longer neighbour's reason
        (None, "state.shop.orders.A-1042", {"$object": {}}, False),
        (None, "state.shop.currency", "USD", False),
        (None, "state_from_calls", None, True),
        (None, "results_from_calls", None, False),
        (2, "state.shop.log.0", {"$regex": "^cancelled"}, True),
        (3, "state.shop.currency", "EUR", False),  # a turn never reached held nothing
    ]
    without = state_checks(fixture, [])
    assert without is not None and all(c.passed for c in without)
    assert state_checks(make_fixture(verifier={"must_include": ["grep"]}), ["must_include: ..."]) is None
    assert [c.passed for c in state_checks(make_fixture(verifier={"state": {"shop.x": 1}}), [
        'state: the fixture offers no environment, so there is no state to check; declare one in "environments"'])
        or []] == [False]
