"""Resolving tool sets: sources, `extends`, disable, override, MCP servers (a fixture's additions: plan/test_offer)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from replio_replay.errors import ToolSetError
from replio_replay.plan.offer import for_fixture, name_problems
from replio_replay.tools.builtin import builtin_tools
from replio_replay.tools.permissions import Category
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.setfile import SetFile, ToolSetFile
from replio_replay.tools.toolset import DEFAULT_SYSTEM_PROMPT, ToolSet
from tests.helpers import make_fixture

BUILTINS = ("file_read", "file_write", "file_edit", "glob", "list_dir", "grep", "run_command",
            "web_fetch")
FILE_READ_SCHEMA = copy.deepcopy(dict(builtin_tools()[0].parameters))


def link(path: str, **data: Any) -> SetFile:
    """One file of a chain, validated as load_chain would."""
    return SetFile(Path(path), ToolSetFile.model_validate(data))


def resolve(*chain: SetFile, sources: Any = None, name: str = "t") -> ToolSet:
    return resolve_toolset(name, list(chain), builtin_tools() if sources is None else sources)


def refused(*chain: SetFile, sources: Any = None) -> str:
    with pytest.raises(ToolSetError) as info:
        resolve(*chain, sources=sources)
    return str(info.value)


def stub(description: str = "Look it up.", result: Any = "found", **more: Any) -> dict[str, Any]:
    return {"description": description, "result": result, **more}


def tool_of(toolset: ToolSet, name: str) -> Any:
    found = toolset.get(name)
    assert found is not None, f"{name} is not offered"
    return found


# sources and the chain ----------------------------------------------------------------------------


def test_no_files_gives_the_eight_builtins_in_order() -> None:
    toolset = resolve(name="default")
    assert toolset.name == "default"
    assert toolset.names == BUILTINS
    assert toolset.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert toolset.known == frozenset(BUILTINS)
    assert toolset.tools == builtin_tools()


def test_the_last_file_that_sets_a_system_prompt_wins() -> None:
    chain = [link("/p/root.json", system_prompt="Root."), link("/p/mid.json", system_prompt="Mid."),
             link("/p/leaf.json")]
    assert resolve(*chain).system_prompt == "Mid."
    assert resolve(*chain[:1]).system_prompt == "Root."
    assert resolve(link("/p/leaf.json", system_prompt="Leaf."), *chain).system_prompt == "Mid."


def test_disable_removes_tools_and_keeps_them_known() -> None:
    toolset = resolve(link("/p/tools.json", disable=["grep", "web_fetch"]))
    assert toolset.names == ("file_read", "file_write", "file_edit", "glob", "list_dir",
                             "run_command")
    assert toolset.get("grep") is None
    assert {"grep", "web_fetch"} <= toolset.known
    assert toolset.known == frozenset(BUILTINS)


def test_disabled_names_add_up_along_the_chain() -> None:
    toolset = resolve(link("/p/a.json", disable=["grep"]), link("/p/b.json", disable=["glob"]))
    assert "grep" not in toolset.names and "glob" not in toolset.names
    assert len(toolset.names) == 6


def test_disabling_a_tool_twice_is_harmless() -> None:
    toolset = resolve(link("/p/a.json", disable=["grep"]), link("/p/b.json", disable=["grep"]))
    assert len(toolset.names) == 7 and "grep" not in toolset.names


def test_disabling_an_unknown_tool_suggests_the_closest() -> None:
    message = refused(link("/p/tools.json", disable=["file_reed"]))
    assert message == "/p/tools.json: disable: no tool named 'file_reed'; did you mean 'file_read'?"


def test_disabling_a_name_like_nothing_lists_the_known_tools() -> None:
    message = refused(link("/p/tools.json", disable=["zzzzzz"]))
    assert message.startswith("/p/tools.json: disable: no tool named 'zzzzzz'; known tools: ")
    assert ", ".join(sorted(BUILTINS)) in message


def test_a_declared_tool_can_be_disabled_by_its_own_file() -> None:
    toolset = resolve(link("/p/tools.json", tools={"lookup": stub()}, disable=["lookup"]))
    assert toolset.names == BUILTINS
    assert "lookup" in toolset.known


# override -----------------------------------------------------------------------------------------


def test_override_description_replaces_it_and_keeps_the_rest() -> None:
    toolset = resolve(link("/p/tools.json", override={"grep": {"description": "Search text."}}))
    grep = tool_of(toolset, "grep")
    original = builtin_tools()[BUILTINS.index("grep")]
    assert grep.description == "Search text."
    assert grep.parameters == original.parameters
    assert grep.category is original.category
    assert toolset.names == BUILTINS


def test_override_parameters_merges_into_the_schema() -> None:
    toolset = resolve(link("/p/tools.json", override={"file_read": {
        "parameters": {"properties": {"offset": {"description": "Leave it out."}}}
    }}))
    schema = tool_of(toolset, "file_read").parameters
    expected = copy.deepcopy(FILE_READ_SCHEMA)
    expected["properties"]["offset"]["description"] = "Leave it out."
    assert schema == expected
    assert schema["required"] == ["path"]
    assert schema["properties"]["offset"]["minimum"] == 1
    assert list(schema["properties"]) == ["path", "offset", "limit"]


def test_override_parameters_null_removes_a_key() -> None:
    toolset = resolve(link("/p/tools.json", override={"file_read": {
        "parameters": {"properties": {"limit": None, "offset": {"default": None}}}
    }}))
    schema = tool_of(toolset, "file_read").parameters
    assert set(schema["properties"]) == {"path", "offset"}
    assert "default" not in schema["properties"]["offset"]
    assert schema["properties"]["offset"]["minimum"] == 1
    assert schema["properties"]["path"] == FILE_READ_SCHEMA["properties"]["path"]


def test_override_parameters_turns_on_the_schema_check() -> None:
    toolset = resolve(link("/p/tools.json", override={"file_read": {
        "parameters": {"properties": {"limit": {"maximum": 50}}}
    }}))
    assert tool_of(toolset, "file_read").checks_schema is True
    assert tool_of(toolset, "grep").checks_schema is False


def test_an_override_cannot_add_an_argument_a_builtin_does_not_take() -> None:
    message = refused(link("/p/tools.json", override={"file_read": {
        "parameters": {"properties": {"encoding": {"type": "string"}}}
    }}))
    assert message.startswith("/p/tools.json: override.file_read.parameters: file_read takes no argument")
    assert "'encoding'" in message


def test_an_override_may_add_an_argument_to_a_declared_stub() -> None:
    toolset = resolve(link("/p/tools.json", tools={"lookup": stub()}, override={"lookup": {
        "parameters": {"properties": {"id": {"type": "string"}}}
    }}))
    assert set(tool_of(toolset, "lookup").parameters["properties"]) == {"id"}


def test_override_does_not_change_the_builtin_tools() -> None:
    resolve(link("/p/tools.json", override={"file_read": {
        "description": "Other.",
        "parameters": {"properties": {"offset": {"description": "Other."}, "limit": None}},
    }}))
    assert builtin_tools()[0].parameters == FILE_READ_SCHEMA
    assert builtin_tools()[0].description != "Other."
    assert resolve().tools == builtin_tools()


def test_overrides_apply_in_chain_order() -> None:
    toolset = resolve(
        link("/p/base.json", override={"grep": {"description": "Base.", "parameters": {
            "properties": {"glob": {"description": "Base glob."}}}}}),
        link("/p/leaf.json", override={"grep": {"description": "Leaf."}}),
    )
    grep = tool_of(toolset, "grep")
    assert grep.description == "Leaf."
    assert grep.parameters["properties"]["glob"]["description"] == "Base glob."


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        ({"properties": {"offset": {"type": "intger"}}}, "at properties/offset/type"),
        ({"type": None}, '"type": "object"'),
        ({"type": "array"}, '"type": "object"'),
        ({"required": "path"}, "at required"),
    ],
)
def test_an_override_that_breaks_the_schema_is_an_error(patch: dict, words: str) -> None:
    message = refused(link("/p/tools.json", override={"file_read": {"parameters": patch}}))
    assert message.startswith("/p/tools.json: override.file_read.parameters: after merging, ")
    assert words in message


def test_overriding_a_missing_tool_names_the_file_and_field() -> None:
    message = refused(link("/p/tools.json", override={"grap": {"description": "x"}}))
    assert message == ("/p/tools.json: override.grap: cannot override it: no tool named 'grap'; "
                       "did you mean 'grep'?")


def test_overriding_a_disabled_tool_says_it_is_disabled() -> None:
    message = refused(link("/p/tools.json", disable=["grep"],
                           override={"grep": {"description": "x"}}))
    assert message == "/p/tools.json: override.grep: cannot override it: it is disabled"


def test_overriding_a_tool_its_base_disabled_names_the_child() -> None:
    message = refused(link("/p/base.json", disable=["grep"]),
                      link("/p/leaf.json", override={"grep": {"description": "x"}}))
    assert message.startswith("/p/leaf.json: override.grep: ")
    assert "it is disabled" in message


def test_a_declared_tool_can_be_overridden_by_a_child() -> None:
    toolset = resolve(link("/p/base.json", tools={"lookup": stub()}),
                      link("/p/leaf.json", override={"lookup": {"description": "Find it."}}))
    assert tool_of(toolset, "lookup").description == "Find it."


# declared tools and collisions --------------------------------------------------------------------


def test_declared_tools_come_after_the_builtins() -> None:
    toolset = resolve(link("/p/tools.json", tools={"lookup": stub(), "convert": stub("Convert.")}))
    assert toolset.names == (*BUILTINS, "lookup", "convert")
    lookup = tool_of(toolset, "lookup")
    assert lookup.source == "/p/tools.json"
    assert lookup.category is Category.READ
    assert lookup.checks_schema is True


def test_a_declared_tool_colliding_with_a_builtin_names_both_sources() -> None:
    message = refused(link("/p/tools.json", tools={"grep": stub()}))
    assert "tool 'grep' is defined twice: by built-in and by /p/tools.json" in message
    assert "override" in message


def test_a_declared_tool_colliding_with_a_disabled_builtin_is_still_an_error() -> None:
    message = refused(link("/p/tools.json", tools={"grep": stub()}, disable=["grep"]))
    assert "defined twice" in message


def test_a_child_redefining_its_bases_tool_replaces_it() -> None:
    toolset = resolve(
        link("/p/base.json", tools={"lookup": stub("Base.", "base"), "keep": stub("Keep.")}),
        link("/p/leaf.json", tools={"lookup": stub("Leaf.", "leaf")}),
    )
    assert toolset.names == (*BUILTINS, "lookup", "keep")
    lookup = tool_of(toolset, "lookup")
    assert lookup.description == "Leaf."
    assert lookup.source == "/p/leaf.json"
    assert lookup.invoke({}, None) == "leaf"  # type: ignore[arg-type]


def plugin_tool(name: str, plugin: str = "acme") -> Any:
    """A tool as plugin_tools returns it: any tool, renamed, with a plugin source."""
    return dataclasses.replace(builtin_tools()[0], name=name, source=f"plugin:{plugin}")


def test_a_plugin_tool_colliding_with_a_builtin_is_an_error() -> None:
    message = refused(sources=[*builtin_tools(), plugin_tool("grep")])
    assert "tool 'grep' is defined twice: by built-in and by plugin:acme" in message


def test_two_plugins_defining_one_name_is_an_error() -> None:
    message = refused(sources=[plugin_tool("lookup", "one"), plugin_tool("lookup", "two")])
    assert "by plugin:one and by plugin:two" in message


def test_a_declared_tool_colliding_with_a_plugin_tool_is_an_error() -> None:
    message = refused(link("/p/tools.json", tools={"lookup": stub()}),
                      sources=[*builtin_tools(), plugin_tool("lookup")])
    assert "by plugin:acme and by /p/tools.json" in message


def test_plugin_tools_are_offered_after_the_builtins() -> None:
    toolset = resolve(sources=[*builtin_tools(), plugin_tool("lookup")])
    assert toolset.names == (*BUILTINS, "lookup")
    assert tool_of(toolset, "lookup").source == "plugin:acme"


# digest and schema hash ---------------------------------------------------------------------------


def with_lookup(result: Any = "found", description: str = "Look it up.", **data: Any) -> ToolSet:
    return resolve(link("/p/tools.json", tools={"lookup": stub(description, result)}, **data))


def test_the_digest_is_stable_for_the_same_input() -> None:
    assert with_lookup().digest == with_lookup().digest
    assert with_lookup().schema_hash == with_lookup().schema_hash
    assert resolve().digest == resolve().digest
    assert len(resolve().digest) == 16


def test_the_digest_does_not_depend_on_the_file_path_or_set_name() -> None:
    a = resolve(link("/p/a.json", tools={"lookup": stub()}), name="a")
    b = resolve(link("/q/b.json", tools={"lookup": stub()}), name="b")
    assert a.digest == b.digest


def test_a_description_change_changes_the_digest_and_schema_hash() -> None:
    changed = with_lookup(description="Find it.")
    assert changed.digest != with_lookup().digest
    assert changed.schema_hash != with_lookup().schema_hash
    overridden = resolve(link("/p/tools.json", override={"grep": {"description": "Search."}}))
    assert overridden.digest != resolve().digest
    assert overridden.schema_hash != resolve().schema_hash


def test_a_stub_result_change_changes_the_digest_but_not_the_schema_hash() -> None:
    changed = with_lookup(result={"status": "shipped"})
    assert changed.digest != with_lookup().digest
    assert changed.schema_hash == with_lookup().schema_hash
    assert changed.specs == with_lookup().specs


def test_a_system_prompt_change_changes_the_digest_but_not_the_schema_hash() -> None:
    changed = with_lookup(system_prompt="Be terse.")
    assert changed.digest != with_lookup().digest
    assert changed.schema_hash == with_lookup().schema_hash


def test_disabling_a_tool_changes_the_digest_and_schema_hash() -> None:
    slim = resolve(link("/p/tools.json", disable=["grep"]))
    assert slim.digest != resolve().digest
    assert slim.schema_hash != resolve().schema_hash


# MCP servers: their tools arrive per fixture ------------------------------------------------------

def _mcp_tool(name: str, description: str = "From the server.") -> Any:
    from replio_replay.tools.base import Tool

    return Tool(name, description, Category.MCP, {"type": "object", "properties": {"repo_path": {"type": "string"}}},
                lambda args, ctx: "ok", source="MCP server 'git'")


GIT = {"command": "{python}", "args": ["-m", "mcp_server_git"]}


def _with_servers(*chain: SetFile, servers: Any = None) -> ToolSet:
    from pydantic import TypeAdapter

    from replio_replay.tools.mcp.config import McpServers

    parsed = TypeAdapter(McpServers).validate_python(servers if servers is not None else {"git": GIT})
    return resolve_toolset("t", list(chain), builtin_tools(), parsed)


def test_tool_set_files_add_and_remove_servers_over_the_configs() -> None:
    toolset = _with_servers(link("a.json", mcp_servers={"docs": {"url": "http://127.0.0.1:1/mcp"}}),
                            link("b.json", mcp_servers={"git": None}))
    assert list(toolset.mcp_servers) == ["docs"]
    assert toolset.digest != _with_servers().digest != resolve().digest
    assert resolve().digest == resolve_toolset("t", [], builtin_tools(), {}).digest  # no servers: as before


def test_changes_to_tools_only_a_server_can_have_wait_for_it() -> None:
    from replio_replay.tools.resolve import with_mcp_tools

    toolset = _with_servers(link("v.json", override={"git_log": {"description": "The history."}},
                                 disable=["git_commit"]))
    assert [p.name for p in toolset.pending] == ["git_commit", "git_log"]
    final = with_mcp_tools(toolset, [_mcp_tool("git_log"), _mcp_tool("git_commit"), _mcp_tool("git_status")])
    assert tool_of(final, "git_log").description == "The history."
    assert final.get("git_commit") is None and "git_commit" in final.known
    assert final.names[-2:] == ("git_log", "git_status")
    assert "no tool named 'git_lg'" in refused(link("v.json", override={"git_lg": {"description": "x"}}))


def test_a_change_no_server_satisfies_is_named_with_its_file() -> None:
    from replio_replay.tools.resolve import with_mcp_tools

    toolset = _with_servers(link("v.json", override={"git_lg": {"description": "x"}}))
    with pytest.raises(ToolSetError, match=r"v.json: override.git_lg: no tool named 'git_lg'; did you mean 'git_log'"):
        with_mcp_tools(toolset, [_mcp_tool("git_log")])


def test_a_fixture_with_some_servers_ignores_changes_for_the_others() -> None:
    from replio_replay.tools.resolve import with_mcp_tools

    toolset = _with_servers(link("v.json", override={"docs_search": {"description": "x"}}),
                            servers={"git": GIT, "docs": {"url": "http://127.0.0.1:1/mcp"}})
    offered = for_fixture(toolset, make_fixture(mcp_servers=["git"]), "f.json")
    assert list(offered.mcp_servers) == ["git"]
    assert with_mcp_tools(offered, [_mcp_tool("git_log")]).names[-1] == "git_log"


def test_a_server_tool_may_not_take_a_name_already_taken() -> None:
    from replio_replay.tools.resolve import with_mcp_tools

    with pytest.raises(ToolSetError, match=r"tool 'file_read' is defined twice: by built-in and by MCP server 'git'"):
        with_mcp_tools(_with_servers(), [_mcp_tool("file_read")])
    with pytest.raises(ToolSetError, match=r"tool 'git_log' is defined twice: by MCP server 'git' and by MCP server"):
        with_mcp_tools(_with_servers(), [_mcp_tool("git_log"), _mcp_tool("git_log")])


def test_tools_offered_and_names_wait_for_the_servers_too() -> None:
    from replio_replay.tools.resolve import with_mcp_tools

    fixture = make_fixture(tools_offered=["git_log", "file_read"], expected=["git_log"],
                           verifier={"must_include": ["git_log"], "avoid": ["git_reset"]})
    offered = for_fixture(_with_servers(), fixture, "f.json")
    assert offered.names == ("file_read",) and name_problems(fixture, offered) == []
    final = with_mcp_tools(offered, [_mcp_tool("git_log"), _mcp_tool("git_reset")])
    assert final.names == ("file_read", "git_log") and name_problems(fixture, final) == []
    typo = make_fixture(expected=["git_lgo"])
    assert name_problems(typo, with_mcp_tools(_with_servers(), [_mcp_tool("git_log")])) == [
        "expected: no tool named 'git_lgo' in tool set 't', so the check can never pass; did you mean 'git_log'?"]
    with pytest.raises(ToolSetError, match="tools_offered: no tool named 'git_lgo'"):
        with_mcp_tools(for_fixture(_with_servers(), make_fixture(tools_offered=["git_lgo"]), "f.json"),
                       [_mcp_tool("git_log")])
