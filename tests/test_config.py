"""The config file: every problem at once, named; numbers that would fail later refused now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replio_replay.cli import main
from replio_replay.config import load_project_config
from replio_replay.errors import ConfigError


def _write(project: Path, text: str | bytes) -> Path:
    path = project / ".replio" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def _problem(project: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_project_config(project)
    return str(info.value)


@pytest.mark.parametrize(("text", "words"), [
    ('{"providers": {"openai": {"temperature": NaN}}}', "NaN is not a JSON number"),
    ('{"providers": {"openai": {"temperature": Infinity}}}', "Infinity is not a JSON number"),
    ('{"providers": {"openai": {"temperature": 1e400}}}', "the number at providers.openai.temperature is too large"),
    ('{"providers": {"openai": {"timeout": 1e308}}}', "providers.openai.timeout: Input should be less than or equal"),
    ('{"tool_timeout": 0}', "tool_timeout: Input should be greater than 0"),
    ("[" * 5000, "nested deeper than 100 levels"),
])
def test_values_that_would_fail_later_are_refused_naming_the_field(tmp_path: Path, text: str, words: str) -> None:
    path = _write(tmp_path, text)
    message = _problem(tmp_path)
    assert message.startswith(str(path)) and words in message, message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    _write(tmp_path, json.dumps({"max_turns": 0, "jobs": -1, "providers": {"openai": {"retries": -2}},
                                 "colour": "blue"}))
    message = _problem(tmp_path)
    for field in ("max_turns", "jobs", "providers.openai.retries", "colour: unknown key"):
        assert field in message


def test_a_config_that_is_not_utf8_is_one_line_exit_2(tmp_path: Path) -> None:
    _write(tmp_path, b"\xff\xfe{}")
    result = CliRunner().invoke(main, ["eval", "--path", str(tmp_path), "run"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not UTF-8" in result.stderr


def test_list_names_a_broken_config_and_exits_2_as_run_does(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"max_turns": "many"}')
    result = CliRunner().invoke(main, ["eval", "--path", str(tmp_path), "list", "--output", "json"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"replio: error: {path}: max_turns") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("url", ["http://[::1", "api.example.com", "http://"])
def test_a_bad_base_url_is_a_config_error_at_start(tmp_path: Path, url: str) -> None:
    _write(tmp_path, json.dumps({"provider": "openai:m", "providers": {"openai": {"base_url": url}}}))
    result = CliRunner().invoke(main, ["eval", "--path", str(tmp_path), "run"])
    assert result.exit_code == 2
    assert result.stderr.startswith("replio: error: openai: base URL") and result.stderr.count("\n") == 1
