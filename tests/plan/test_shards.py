"""Shards: the partition's properties (hypothesis), `I/N` parsing, and `run --shard` through the
installed `replio` with --compare and --trials, the shards' results merged back into the whole run."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from replio_replay.cli import main
from replio_replay.errors import UsageError
from replio_replay.plan.shards import Shard, shard_of
from tests.helpers import call, replio_command, replio_in_process, turn, write_json

FAST = settings(max_examples=60, deadline=None, database=None)
ids = st.lists(st.text(min_size=1, max_size=30), unique=True, max_size=40)
counts = st.integers(min_value=1, max_value=12)


# the partition -------------------------------------------------------------------------------------


@FAST
@given(ids, counts)
def test_every_fixture_is_in_exactly_one_shard_and_together_they_are_the_selection(
        fixture_ids: list[str], n: int) -> None:
    parts = [Shard(i, n).narrow(fixture_ids)[0] for i in range(1, n + 1)]
    assert sorted(i for part in parts for i in part) == sorted(fixture_ids)  # each once: union, disjoint
    for part in parts:
        assert part == [i for i in fixture_ids if i in part]  # the selection's order is kept


@FAST
@given(ids, st.text(min_size=1, max_size=30), counts)
def test_adding_a_fixture_moves_no_other_one(fixture_ids: list[str], new: str, n: int) -> None:
    before = {i: s for s in range(1, n + 1) for i in Shard(s, n).narrow(fixture_ids)[0]}
    grown = [*fixture_ids, new] if new not in fixture_ids else fixture_ids
    after = {i: s for s in range(1, n + 1) for i in Shard(s, n).narrow(sorted(grown))[0]}
    assert all(after[i] == shard for i, shard in before.items())


def test_the_shard_is_the_sha256_of_the_id_modulo_n() -> None:
    for fid in ("grep-symbol", "find-then-read", "é"):
        assert shard_of(fid, 7) == int(hashlib.sha256(fid.encode()).hexdigest(), 16) % 7 + 1


def test_400_fixtures_spread_evenly_enough_over_4_shards() -> None:
    sizes = [len(Shard(i, 4).narrow([f"bench-{k:04d}" for k in range(400)])[0]) for i in range(1, 5)]
    assert sum(sizes) == 400 and all(80 <= s <= 120 for s in sizes), sizes


@pytest.mark.parametrize(("text", "says"), [
    ("0/4", "I must be between 1 and 4"), ("5/4", "I must be between 1 and 4"), ("1/0", "N, the number of shards"),
    ("2", "give I/N"), ("a/b", "give I/N"), ("-1/4", "give I/N"), ("", "give I/N"),
])
def test_a_shard_out_of_range_or_misspelt_is_a_usage_error(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        Shard.parse(text)
    assert str(caught.value).startswith(f"--shard {text!r} is not a shard: ")


def test_a_shard_spelt_with_spaces_is_read_and_said_back() -> None:
    assert Shard.parse(" 2 / 4 ") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    assert Shard.parse("1/1").narrow(["a", "b"]) == (["a", "b"], "--shard 1/1: running 2 of the 2 fixtures selected")


# the CLI -------------------------------------------------------------------------------------------

IDS = [f"fx-{c}" for c in "abcdefghij"]


@pytest.fixture
def mock_project(tmp_path: Path) -> Path:
    """Ten local fixtures played by the mock provider, the bundled catalog left out."""
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "bundled": False,
                                                  "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", {"fx-a": [turn(call("glob", pattern="*.txt")), turn(text="a.txt")],
                                      "*": [turn(text="Done.")]})
    for fid in IDS:
        write_json(root / ".replio" / "eval" / f"{fid}.json", {"task": f"Task {fid}.", "expected": []})
    return root


def replio(project: Path, *args: str | Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([replio_command(), "eval", "--path", str(project), *map(str, args)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode in ok, (done.returncode, done.stdout, done.stderr)
    return done


def in_process(project: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`replio` in this process: what an empty shard prints does not depend on the process."""
    done = replio_in_process("eval", "--path", project, *args)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done


def _ran(data: dict[str, Any]) -> dict[str, list[tuple[str, int | None]]]:
    """Per run label, the fixtures it ran with their trial count."""
    return {f"{r['provider']}:{r['model']}": [(f["id"], f.get("n")) for f in r["fixtures"]] for r in data["runs"]}


def test_shards_with_compare_and_trials_run_each_fixture_once_and_merge_into_the_whole_run(
        mock_project: Path, tmp_path: Path) -> None:
    flags = ("run", "--no-cassettes", "--compare", "mock:m1,mock:m2", "--trials", "2", "--output", "json")
    files = [tmp_path / f"shard-{i}.json" for i in (1, 2, 3)]
    parts = []
    for i, file in enumerate(files, start=1):
        done = replio(mock_project, *flags, "--shard", f"{i}/3", "--output-file", file)
        assert done.stderr.startswith(f"replio: --shard {i}/3: running ")
        parts.append(_ran(json.loads(done.stdout)))
    for label in ("mock:m1", "mock:m2"):
        got = [fid for part in parts for fid, n in part[label] if n == 2]  # each fixture with both its trials
        assert sorted(got) == IDS
    assert all(part["mock:m1"] == part["mock:m2"] for part in parts)  # a fixture's runs share its shard
    whole = replio(mock_project, *flags).stdout
    merged = replio(mock_project, "merge", *files, "--output", "json").stdout
    assert merged == whole


def test_an_empty_shard_says_so_and_exits_0(mock_project: Path) -> None:
    other = next(i for i in range(1, 5) if i != shard_of("fx-b", 4))
    done = in_process(mock_project, "run", "--no-cassettes", "--fixture", "fx-b", "--shard", f"{other}/4", "--output", "json")
    assert json.loads(done.stdout)["fixtures"] == []
    assert done.stderr == f"replio: --shard {other}/4: none of the 1 fixture selected falls in this shard; nothing to run\n"


def test_an_empty_shard_with_gates_exits_0_naming_the_gates_it_did_not_check(mock_project: Path) -> None:
    """As the docs say: an empty shard exits 0, gates included; the note names why and where to gate."""
    other = next(i for i in range(1, 5) if i != shard_of("fx-b", 4))
    done = in_process(mock_project, "run", "--no-cassettes", "--fixture", "fx-b", "--shard", f"{other}/4",
                  "--fail-under", "pass_rate=0.9", "--output", "json")
    assert json.loads(done.stdout)["gates"] == {"failed": [], "notes": [
        "no fixture ran (an empty shard?), so --fail-under was not checked: hold the merged shards to it "
        "(replio eval merge ... with the same flags)"]}
    assert "replio: note: no fixture ran (an empty shard?), so --fail-under was not checked" in done.stderr
    assert "trials" not in done.stderr


@pytest.mark.parametrize("command", ["run", "diff"])
def test_a_bad_shard_is_a_usage_error_naming_it(mock_project: Path, command: str) -> None:
    result = CliRunner().invoke(main, ["eval", "--path", str(mock_project), command, "--shard", "5/4"])
    assert result.exit_code == 2
    assert "Error: --shard '5/4' is not a shard: I must be between 1 and 4 (e.g. 1/4)" in result.output
