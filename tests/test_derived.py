"""Derived data kept between runs: computed once, read back equal, never in the way when damaged,
unwritable or over its bounds, and stamped by the code it came from."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from replio_replay import derived
from replio_replay.derived import code_stamp, remembered

DATA = {"version": 1, "items": [1, 2.5, True, None, "text", {"nested": ["a"]}]}


class Counting:
    """A computation that counts its calls."""

    def __init__(self, value: Any = DATA) -> None:
        self.calls = 0
        self.value = value

    def __call__(self) -> Any:
        self.calls += 1
        return self.value


def test_computed_once_then_read_back_equal(tmp_path: Path) -> None:
    compute = Counting()
    assert remembered(tmp_path, "k1", compute) == DATA
    assert remembered(tmp_path, "k1", compute) == DATA
    assert compute.calls == 1
    assert [p.name for p in tmp_path.iterdir()] == ["k1.marshal"]
    assert remembered(tmp_path, "k2", compute) == DATA and compute.calls == 2  # another key, computed


@pytest.mark.parametrize("damage", [
    lambda blob: blob[:-3],  # torn
    lambda blob: blob[:20] + bytes([blob[20] ^ 1]) + blob[21:],  # a flipped bit
    lambda blob: b"",
])
def test_a_damaged_entry_is_computed_again_and_replaced(tmp_path: Path, damage: Any) -> None:
    compute = Counting()
    remembered(tmp_path, "k", compute)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(damage(entry.read_bytes()))
    assert remembered(tmp_path, "k", compute) == DATA
    assert compute.calls == 2
    assert remembered(tmp_path, "k", compute) == DATA and compute.calls == 2  # written whole again


def test_a_folder_that_cannot_be_written_only_costs_the_computing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    compute = Counting()
    assert remembered(blocker / "kept", "k", compute) == DATA
    assert remembered(blocker / "kept", "k", compute) == DATA
    assert compute.calls == 2


def test_what_marshal_cannot_hold_is_computed_each_time(tmp_path: Path) -> None:
    compute = Counting(object())
    remembered(tmp_path, "k", compute)
    remembered(tmp_path, "k", compute)
    assert compute.calls == 2 and list(tmp_path.iterdir()) == []


def test_an_error_passes_through_and_nothing_is_kept(tmp_path: Path) -> None:
    def broken() -> Any:
        raise ValueError("does not compute")

    with pytest.raises(ValueError, match="does not compute"):
        remembered(tmp_path, "k", broken)
    assert list(tmp_path.iterdir()) == []


def _old_entries(folder: Path, sizes: list[int]) -> None:
    for i, size in enumerate(sizes):
        entry = folder / f"old{i}.marshal"
        entry.write_bytes(b"x" * size)
        os.utime(entry, ns=((i + 1) * 10**9, (i + 1) * 10**9))


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "_pruned", set())


def test_over_the_entry_limit_the_least_recently_used_go_down_to_half(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "MAX_ENTRIES", 4)
    _old_entries(tmp_path, [1] * 5)
    _fresh_process(monkeypatch)
    remembered(tmp_path, "new", Counting())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.marshal", "old4.marshal"]


def test_over_the_byte_limit_the_least_recently_used_go_down_to_half(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "MAX_BYTES", 1000)
    _old_entries(tmp_path, [400, 400, 300])
    _fresh_process(monkeypatch)
    remembered(tmp_path, "new", Counting())
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("old")) == ["old2.marshal"]


def test_each_folder_is_pruned_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "MAX_ENTRIES", 2)
    _fresh_process(monkeypatch)
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        _old_entries(folder, [1] * 3)
        remembered(folder, "new", Counting())
        assert len(list(folder.iterdir())) == 1  # pruned: only the new entry is left
    _old_entries(first, [1] * 3)
    remembered(first, "newer", Counting())
    assert len(list(first.iterdir())) == 5  # not again in this process


def test_reading_an_entry_marks_it_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remembered(tmp_path, "k", Counting())
    (entry,) = tmp_path.iterdir()
    os.utime(entry, ns=(10**9, 10**9))
    remembered(tmp_path, "k", Counting())
    assert entry.stat().st_mtime_ns > 10**9
    monkeypatch.setattr(derived, "MAX_ENTRIES", 4)
    _old_entries(tmp_path, [1, 1, 1])  # written before the entry was last read
    _fresh_process(monkeypatch)
    remembered(tmp_path, "fifth", Counting())  # a fifth entry: down to two
    assert entry.exists() and not any(p.name.startswith("old") for p in tmp_path.iterdir())


def test_a_code_stamp_follows_the_source_not_the_files_times(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "stamped_module.py"
    module.write_text("VERSION = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_stamp("stamped_module", "json")
    os.utime(module, ns=(10**9, 10**9))
    assert code_stamp("stamped_module", "json") == before  # touched: the same source
    module.write_text("VERSION = 2\n")  # the same size
    os.utime(module, ns=(10**9, 10**9))  # and the same time, as a store that fixes them has it
    assert code_stamp("stamped_module", "json") != before
    assert "stamped_module" not in sys.modules  # found, not imported
    assert code_stamp("no_such_module_anywhere") == code_stamp("no_such_module_anywhere") != code_stamp("json")


def test_a_package_stamp_covers_every_module_in_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "stamped_package"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("A = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_stamp("stamped_package.*")
    assert code_stamp("stamped_package") != before  # the package's own file only
    (package / "b.py").write_text("B = 1\n")
    after_adding = code_stamp("stamped_package.*")
    (package / "a.py").write_text("A = 2\n")
    assert len({before, after_adding, code_stamp("stamped_package.*")}) == 3


def test_temp_files_a_killed_writer_left_go_after_an_hour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old, fresh = tmp_path / ".abc.tmp", tmp_path / ".def.tmp"
    for temp in (old, fresh):
        temp.write_bytes(b"half an entry")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    _fresh_process(monkeypatch)
    remembered(tmp_path, "k", Counting())
    assert sorted(p.name for p in tmp_path.iterdir()) == [".def.tmp", "k.marshal"]  # a writer may own it yet
