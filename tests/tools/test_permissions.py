"""Permissions and the registry: eval defaults, fixture overrides, deny by name, `ask` auto-allowed."""

from __future__ import annotations

import pytest

from replio_replay.tools.base import ToolContext
from replio_replay.tools.builtin import builtin_tools
from replio_replay.tools.permissions import DEFAULT_PERMISSIONS, Category, Permission, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.toolbox import Toolbox
from tests.helpers import builtin_toolset
from tests.tools._tree import Tree, make_runner

CATEGORIES = {
    "file_read": Category.READ,
    "grep": Category.READ,
    "glob": Category.LIST,
    "list_dir": Category.LIST,
    "web_fetch": Category.WEB,
    "file_write": Category.EDIT,
    "file_edit": Category.EDIT,
    "run_command": Category.BASH,
}

# A harmless call per tool, valid in the test tree.
SAMPLE_CALLS = {
    "file_read": {"path": "README.md"},
    "grep": {"pattern": "main"},
    "glob": {"pattern": "*.md"},
    "list_dir": {},
    "web_fetch": {"url": "ftp://not-fetched"},
    "file_write": {"path": "new.txt", "content": "x"},
    "file_edit": {"path": "README.md", "old_string": "Demo", "new_string": "Demo!"},
    "run_command": {"command": "true"},
}


def test_the_built_ins_are_every_tool_with_its_category() -> None:
    assert {tool.name: tool.category for tool in builtin_tools()} == CATEGORIES


def test_eval_defaults() -> None:
    assert dict(DEFAULT_PERMISSIONS) == {
        Category.READ: Permission.ALLOW, Category.LIST: Permission.ALLOW, Category.WEB: Permission.ALLOW,
        Category.EDIT: Permission.DENY, Category.BASH: Permission.DENY, Category.MCP: Permission.DENY,
    }


@pytest.mark.parametrize(("tool", "category"), sorted(CATEGORIES.items()))
def test_defaults_allow_read_list_web_only(tool: str, category: Category) -> None:
    allowed = Permissions.for_fixture({}).allows(tool, category)
    assert allowed is (category in {Category.READ, Category.LIST, Category.WEB})


def test_fixture_overrides_merge_over_the_defaults() -> None:
    p = Permissions.for_fixture({Category.EDIT: Permission.ALLOW, Category.READ: Permission.DENY})
    assert p.allows("file_write", Category.EDIT)
    assert not p.allows("file_read", Category.READ)
    assert p.allows("glob", Category.LIST)  # untouched default
    assert not p.allows("run_command", Category.BASH)  # untouched default


def test_ask_is_auto_allowed_in_a_headless_run() -> None:
    p = Permissions.for_fixture({Category.BASH: Permission.ASK, Category.READ: Permission.ASK})
    assert p.allows("run_command", Category.BASH)
    assert p.allows("file_read", Category.READ)


def test_tools_deny_denies_by_name_whatever_the_category_says() -> None:
    p = Permissions.for_fixture({Category.EDIT: Permission.ALLOW}, ["grep", "file_edit"])
    assert not p.allows("grep", Category.READ)
    assert p.allows("file_read", Category.READ)
    assert not p.allows("file_edit", Category.EDIT)
    assert p.allows("file_write", Category.EDIT)


def test_the_worktree_config_form() -> None:
    p = Permissions.for_fixture({Category.BASH: Permission.ASK}, ["grep"])
    assert p.to_json() == {
        "tool_permission": {
            "bash": "ask", "edit": "deny", "list": "allow", "mcp": "deny", "read": "allow", "web": "allow",
        },
        "tools_deny": ["grep"],
    }


@pytest.mark.parametrize("tool", ["file_write", "file_edit", "run_command"])
def test_denied_by_default_calls_are_refused_at_execution(tree: Tree, tool: str) -> None:
    run = make_runner(tree, Permissions.for_fixture({}))
    out = run(tool, SAMPLE_CALLS[tool])
    assert out.startswith(f"Error: permission denied: {tool} ({CATEGORIES[tool].value})")
    assert (tree.root / "README.md").read_text() == "# Demo\nA small project.\n"
    assert not (tree.root / "new.txt").exists()


@pytest.mark.parametrize("tool", sorted(CATEGORIES))
def test_every_tool_can_be_denied_by_category(tree: Tree, tool: str) -> None:
    run = make_runner(tree, Permissions.for_fixture({CATEGORIES[tool]: Permission.DENY}))
    assert run(tool, SAMPLE_CALLS[tool]).startswith("Error: permission denied")


@pytest.mark.parametrize("tool", sorted(CATEGORIES))
def test_every_tool_can_be_denied_by_name(tree: Tree, tool: str) -> None:
    everything = {c: Permission.ALLOW for c in Category}
    run = make_runner(tree, Permissions.for_fixture(everything, [tool]))
    assert run(tool, SAMPLE_CALLS[tool]).startswith("Error: permission denied")


@pytest.mark.parametrize("tool", sorted(CATEGORIES))
def test_every_tool_runs_when_asked(tree: Tree, tool: str) -> None:
    run = make_runner(tree, Permissions.for_fixture({c: Permission.ASK for c in Category}))
    out = run(tool, SAMPLE_CALLS[tool])
    assert not out.startswith("Error: permission denied")


def test_permission_is_checked_before_the_arguments(tree: Tree) -> None:
    run = make_runner(tree, Permissions.for_fixture({}))
    assert run("run_command", {"bogus": 1}).startswith("Error: permission denied")
    assert run("run_command", "not json").startswith("Error: permission denied")


def test_an_unknown_tool_is_an_error_result(tree: Tree) -> None:
    out = make_runner(tree)("delete_everything", {})
    assert out.startswith("Error: unknown tool 'delete_everything'; available tools: ")
    assert "file_read" in out


def test_raw_string_arguments_are_an_error_result(tree: Tree) -> None:
    assert make_runner(tree)("file_read", '{"path": "README.md"').startswith(
        'Error: arguments for file_read are not valid JSON: {"path": "README.md"'
    )


def test_every_tool_is_offered_with_a_json_schema() -> None:
    schemas = builtin_toolset().specs
    assert [s["name"] for s in schemas] == [t.name for t in builtin_tools()]
    for spec in schemas:
        assert spec["description"]
        params = spec["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert "title" not in params and all("title" not in p for p in params["properties"].values())
    by_name = {s["name"]: s["parameters"] for s in schemas}
    assert by_name["file_read"]["required"] == ["path"]
    assert set(by_name["file_read"]["properties"]) == {"path", "offset", "limit"}
    assert set(by_name["grep"]["properties"]) == {"pattern", "path", "glob"}
    assert set(by_name["run_command"]["properties"]) == {"command", "timeout"}
    assert set(by_name["list_dir"]["properties"]) == {"path", "depth"}
    assert by_name["web_fetch"]["required"] == ["url"]


def test_a_toolbox_never_raises_on_odd_arguments(tree: Tree) -> None:
    toolbox = Toolbox(ToolContext(Sandbox(tree.root)), Permissions.for_fixture({}), builtin_toolset())
    for args in (None, 3, [], ["a"], {"path": None}, {"path": 3}):
        assert toolbox.call("file_read", args).startswith("Error: ")
