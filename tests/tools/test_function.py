"""The `tool` decorator: Python tools, called through a Toolbox; and plugins' register_tools."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Annotated, Any

import pluggy
import pytest
from pydantic import Field

from replio_replay.fixtures import hookspecs
from replio_replay.fixtures.hookspecs import hookimpl
from replio_replay.tools.base import Tool, ToolContext, ToolFailure
from replio_replay.tools.function import function_tool, tool
from replio_replay.tools.permissions import Category, Permissions
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.sources import plugin_tools
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet


@tool
def lookup_order(
    order_id: str,
    count: Annotated[int, Field(ge=1, description="How many orders to return.")] = 1,
    verbose: bool = False,
) -> str:
    """Look up an order by its id.

    Returns its status.
    """
    return f"{order_id} x{count}{' (verbose)' if verbose else ''}: shipped"


def run(the_tool: Tool, root: Path, arguments: Any) -> str:
    """The result of one call of `the_tool` through a Toolbox over `root`."""
    toolbox = Toolbox(ToolContext(Sandbox(root)), Permissions.for_fixture({}),
                      ToolSet("t", (the_tool,)))
    try:
        result = toolbox.call(the_tool.name, arguments)
    finally:
        toolbox.close()
    assert isinstance(result, str)
    return result


def titles(node: Any) -> list[Any]:
    """Every value of a `title` key anywhere in a JSON Schema."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "title"] + [
            t for v in node.values() for t in titles(v)
        ]
    if isinstance(node, list):
        return [t for v in node for t in titles(v)]
    return []


# the decorator ------------------------------------------------------------------------------------


def test_the_name_and_description_come_from_the_function() -> None:
    assert isinstance(lookup_order, Tool)
    assert lookup_order.name == "lookup_order"
    assert lookup_order.description == "Look up an order by its id.\n\nReturns its status."
    assert lookup_order.category is Category.READ
    assert lookup_order.source == f"python:{__name__}"


def test_the_parameters_come_from_the_type_hints() -> None:
    schema = lookup_order.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ["order_id"]
    assert schema["properties"]["order_id"] == {"type": "string"}
    assert schema["properties"]["count"] == {
        "type": "integer", "minimum": 1, "default": 1, "description": "How many orders to return."
    }
    assert schema["properties"]["verbose"] == {"type": "boolean", "default": False}
    assert schema["additionalProperties"] is False
    assert titles(schema) == []


def test_the_spec_is_name_description_and_schema() -> None:
    assert lookup_order.spec() == {"name": "lookup_order", "description": lookup_order.description,
                                   "parameters": dict(lookup_order.parameters)}


def test_a_function_without_a_docstring_is_refused() -> None:
    def bare(x: int) -> str:
        return str(x)

    with pytest.raises(ValueError, match="has no description"):
        tool(bare)


def test_an_explicit_description_needs_no_docstring() -> None:
    def bare(x: int) -> str:
        return str(x)

    assert tool(description="Echo x.")(bare).description == "Echo x."


def test_a_parameter_named_title_is_kept() -> None:
    @tool
    def rename(title: str, subtitle: str = "") -> str:
        """Rename the document."""
        return title

    schema = rename.parameters
    assert schema["properties"]["title"] == {"type": "string"}
    assert schema["required"] == ["title"]
    assert titles(schema) == [{"type": "string"}]


def test_nested_titles_are_stripped_too() -> None:
    @tool
    def tag(tags: list[str], weights: dict[str, float] | None = None) -> str:
        """Tag it."""
        return ",".join(tags)

    assert titles(tag.parameters) == []
    assert tag.parameters["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}


def test_a_tool_context_parameter_receives_the_context(tmp_path: Path) -> None:
    seen: list[Any] = []

    @tool
    def where(path: str, context: ToolContext) -> str:
        """Where a path is."""
        seen.append(context)
        return context.sandbox.display(context.path(path))

    assert set(where.parameters["properties"]) == {"path"}
    assert where.parameters["required"] == ["path"]
    assert run(where, tmp_path, {"path": "a/../b"}) == "b"
    assert isinstance(seen[0], ToolContext) and seen[0].root == tmp_path.resolve()


def test_a_parameter_named_ctx_receives_the_context(tmp_path: Path) -> None:
    @tool
    def root_name(ctx) -> str:  # type: ignore[no-untyped-def]
        """The root's kind."""
        return type(ctx).__name__

    assert root_name.parameters["properties"] == {}
    assert "ctx" not in json.dumps(root_name.parameters)
    assert run(root_name, tmp_path, {}) == "ToolContext"


def test_the_context_is_not_an_argument_the_model_may_give(tmp_path: Path) -> None:
    @tool
    def echo(text: str, ctx: ToolContext) -> str:
        """Echo."""
        return text

    result = run(echo, tmp_path, {"text": "hi", "ctx": "mine"})
    assert result.startswith("Error: invalid arguments for echo: ctx")


def test_ctx_path_outside_the_worktree_is_a_tool_failure(tmp_path: Path) -> None:
    ctx = ToolContext(Sandbox(tmp_path / "wt"))
    with pytest.raises(ToolFailure, match="outside the project"):
        ctx.path("../x")
    with pytest.raises(ToolFailure, match="absolute path"):
        ctx.path("/etc/passwd")


def test_a_sandbox_escape_in_a_tool_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "x").write_text("SECRET")

    @tool
    def read(path: str, ctx: ToolContext) -> str:
        """Read a file."""
        return ctx.path(path).read_text()

    result = run(read, tmp_path / "wt", {"path": "../x"})
    assert result == ("Error: path '../x' is outside the project; "
                      "use a path relative to the project root")


# calling through a Toolbox ------------------------------------------------------------------------


def test_valid_arguments_return_the_text(tmp_path: Path) -> None:
    assert run(lookup_order, tmp_path, {"order_id": "A1"}) == "A1 x1: shipped"
    assert run(lookup_order, tmp_path, {"order_id": "A1", "count": 2, "verbose": True}) == (
        "A1 x2 (verbose): shipped"
    )


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({}, "order_id"),
        ({"order_id": "A1", "count": 0}, "count"),
        ({"order_id": "A1", "count": "many"}, "count"),
        ({"order_id": "A1", "colour": "red"}, "colour"),
    ],
)
def test_invalid_arguments_are_an_error_result(tmp_path: Path, arguments: dict, words: str) -> None:
    result = run(lookup_order, tmp_path, arguments)
    assert result.startswith(f"Error: invalid arguments for lookup_order: {words}")


def test_every_invalid_argument_is_named(tmp_path: Path) -> None:
    result = run(lookup_order, tmp_path, {"count": 0, "colour": "red"})
    assert "order_id" in result and "count" in result and "colour" in result


def test_a_dict_result_is_written_as_canonical_json(tmp_path: Path) -> None:
    @tool
    def status(order_id: str) -> dict:
        """The status."""
        return {"status": "shipped", "id": order_id, "items": [1, 2], "note": "déjà"}

    assert run(status, tmp_path, {"order_id": "A1"}) == (
        '{"id":"A1","items":[1,2],"note":"déjà","status":"shipped"}'
    )


def test_a_result_that_is_not_json_is_an_error_result(tmp_path: Path) -> None:
    @tool
    def odd() -> Any:
        """Odd."""
        return {1, 2}

    assert run(odd, tmp_path, {}) == "Error: the tool returned a set, not text or JSON"


def test_a_tool_failure_is_an_error_result(tmp_path: Path) -> None:
    @tool
    def fails(order_id: str) -> str:
        """Fails."""
        raise ToolFailure(f"no order {order_id}")

    assert run(fails, tmp_path, {"order_id": "A1"}) == "Error: no order A1"


def test_an_unexpected_exception_is_an_error_result(tmp_path: Path) -> None:
    @tool
    def buggy(order_id: str) -> str:
        """Buggy."""
        return {}[order_id]  # type: ignore[no-any-return]

    assert run(buggy, tmp_path, {"order_id": "A1"}) == "Error: buggy failed: KeyError: 'A1'"


def test_an_unexpected_os_error_is_an_error_result(tmp_path: Path) -> None:
    @tool
    def missing(ctx: ToolContext) -> str:
        """Missing."""
        return ctx.path("nope.txt").read_text()

    assert run(missing, tmp_path, {}) == "Error: missing failed: No such file or directory"


def test_arguments_that_are_not_json_are_an_error_result(tmp_path: Path) -> None:
    assert run(lookup_order, tmp_path, '{"order_id": ').startswith(
        "Error: arguments for lookup_order are not valid JSON"
    )


# an explicit JSON Schema --------------------------------------------------------------------------

CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 2}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


@tool(parameters=CITY_SCHEMA, category="web")
def forecast(ctx: ToolContext, **arguments: Any) -> dict:
    """The weather forecast for a city."""
    return {"arguments": arguments, "has_ctx": isinstance(ctx, ToolContext)}


def test_an_explicit_schema_is_offered_as_given() -> None:
    assert forecast.parameters == CITY_SCHEMA
    assert forecast.checks_schema is True
    assert forecast.category is Category.WEB


def test_an_explicit_schema_passes_the_arguments_as_keywords(tmp_path: Path) -> None:
    result = json.loads(run(forecast, tmp_path, {"city": "Oslo", "days": 3}))
    assert result == {"arguments": {"city": "Oslo", "days": 3}, "has_ctx": True}


def test_an_explicit_schema_checks_the_arguments(tmp_path: Path) -> None:
    result = run(forecast, tmp_path, {"city": "O", "days": "3", "extra": 1})
    assert result.startswith("Error: invalid arguments for forecast: ")
    assert "'extra' was unexpected" in result
    assert 'city: "O" is shorter than 2 characters' in result
    assert 'days: "3" is not of type "integer"' in result
    assert result.endswith('(got {"city": "O", "days": "3", "extra": 1})')


def test_an_explicit_schema_with_named_parameters(tmp_path: Path) -> None:
    @tool(parameters=CITY_SCHEMA)
    def weather(city: str, days: int = 1) -> str:
        """Weather."""
        return f"{city}:{days}"

    assert run(weather, tmp_path, {"city": "Oslo"}) == "Oslo:1"
    assert run(weather, tmp_path, {}).startswith(
        'Error: invalid arguments for weather: arguments: "city" is a required property'
    )


@pytest.mark.parametrize("schema", [{"type": "array"}, {"type": "object", "required": "city"}])
def test_an_invalid_explicit_schema_is_refused(schema: dict) -> None:
    def weather(city: str) -> str:
        """Weather."""
        return city

    with pytest.raises(ValueError, match="tool 'weather': parameters"):
        tool(parameters=schema)(weather)


# name and category --------------------------------------------------------------------------------


def test_name_and_category_may_be_given() -> None:
    @tool(name="fetch_page", category="web")
    def fetch(url: str) -> str:
        """Fetch a page."""
        return url

    assert fetch.name == "fetch_page"
    assert fetch.category is Category.WEB
    assert fetch.spec()["name"] == "fetch_page"


@pytest.mark.parametrize("name", ["bad name", "x" * 65, "dotted.name", "ünicode"])
def test_an_invalid_name_is_refused(name: str) -> None:
    def fine(x: int) -> str:
        """Fine."""
        return str(x)

    with pytest.raises(ValueError, match="is not valid"):
        tool(name=name)(fine)


def test_an_unknown_category_is_refused() -> None:
    def fine(x: int) -> str:
        """Fine."""
        return str(x)

    with pytest.raises(ValueError):
        tool(category="teleport")(fine)


def test_a_denied_category_is_not_run(tmp_path: Path) -> None:
    calls: list[str] = []

    @tool(category="bash")
    def shell(command: str) -> str:
        """Run it."""
        calls.append(command)
        return "ran"

    assert run(shell, tmp_path, {"command": "ls"}).startswith("Error: permission denied: shell")
    assert calls == []


# plugin_tools -------------------------------------------------------------------------------------


def manager(**plugins: object) -> pluggy.PluginManager:
    """A throwaway plugin manager with the hook specs and `plugins` registered by name."""
    pm = pluggy.PluginManager("replio")
    pm.add_hookspecs(hookspecs)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    return pm


class Registers:
    """A plugin registering fixed tools."""

    def __init__(self, **tools: object) -> None:
        self.tools = tools

    @hookimpl
    def register_tools(self, tools: dict[str, Any]) -> None:
        tools.update(self.tools)


class Raises:
    @hookimpl
    def register_tools(self, tools: dict[str, Any]) -> None:
        tools["half_done"] = lookup_order
        raise RuntimeError("boom")


def test_a_plugin_tool_is_named_by_its_key_with_the_plugin_as_source() -> None:
    tools, problems = plugin_tools(manager(acme=Registers(lookup=lookup_order)))
    assert problems == []
    [found] = tools
    assert found.name == "lookup"
    assert found.source == "plugin:acme"
    assert found.description == lookup_order.description
    assert found.parameters == lookup_order.parameters
    assert lookup_order.name == "lookup_order"


def test_a_plugin_tool_runs_under_its_key(tmp_path: Path) -> None:
    [found], _ = plugin_tools(manager(acme=Registers(lookup=lookup_order)))
    assert run(found, tmp_path, {"order_id": "A1"}) == "A1 x1: shipped"


def test_a_renamed_plugin_tool_reports_invalid_arguments_under_its_key(tmp_path: Path) -> None:
    [found], _ = plugin_tools(manager(acme=Registers(lookup=lookup_order)))
    result = run(found, tmp_path, {"order_id": "A1", "count": 0})
    assert result.startswith("Error: invalid arguments for lookup: count"), result


def test_a_module_plugin_registers_tools() -> None:
    @hookimpl
    def register_tools(tools: dict[str, Any]) -> None:
        tools["forecast"] = forecast

    module = types.ModuleType("acme_weather")
    module.register_tools = register_tools  # type: ignore[attr-defined]
    [found], problems = plugin_tools(manager(weather=module))
    assert (found.name, found.source) == ("forecast", "plugin:weather")
    assert found.category is Category.WEB
    assert problems == []


def test_tools_come_back_in_registration_order() -> None:
    pm = manager(first=Registers(a=lookup_order, b=forecast), second=Registers(c=lookup_order))
    tools, _ = plugin_tools(pm)
    assert [(t.name, t.source) for t in tools] == [
        ("a", "plugin:first"), ("b", "plugin:first"), ("c", "plugin:second")
    ]


def test_a_failing_plugin_is_a_problem_and_the_others_still_count() -> None:
    tools, problems = plugin_tools(manager(broken=Raises(), acme=Registers(lookup=lookup_order)))
    assert [t.name for t in tools] == ["lookup"]
    assert len(problems) == 1
    assert problems[0].file == "plugin:broken"
    assert problems[0].message == "register_tools failed: RuntimeError: boom"


def test_a_value_that_is_not_a_tool_is_a_problem() -> None:
    def plain(x: int) -> str:
        """Not decorated."""
        return str(x)

    tools, problems = plugin_tools(manager(acme=Registers(plain=plain, lookup=lookup_order)))
    assert [t.name for t in tools] == ["lookup"]
    [problem] = problems
    assert problem.file == "plugin:acme"
    assert problem.message.startswith("tool 'plain' is a function, not a Tool")
    assert "replio_replay.tool decorator" in problem.message


def test_an_invalid_key_is_a_problem() -> None:
    tools, problems = plugin_tools(manager(acme=Registers(**{"bad name": lookup_order,
                                                              "lookup": lookup_order})))
    assert [t.name for t in tools] == ["lookup"]
    [problem] = problems
    assert problem.file == "plugin:acme"
    assert "tool name 'bad name' is not valid" in problem.message


def test_no_plugins_means_no_tools() -> None:
    assert plugin_tools(manager()) == ([], [])


def test_a_tool_that_keeps_and_changes_its_arguments_leaves_the_call_as_it_was(tmp_path: Path) -> None:
    kept: list[list[str]] = []

    def remember(tags: list[str]) -> str:
        """Keep the tags, then add one."""
        kept.append(tags)
        tags.append("#later")
        return "ok"

    made = function_tool(remember, name=None, description=None, category=Category.READ,
                         parameters={"type": "object", "properties": {"tags": {"type": "array"}}})
    arguments = {"tags": ["#now"]}
    assert made.invoke(arguments, ToolContext(Sandbox(tmp_path))) == "ok"
    assert arguments == {"tags": ["#now"]} and kept == [["#now", "#later"]]


def test_a_value_json_has_not_inside_a_result_is_its_repr(tmp_path: Path) -> None:
    def listing() -> list[Any]:
        """A list holding what JSON has not (BFCL's long-context data holds `...`)."""
        return ["a", ...]

    made = function_tool(listing, name=None, description=None, category=Category.READ)
    assert made.invoke({}, ToolContext(Sandbox(tmp_path))) == '["a","Ellipsis"]'


def test_a_python_tool_without_a_docstring_is_named_with_what_to_do(tmp_path: Path) -> None:
    from replio_replay.errors import ToolSetError
    from replio_replay.tools.child import ForkServer
    from replio_replay.tools.function import python_tool
    from replio_replay.tools.permissions import Category

    (tmp_path / "t.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    server = ForkServer()
    with pytest.raises(ToolSetError, match=r"tools.json: t.py:shout: the function has no docstring to describe the "
                                           r"tool; give it one, or the tool a \"description\"$"):
        python_tool("shout", "t.py:shout", base_dir=tmp_path, where="tools.json", category=Category.READ,
                    description=None, source="test", server=server)
    made = python_tool("shout", "t.py:shout", base_dir=tmp_path, where="tools.json", category=Category.READ,
                       description="Shout the text.", source="test", server=server)
    assert made.description == "Shout the text."
