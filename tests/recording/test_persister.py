"""The persister's saves: written atomically, or handed back (`kept`) for a caller writing it with other
files, the same text and the same refusals either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from vcr.request import Request

from replio_replay.errors import CassetteError
from replio_replay.recording.persister import AtomicPersister
from replio_replay.recording.serializer import ReadableSerializer

KEY = "sk-test-0123456789abcdefghijklmnop"


def _cassette(answer: str) -> dict[str, Any]:
    request = Request("POST", "http://127.0.0.1:9/v1/chat/completions", b'{"messages": []}', {})
    response = {"status": {"code": 200, "message": "OK"}, "headers": {},
                "body": {"string": json.dumps({"choices": [{"message": {"content": answer}}]}).encode()}}
    return {"requests": [request], "responses": [response]}


def test_a_kept_save_hands_back_the_text_a_save_writes(tmp_path: Path) -> None:
    written, kept_path = tmp_path / "written.yaml", tmp_path / "kept.yaml"
    AtomicPersister().save_cassette(written, _cassette("done"), ReadableSerializer())
    kept: dict[Path, str] = {}
    AtomicPersister(kept=kept).save_cassette(str(kept_path), _cassette("done"), ReadableSerializer())
    assert kept == {kept_path: written.read_text(encoding="utf-8")}
    assert not kept_path.exists()
    assert "content: done" in kept[kept_path]


def test_a_kept_save_refuses_a_secret_as_a_write_does(tmp_path: Path) -> None:
    kept: dict[Path, str] = {}
    with pytest.raises(CassetteError, match="was not written: it would contain the live value of a secret"):
        AtomicPersister([KEY], kept=kept).save_cassette(tmp_path / "c.yaml", _cassette(KEY), ReadableSerializer())
    assert kept == {} and not list(tmp_path.iterdir())


@pytest.mark.parametrize("where", ["missing.yaml", "folder.yaml"])
def test_a_load_of_no_cassette_file_says_so(tmp_path: Path, where: str) -> None:
    (tmp_path / "folder.yaml").mkdir()
    with pytest.raises(CassetteError, match=f"^no cassette at {tmp_path / where}$"):
        AtomicPersister().load_cassette(tmp_path / where, ReadableSerializer())


def test_a_load_of_a_cassette_that_cannot_be_read_names_it(tmp_path: Path) -> None:
    (tmp_path / "latin.yaml").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(CassetteError, match=f"^cassette {tmp_path / 'latin.yaml'} cannot be read: "):
        AtomicPersister().load_cassette(tmp_path / "latin.yaml", ReadableSerializer())
