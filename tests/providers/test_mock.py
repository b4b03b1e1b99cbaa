"""The scripted mock provider's script file is checked, so a mock run cannot pass by accident."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.errors import ConfigError, ProviderError
from replio_replay.providers.base import ChatRequest, Exchange, ProviderSettings
from replio_replay.providers.mock import MockProvider
from tests.helpers import call, turn, write_json


def _project(tmp_path: Path, script: object) -> Path:
    root = tmp_path / "proj"
    write_json(root / ".replio" / "config.json", {"provider": "mock", "providers": {"mock": {"script": "script.json"}}})
    write_json(root / "script.json", script)
    for fid in ("covered", "uncovered"):
        write_json(root / ".replio" / "eval" / f"{fid}.json", {"task": "List.", "expected": ["list_dir"]})
    return root


def _run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["eval", "--path", str(root), "run", "--fixture", "covered",
                                       "--fixture", "uncovered", "--no-cassettes", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("script", "where"), [
    ({"covered": [{"tool_call": [call("list_dir")]}]}, "covered.0.tool_call: Extra inputs are not permitted"),
    ({"covered": [turn(call("list_dir", arguments=None) | {"nme": "x"})]}, "covered.0.tool_calls.0.nme"),
    ({"covered": [turn(usage={"prompt": "ten"})]}, "covered.0.usage.prompt"),
    ({"covered": {"text": "hi"}}, "covered: Input should be a valid list"),
    (["covered"], "(the whole script): Input should be a valid dictionary"),
])
def test_a_malformed_script_is_a_config_error_naming_the_file_and_place(tmp_path: Path, script: object,
                                                                      where: str) -> None:
    root = _project(tmp_path, script)
    code, out, err = _run(root)
    assert code == 2 and out == ""
    assert f"mock script {root / 'script.json'}: {where}" in err


def test_a_fixture_the_script_does_not_cover_ends_in_error(tmp_path: Path) -> None:
    root = _project(tmp_path, {"covered": [turn(call("list_dir")), turn(text="done")]})
    code, out, _ = _run(root)
    assert code == 1
    assert "covered" in out and f"uncovered: error: mock script {root / 'script.json'} has no turns for fixture 'uncovered'" \
        " (it covers: covered); add an entry 'uncovered' (or \"*\" for every fixture)" in out


def test_a_star_entry_covers_every_fixture(tmp_path: Path) -> None:
    code, _, _ = _run(_project(tmp_path, {"*": [turn(call("list_dir")), turn(text="done")]}))
    assert code == 0


def test_a_script_given_in_code_is_held_to_the_same_rule() -> None:
    provider = MockProvider(ProviderSettings(name="mock", model="scripted"), script={"a": []})
    with pytest.raises(ProviderError, match="the mock script has no turns for fixture 'b'"):
        provider.generate(ChatRequest(messages=(), tools=()), Exchange("b"))


def test_a_missing_script_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mock script nowhere.json"):
        MockProvider(ProviderSettings(name="mock", model="scripted", options={"script": "nowhere.json"}))


def test_a_mock_script_that_is_not_there_says_so_and_what_its_path_is_relative_to(tmp_path: Path) -> None:
    from replio_replay.errors import ConfigError
    from replio_replay.providers.mock import _load_script

    with pytest.raises(ConfigError, match=r"mock script .*nowhere.json: no such file; providers.mock.script in "
                                          r"\.replio/config\.json is relative to the project folder"):
        _load_script(str(tmp_path / "nowhere.json"))
