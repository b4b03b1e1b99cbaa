"""Atomic writes: one file or many, an interruption leaves every file as it was and no temp file."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest

import replio_replay._runtime.atomic as atomic
from replio_replay._runtime.atomic import atomic_write, atomic_write_all


def test_many_files_are_written_all_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [tmp_path / "g" / f"{i}.json" for i in range(5)]
    for path in paths:
        atomic_write(path, "old\n")
    real = atomic._temp
    calls = []

    def interrupted_third(path: Path, text: str) -> str:
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(path, text)

    monkeypatch.setattr(atomic, "_temp", interrupted_third)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_all([(p, "new\n") for p in paths])
    assert [p.read_text() for p in paths] == ["old\n"] * 5
    assert sorted(f.name for f in (tmp_path / "g").iterdir()) == [f"{i}.json" for i in range(5)]

    monkeypatch.setattr(atomic, "_temp", real)
    atomic_write_all([(p, "new\n") for p in paths])
    assert [p.read_text() for p in paths] == ["new\n"] * 5


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "kept.txt"
    path.write_text("old\n")
    path.chmod(0o640)
    atomic_write(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_ctrl_c_while_many_temp_files_are_written_leaves_no_file_behind(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The temp files are written several at once: Ctrl-C lands in the main thread while they are, and
    every one already made, or still being made, is removed."""
    paths = [tmp_path / f"{i}.json" for i in range(40)]
    for path in paths:
        atomic_write(path, "old\n")
    real = atomic._temp

    def slow(path: Path, text: str) -> str:
        time.sleep(0.05)
        return real(path, text)

    monkeypatch.setattr(atomic, "_temp", slow)
    threading.Timer(0.12, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        atomic_write_all([(p, "new\n") for p in paths])
    assert [p.read_text() for p in paths] == ["old\n"] * 40
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_each_folder_is_made_once_for_all_its_files_each_written_as_its_utf8(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A file costs its own system calls only (created, its mode set, written, fsynced, renamed): its folder
    is made once for all the files going there, and its text reaches the disk byte for byte."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    files = [(tmp_path / "a" / "b" / f"{i}.yaml", f"é {i}\r\n\n" * 5000) for i in range(20)]
    files += [(tmp_path / "new" / "c" / f"{i}.json", "{}\n") for i in range(5)]
    real = os.mkdir
    made: list[str] = []

    def mkdir(path: str, *args: object, **kwargs: object) -> None:
        made.append(os.fspath(path))
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    atomic_write_all(files)
    new = str(tmp_path / "new" / "c")
    assert made == [str(tmp_path / "a" / "b"), new, str(tmp_path / "new"), new]  # the missing parent made on the way
    assert all(path.read_bytes() == text.encode("utf-8") for path, text in files)
    assert stat.S_IMODE(files[0][0].stat().st_mode) == atomic._file_mode()
    assert sorted(f.name for f in (tmp_path / "a" / "b").iterdir()) == sorted(p.name for p, _ in files[:20])
