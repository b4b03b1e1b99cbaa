"""Tool-set files: which file `--tools NAME` means, and reading one with its `extends` chain."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import ToolSetError, UsageError
from replio_replay.tools.setfile import load_chain, locate, variants
from tests.helpers import write_json


def broken(path: Path) -> str:
    """The message load_chain raises for `path`; it must start with the broken file's path."""
    with pytest.raises(ToolSetError) as info:
        load_chain(path)
    return str(info.value)


def tools_dir(project: Path) -> Path:
    return project / ".replio" / "tools"


# locate -------------------------------------------------------------------------------------------


def test_default_without_a_file_is_the_builtins(tmp_path: Path) -> None:
    assert locate(tmp_path, "default") == ("default", None)


def test_default_with_replio_tools_json(tmp_path: Path) -> None:
    path = write_json(tmp_path / ".replio" / "tools.json", {"disable": ["grep"]})
    assert locate(tmp_path, "default") == ("default", path)


def test_the_configs_tools_key_names_the_default_sets_file(tmp_path: Path) -> None:
    write_json(tmp_path / ".replio" / "tools.json", {})
    other = write_json(tmp_path / "agent" / "tools.json", {})
    assert locate(tmp_path, "default", "agent/tools.json") == ("default", other)


def test_a_configured_file_that_is_missing_is_an_error_naming_the_config(tmp_path: Path) -> None:
    write_json(tmp_path / ".replio" / "tools.json", {})
    with pytest.raises(ToolSetError) as info:
        locate(tmp_path, "default", "agent/tools.json")
    message = str(info.value)
    assert str(tmp_path / ".replio" / "config.json") in message
    assert "tools: 'agent/tools.json' is not a file" in message


def test_a_variant_name_is_a_file_in_replio_tools(tmp_path: Path) -> None:
    path = write_json(tools_dir(tmp_path) / "terse.json", {})
    assert locate(tmp_path, "terse") == ("terse", path)


def test_a_variant_ignores_the_configured_default_file(tmp_path: Path) -> None:
    path = write_json(tools_dir(tmp_path) / "terse.json", {})
    write_json(tmp_path / "agent.json", {})
    assert locate(tmp_path, "terse", "agent.json") == ("terse", path)


def test_a_file_path_is_named_by_its_stem_and_the_digest_of_where_it_is(tmp_path: Path) -> None:
    project = tmp_path / "project"
    elsewhere = write_json(tmp_path / "elsewhere" / "default.json", {})
    name, path = locate(project, str(elsewhere))
    assert path == elsewhere
    assert name == "default@" + hashlib.sha256(str(elsewhere.resolve()).encode()).hexdigest()[:12]
    elsewhere.write_text('{"system_prompt": "Edited."}')
    assert locate(project, str(elsewhere))[0] == name  # the folder stays while the file is edited
    inside = write_json(project / "experiments" / "tuned.json", {})
    assert locate(project, str(inside))[0] == "tuned@" + hashlib.sha256(b"experiments/tuned.json").hexdigest()[:12]


def test_the_path_of_the_default_or_a_variant_file_is_that_set(tmp_path: Path) -> None:
    variant = write_json(tools_dir(tmp_path) / "tuned.json", {})
    default = write_json(tmp_path / ".replio" / "tools.json", {})
    assert locate(tmp_path, str(variant)) == ("tuned", variant)
    assert locate(tmp_path, str(default)) == ("default", default)
    configured = write_json(tmp_path / "agent.json", {})
    assert locate(tmp_path, str(configured), "agent.json") == ("default", configured)
    assert locate(tmp_path, str(default), "agent.json")[0].startswith("tools@")


def test_a_name_of_a_set_given_by_path_is_no_variant_name(tmp_path: Path) -> None:
    write_json(tools_dir(tmp_path) / "default@0123456789ab.json", {})
    with pytest.raises(UsageError, match="a tool set given by a file path"):
        locate(tmp_path, "default@0123456789ab")


def test_a_missing_file_path_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "nope.json"
    with pytest.raises(UsageError) as info:
        locate(tmp_path, str(missing))
    assert not isinstance(info.value, ToolSetError)
    assert str(missing) in str(info.value)


def test_an_unknown_name_lists_the_known_tool_sets(tmp_path: Path) -> None:
    write_json(tools_dir(tmp_path) / "terse.json", {})
    write_json(tools_dir(tmp_path) / "alpha.json", {})
    (tools_dir(tmp_path) / "notes.txt").write_text("not a tool set")
    with pytest.raises(UsageError) as info:
        locate(tmp_path, "tersse")
    message = str(info.value)
    assert "no tool set named 'tersse'" in message
    assert str(tools_dir(tmp_path) / "tersse.json") in message
    assert message.endswith("did you mean 'terse'? known tool sets: default, alpha, terse")


def test_an_unknown_name_without_variants_lists_only_the_default(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"known tool sets: default$"):
        locate(tmp_path, "terse")


def test_variants_are_the_json_files_sorted(tmp_path: Path) -> None:
    assert variants(tmp_path) == []
    for name in ("b", "a", "c"):
        write_json(tools_dir(tmp_path) / f"{name}.json", {})
    (tools_dir(tmp_path) / "readme.md").write_text("x")
    assert variants(tmp_path) == ["a", "b", "c"]


# load_chain ---------------------------------------------------------------------------------------


def test_a_file_without_extends_is_a_chain_of_one(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tools.json", {
        "system_prompt": "Be terse.",
        "disable": ["grep"],
        "override": {"file_read": {"description": "Read a file."}},
        "tools": {"lookup": {"description": "Look it up.", "result": "found"}},
    })
    [link] = load_chain(path)
    assert link.path == path
    assert link.data.system_prompt == "Be terse."
    assert link.data.disable == ["grep"]
    assert link.data.override["file_read"].description == "Read a file."
    assert link.data.override["file_read"].parameters is None
    assert link.data.tools["lookup"].kind == "stub"
    assert link.data.extends is None


def test_an_empty_file_has_the_defaults(tmp_path: Path) -> None:
    [link] = load_chain(write_json(tmp_path / "tools.json", {}))
    data = link.data
    assert (data.extends, data.system_prompt, data.disable, data.override, data.tools) == (
        None, None, [], {}, {}
    )


def test_the_chain_is_root_first(tmp_path: Path) -> None:
    root = write_json(tmp_path / "root.json", {"system_prompt": "root"})
    middle = write_json(tmp_path / "middle.json", {"extends": "root.json", "system_prompt": "mid"})
    leaf = write_json(tmp_path / "leaf.json", {"extends": "middle.json", "system_prompt": "leaf"})
    chain = load_chain(leaf)
    assert [link.path.resolve() for link in chain] == [root, middle, leaf]
    assert [link.data.system_prompt for link in chain] == ["root", "mid", "leaf"]


def test_extends_is_relative_to_the_extending_file(tmp_path: Path) -> None:
    base = write_json(tmp_path / ".replio" / "tools.json", {"disable": ["grep"]})
    variant = write_json(tools_dir(tmp_path) / "terse.json", {"extends": "../tools.json"})
    # A file of the same name beside the variant, or in the working directory, is not the one.
    write_json(tmp_path / ".replio" / "tools" / "tools.json", {"disable": ["glob"]})
    chain = load_chain(variant)
    assert [link.path.resolve() for link in chain] == [base, variant]
    assert chain[0].data.disable == ["grep"]


def test_extends_from_a_subfolder(tmp_path: Path) -> None:
    base = write_json(tmp_path / "shared" / "base.json", {"system_prompt": "shared"})
    leaf = write_json(tmp_path / "leaf.json", {"extends": "shared/base.json"})
    assert [link.path.resolve() for link in load_chain(leaf)] == [base, leaf]


def test_a_missing_extended_file_names_the_extending_file(tmp_path: Path) -> None:
    write_json(tmp_path / "root.json", {"extends": "gone.json"})
    leaf = write_json(tmp_path / "leaf.json", {"extends": "root.json"})
    message = broken(leaf)
    assert message.startswith(f"{tmp_path / 'root.json'}: extends: no tool-set file at ")
    assert message.endswith("gone.json")


def test_a_file_extending_itself_is_a_loop(tmp_path: Path) -> None:
    path = write_json(tmp_path / "self.json", {"extends": "self.json"})
    message = broken(path)
    assert message.startswith(f"{path}: extends: ")
    assert "loop" in message


def test_files_extending_each_other_are_a_loop_naming_both(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", {"extends": "b.json"})
    b = write_json(tmp_path / "b.json", {"extends": "a.json"})
    message = broken(a)
    assert ": extends: the tool sets extend each other in a loop" in message
    assert f"({a} -> {b} -> {a})" in message


def test_a_loop_through_a_parent_folder_is_found(tmp_path: Path) -> None:
    write_json(tmp_path / "sub" / "a.json", {"extends": "../b.json"})
    b = write_json(tmp_path / "b.json", {"extends": "sub/a.json"})
    assert "loop" in broken(b)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('{\n  "disable": [,]\n}\n')
    assert broken(path).startswith(f"{path}: not valid JSON at line 2, column 15: ")


def test_invalid_json_in_an_extended_file_names_that_file(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text('{"disable": ["grep"]')
    leaf = write_json(tmp_path / "leaf.json", {"extends": "base.json"})
    message = broken(leaf)
    assert message.startswith(f"{base}: not valid JSON at line 1")
    assert "leaf.json" not in message


@pytest.mark.parametrize("data", [[], "tools", 3, None])
def test_a_file_that_is_not_an_object_is_refused(tmp_path: Path, data: Any) -> None:
    path = write_json(tmp_path / "tools.json", data)
    assert broken(path).startswith(f"{path}: a tool set must be a JSON object, not ")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"disabel": ["grep"]}, "disabel"),
        ({"override": {"file_read": {"descriptio": "x"}}}, "override.file_read.descriptio"),
        ({"override": {"file_read": {"parametres": {}}}}, "override.file_read.parametres"),
        ({"tools": {"lookup": {"description": "x", "result": 1, "reslt": 2}}},
         "tools.lookup.reslt"),
    ],
)
def test_unknown_keys_name_the_file_and_the_field(tmp_path: Path, data: dict, field: str) -> None:
    path = write_json(tmp_path / "tools.json", data)
    message = broken(path)
    assert message.startswith(f"{path}: {field}: unknown key")
    assert "tool-set format" in message


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"disable": "grep"}, "disable"),
        ({"disable": [1]}, "disable.0"),
        ({"extends": 3}, "extends"),
        ({"system_prompt": ""}, "system_prompt"),
        ({"system_prompt": ["a"]}, "system_prompt"),
        ({"override": {"file_read": {"description": ""}}}, "override.file_read.description"),
        ({"override": {"file_read": {"parameters": []}}}, "override.file_read.parameters"),
        ({"override": []}, "override"),
    ],
)
def test_wrong_types_name_the_field(tmp_path: Path, data: dict, field: str) -> None:
    path = write_json(tmp_path / "tools.json", data)
    assert broken(path).startswith(f"{path}: {field}: ")


@pytest.mark.parametrize("name", ["bad name!", "", "x" * 65, "dotted.name"])
def test_a_bad_tool_name_is_refused(tmp_path: Path, name: str) -> None:
    path = write_json(tmp_path / "tools.json", {"tools": {name: {"description": "x", "result": 1}}})
    message = broken(path)
    assert message.startswith(f"{path}: tools: ")
    assert f"tool name {name!r} is not valid" in message


def test_a_tool_with_an_invalid_schema_names_the_tool(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tools.json", {
        "tools": {"lookup": {"description": "x", "result": 1, "parameters": {"type": "array"}}}
    })
    message = broken(path)
    assert message.startswith(f"{path}: tools.lookup.parameters: ")
    assert '"type": "object"' in message


def test_a_tool_that_is_neither_stub_nor_command_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tools.json", {"tools": {"lookup": {"description": "x"}}})
    message = broken(path)
    assert message.startswith(f"{path}: tools.lookup: ")
    assert "`command`" in message and "`result`" in message


def test_every_problem_of_a_file_is_listed(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tools.json", {"disabel": [], "overide": {}})
    message = broken(path)
    assert "disabel: unknown key" in message
    assert "overide: unknown key" in message
