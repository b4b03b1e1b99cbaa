"""Notes told once per project: the first ask says yes and marks it, later ones say no."""

from __future__ import annotations

from pathlib import Path

from replio_replay._runtime.notices import first_time


def test_a_notice_is_due_once_per_project(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert first_time(cache, tmp_path / "a", "bundled") is True
    assert first_time(cache, tmp_path / "a", "bundled") is False
    assert first_time(cache, tmp_path / "a", "other") is True
    assert first_time(cache, tmp_path / "b", "bundled") is True


def test_without_a_writable_cache_it_is_told_again(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert first_time(blocked, tmp_path, "bundled") is True
    assert first_time(blocked, tmp_path, "bundled") is True
