"""The writer's check of a cassette's bounds: weighing the nodes the dumper emits gives the verdict the
reader gives on the text written (`refusal`), alias bombs, cycles, depth and keys included."""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replio_replay.recording import yamlcodec
from replio_replay.recording.yamlcodec import MAX_EXPANDED, dump_checked, dump_yaml, refusal

EXAMPLES = int(os.environ.get("REPLIO_HYPOTHESIS_EXAMPLES", "150"))

_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=60),
                    st.binary(max_size=40), st.sampled_from(["line\n", "a\nb", " lead\n  x\n", "x" * 70, "\n"]))


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Data as a recording holds it, some collections referenced more than once (written as aliases),
    now and then one holding itself."""
    shared: list[Any] = []

    def value(depth: int) -> Any:
        kind = draw(st.sampled_from(["leaf", "leaf", "list", "dict", "again"] if depth < 6 else ["leaf"]))
        if kind == "again" and shared:
            return draw(st.sampled_from(shared))
        if kind in ("list", "dict"):
            items = [value(depth + 1) for _ in range(draw(st.integers(0, 4)))]
            made: Any = items if kind == "list" else {draw(st.text(max_size=8)): item for item in items}
            shared.append(made)
            return made
        return draw(_LEAVES)

    document = {"version": 1, "interactions": [value(1) for _ in range(draw(st.integers(1, 4)))]}
    if shared and draw(st.integers(0, 9)) == 0:
        looped = draw(st.sampled_from(shared))
        looped.append(looped) if isinstance(looped, list) else looped.update(again=looped)
    return document


def _verdicts(data: Any) -> tuple[bool, str | None]:
    text, fits = yamlcodec._dump_weighed(data)
    assert text == dump_yaml(data)
    return fits, refusal(text)


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(documents(), st.integers(3, 120), st.integers(1, 8))
def test_weighing_what_is_written_gives_the_readers_verdict(data: Any, most: int, deepest: int) -> None:
    """Bounds lowered, so that documents on either side of them are common."""
    with mock.patch.object(yamlcodec, "MAX_EXPANDED", most), mock.patch.object(yamlcodec, "MAX_DEPTH", deepest):
        fits, problem = _verdicts(data)
        assert fits == (problem is None), problem
        assert dump_checked(data) == (dump_yaml(data), problem)


def _laughs(leaf: Any, levels: int, fan: int = 10) -> Any:
    for _ in range(levels):
        leaf = [leaf] * fan
    return leaf


def _cycle() -> Any:
    looped: list[Any] = [1]
    looped.append({"back": looped})
    return {"a": looped}


def _deep(levels: int) -> Any:
    deep: list[Any] = []
    for _ in range(levels):
        deep = [deep]
    return {"a": deep}


@pytest.mark.parametrize(("data", "says"), [
    ({"a": [1, "two", {"three": None}]}, None),
    ({"a": _laughs("lol", 6)}, None),  # a million values written as 60 aliases: under the bound
    ({"a": _laughs("lol", 7)}, f"expands its aliases beyond {MAX_EXPANDED:,} values"),
    # long strings weigh more: 400 of 200,000 characters, in 20 lists of 20 (one written, aliased 19
    # times: 4 MB of text, not 80), are 421 values counted one apiece
    ({"s": _laughs("x" * 200_000, 2, fan=20)}, "expands its aliases beyond"),
    ({"tools": (tools := _laughs("lol", 4)), "interactions": [{"tools": tools}] * 400}, "expands its aliases beyond"),
    (_cycle(), "refers to itself through an alias at line 1"),
    (_deep(99), None),
    (_deep(150), "nests deeper than 100 levels at line 2"),
    ({("a", "b"): "c"}, "has a list or mapping as a key at line 1"),
])
def test_the_refusals_a_reader_makes_are_made_when_writing(data: Any, says: str | None) -> None:
    text, problem = dump_checked(data)
    assert problem == refusal(text)
    assert (problem is None) if says is None else (problem is not None and problem.startswith(says))
