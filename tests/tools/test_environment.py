"""Environments and Python tools by path: loading beside the declaring file, schemas, calls, load errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from replio_replay.errors import ToolSetError, UserCodeError
from replio_replay.fixtures.model import load_fixture
from replio_replay.plan.offer import for_fixture
from replio_replay.tools.base import ToolContext
from replio_replay.tools.builtin import builtin_tools
from replio_replay.tools.environment import build
from replio_replay.tools.permissions import Category, Permissions
from replio_replay.tools.pyobjects import state_of
from replio_replay.tools.resolve import resolve_toolset
from replio_replay.tools.sandbox import Sandbox
from replio_replay.tools.setfile import load_chain
from replio_replay.tools.toolbox import Toolbox
from replio_replay.tools.toolset import ToolSet
from tests.helpers import write_json
from tests.support.environments import ORDERS, SLUG, shop_decl, write_module


def _toolset(path: Path) -> ToolSet:
    return resolve_toolset("default", load_chain(path), [])


def _project(tmp_path: Path) -> Path:
    write_module(tmp_path / ".replio" / "envs" / "shop.py")
    write_module(tmp_path / ".replio" / "tools" / "slug.py", SLUG)
    return tmp_path


def _toolbox(toolset: ToolSet, timeout: float = 5) -> Toolbox:
    """A fixture's toolbox over `toolset`: its environments built in a child of the set's fork server."""
    child = toolset.python.child(tmp_root(), timeout)
    build(toolset.environments, child, timeout)
    return Toolbox(ToolContext(Sandbox(tmp_root()), timeout=timeout, child=child), Permissions.for_fixture({}, []),
                   toolset)


def tmp_root() -> Path:
    return Path(__file__).parent


# loading ------------------------------------------------------------------------------------------


WHERE = '''
import sys


class Where:
    def module(self) -> str:
        """The module the class is defined in."""
        return type(self).__module__

    def on_path(self, folder: str) -> bool:
        """Whether `folder` is on sys.path."""
        return any(folder in entry for entry in sys.path)
'''


def test_paths_in_tools_json_are_relative_to_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    write_module(project / ".replio" / "envs" / "where.py", WHERE)
    path = write_json(project / ".replio" / "tools.json", {
        "environments": {"shop": shop_decl(), "where": {"python": "envs/where.py:Where"}},
        "tools": {"slugify": {"python": "tools/slug.py:slugify"}}})
    toolset = _toolset(path)
    assert toolset.names == ("slugify", "get_order", "cancel_order", "module", "on_path")
    assert list(toolset.environments) == ["shop", "where"]
    box = _toolbox(toolset)
    assert box.call("module", {}).startswith("replio_local_")
    assert box.call("on_path", {"folder": str(project)}) == "false"
    assert not any(str(project) in entry for entry in sys.path)


def test_a_variant_resolves_its_paths_relative_to_itself_and_its_base_to_its_own(tmp_path: Path) -> None:
    project = _project(tmp_path)
    write_json(project / ".replio" / "tools.json", {"environments": {"shop": shop_decl()}})
    variant = write_json(project / ".replio" / "tools" / "x.json", {
        "extends": "../tools.json", "tools": {"slugify": {"python": "slug.py:slugify"}},
        "environments": {"depot": shop_decl("../envs/shop.py:Shop", prefix="depot_")}})
    toolset = _toolset(variant)
    assert toolset.names == ("slugify", "get_order", "cancel_order", "depot_get_order", "depot_cancel_order")
    assert sorted(toolset.environments) == ["depot", "shop"]


def test_a_fixture_in_eval_loads_its_environment_relative_to_its_file(tmp_path: Path) -> None:
    project = _project(tmp_path)
    origin = project / ".replio" / "eval" / "cancel.json"
    fixture = load_fixture({"task": "Cancel A-1042.", "environments": {"shop": shop_decl("../envs/shop.py:Shop")},
                            "tools": {"slugify": {"python": "../tools/slug.py:slugify", "category": "web"}}},
                           source=str(origin), default_id="cancel")
    offered = for_fixture(ToolSet("default", ()), fixture, str(origin))
    assert offered.names == ("slugify", "get_order", "cancel_order")
    assert offered.get("slugify").category is Category.WEB  # type: ignore[union-attr]
    assert list(offered.environments) == ["shop"]


def test_the_same_file_named_twice_loads_as_one_module_name_per_path(tmp_path: Path) -> None:
    project = _project(tmp_path)
    write_module(project / ".replio" / "envs" / "where.py", WHERE)
    other = write_module(tmp_path / "elsewhere" / "where.py", WHERE)
    path = write_json(project / ".replio" / "tools.json", {"environments": {
        "here": {"python": "envs/where.py:Where"}, "there": {"python": f"{other}:Where", "prefix": "o_"}}})
    box = _toolbox(_toolset(path))
    assert box.call("module", {}) != box.call("o_module", {})


# schemas and calls --------------------------------------------------------------------------------


def test_methods_are_described_by_docstrings_and_typed_by_hints(tmp_path: Path) -> None:
    project = _project(tmp_path)
    toolset = _toolset(write_json(project / ".replio" / "tools.json", {
        "environments": {"shop": shop_decl()}, "tools": {"slugify": {"python": "tools/slug.py:slugify"}}}))
    cancel = toolset.get("cancel_order")
    assert cancel is not None and cancel.category is Category.READ
    assert cancel.description == "Cancel an order.\n\nOnly an open order can be cancelled."
    assert cancel.parameters == {
        "type": "object", "additionalProperties": False, "required": ["order_id"],
        "properties": {"order_id": {"type": "string"},
                       "reason": {"enum": ["customer", "fraud"], "type": "string", "default": "customer"}}}
    slug = toolset.get("slugify")
    assert slug is not None and slug.description == "Turn a title into a URL slug." and slug.category is Category.READ
    assert slug.parameters["required"] == ["text"]
    assert slug.fingerprint == {"kind": "python", "python": "tools/slug.py:slugify"}


def test_calls_change_the_instance_and_errors_come_back_as_results(tmp_path: Path) -> None:
    project = _project(tmp_path)
    toolset = _toolset(write_json(project / ".replio" / "tools.json", {
        "environments": {"shop": shop_decl()}, "tools": {"slugify": {"python": "tools/slug.py:slugify"}}}))
    assert all(tool.in_child for tool in toolset.tools)
    box = _toolbox(toolset)
    assert box.call("cancel_order", {"order_id": "A-1042"}) == "Order A-1042 cancelled."
    assert box.call("cancel_order", {"order_id": "A-1042"}) == (
        "Error: cancel_order failed: ValueError: order A-1042 is cancelled, not open")
    assert box.call("get_order", {"order_id": "B-1"}) == "Error: get_order failed: KeyError: 'no order B-1'"
    assert box.call("cancel_order", {"order_id": "A-1043", "reason": "bored"}).startswith(
        "Error: invalid arguments for cancel_order: reason: Input should be 'customer' or 'fraud'")
    assert box.call("slugify", {"text": "Hello Big World"}) == "hello-big-world"
    state = box.states()["shop"]  # type: ignore[index]
    assert state["orders"]["A-1042"]["status"] == "cancelled"
    assert state["log"] == ["cancelled A-1042 (customer)"] and "_calls" not in state
    assert ORDERS["A-1042"]["status"] == "open"  # the declaration's initial state is never changed


def test_a_method_over_the_tool_timeout_stops_the_child_and_its_state_is_not_read(tmp_path: Path) -> None:
    write_module(tmp_path / "slow.py", "import time\n\nclass Slow:\n    def wait(self, seconds: float) -> str:\n"
                 "        \"\"\"Sleep.\"\"\"\n        time.sleep(seconds)\n        return 'woke'\n")
    toolset = _toolset(write_json(tmp_path / "tools.json", {"environments": {"slow": {"python": "slow.py:Slow"}}}))
    box = _toolbox(toolset, timeout=0.5)
    assert box.call("wait", {"seconds": 0}) == "woke"
    with pytest.raises(UserCodeError, match=r"^environment Slow: wait took longer than 0.5 s; stopped$"):
        box.call("wait", {"seconds": 5})
    assert box.states() is None
    with pytest.raises(UserCodeError, match="^environment Slow: wait took longer than 0.5 s; stopped$"):
        box.call("wait", {"seconds": 0})  # it stays stopped: every later call says why


# load errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "python", "expected"), [
    (None, "envs/nope.py:Shop", "no Python file at"),
    ("import not_a_module_anywhere\n", "envs/bad.py:Shop", "importing"),
    ("import sys\nsys.exit(5)\n", "envs/bad.py:Shop", "failed: SystemExit: 5; fix the module"),
    ("class Other:\n    pass\n", "envs/bad.py:Shop", "bad.py has no 'Shop'"),
    ("class Shop:\n    def add(self, *items: str) -> str:\n        \"\"\"Add.\"\"\"\n        return ''\n",
     "envs/bad.py:Shop", "Shop.add: parameter *items cannot be described"),
    ("class Shop:\n    def add(self, f: open) -> str:\n        \"\"\"Add.\"\"\"\n        return ''\n",
     "envs/bad.py:Shop", "Shop.add: cannot be offered as a tool"),
    ("class Shop:\n    def add(self, n: int) -> str:\n        return ''\n",
     "envs/bad.py:Shop", "Shop.add: cannot be offered as a tool: tool 'add' has no description; give it a docstring"),
    ("def Shop() -> None:\n    pass\n", "envs/bad.py:Shop", "names a function, not a class"),
    (None, "envs/bad.py", "is not a Python reference"),
])
def test_each_environment_load_error_names_file_environment_and_name(
        tmp_path: Path, source: str | None, python: str, expected: str) -> None:
    if source is not None:
        write_module(tmp_path / "envs" / "bad.py", source)
    path = write_json(tmp_path / "tools.json", {"environments": {"shop": {"python": python}}})
    with pytest.raises(ToolSetError) as info:
        _toolset(path)
    message = str(info.value)
    assert message.startswith(f"{path}: environments.shop.python: ")
    assert expected in message


@pytest.mark.parametrize(("source", "python", "expected"), [
    (SLUG, "slug.py:slug", "slug.py has no 'slug'"),
    ("def slugify(**words: str) -> str:\n    \"\"\"Slug.\"\"\"\n    return ''\n", "slug.py:slugify",
     "parameter **words cannot be described"),
    ("X = 1\n", "slug.py:X", "names a int, not a function"),
    ("raise RuntimeError('half written')\n", "slug.py:slugify", "RuntimeError: half written"),
])
def test_each_python_tool_load_error_names_file_tool_and_name(
        tmp_path: Path, source: str, python: str, expected: str) -> None:
    write_module(tmp_path / "slug.py", source)
    path = write_json(tmp_path / "tools.json", {"tools": {"slugify": {"python": python}}})
    with pytest.raises(ToolSetError) as info:
        _toolset(path)
    assert str(info.value).startswith(f"{path}: tools.slugify.python: ")
    assert expected in str(info.value)


def test_a_python_tool_takes_no_parameters_or_timeout_of_its_own(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tools.json", {"tools": {"slugify": {"python": "slug.py:slugify", "timeout": 3}}})
    with pytest.raises(ToolSetError, match="give it no `parameters` or `timeout`"):
        _toolset(path)


def test_an_environment_whose_initial_state_does_not_fit_fails_when_built(tmp_path: Path) -> None:
    write_module(tmp_path / "shop.py")
    path = write_json(tmp_path / "tools.json", {"environments": {"shop": {"python": "shop.py:Shop",
                                                                           "initial": {"stock": 3}}}})
    toolset = _toolset(path)
    with pytest.raises(ToolSetError, match=r"environments\.shop\.python: Shop\(\*\*initial\) failed: TypeError"):
        build(toolset.environments, toolset.python.child(tmp_path, 5), 5)


def test_a_fixtures_environment_may_not_take_a_tool_sets_tool_name(tmp_path: Path) -> None:
    project = _project(tmp_path)
    base = _toolset(write_json(project / ".replio" / "tools.json", {"environments": {"shop": shop_decl()}}))
    origin = project / ".replio" / "eval" / "fx.json"
    fixture = load_fixture({"task": "t", "environments": {"depot": shop_decl("../envs/shop.py:Shop")}},
                           source=str(origin), default_id="fx")
    with pytest.raises(ToolSetError, match="its tool 'get_order' has the name of one the tool set has"):
        for_fixture(base, fixture, str(origin))


def test_with_tools_offered_a_fixtures_environment_takes_a_built_in_tools_name(tmp_path: Path) -> None:
    project = _project(tmp_path)
    base = resolve_toolset("default", load_chain(write_json(project / ".replio" / "tools.json", {})),
                           builtin_tools())
    module = project / ".replio" / "envs" / "finder.py"
    module.write_text('class Finder:\n    def grep(self, pattern: str) -> str:\n        """Find."""\n'
                      '        return "found " + pattern\n')
    origin = project / ".replio" / "eval" / "fx.json"
    decl = {"python": "../envs/finder.py:Finder"}
    with pytest.raises(ToolSetError, match="its tool 'grep' has the name of one the tool set has"):
        for_fixture(base, load_fixture({"task": "t", "environments": {"f": decl}}, source=str(origin),
                                       default_id="fx"), str(origin))
    fixture = load_fixture({"task": "t", "environments": {"f": decl}, "tools_offered": ["grep"]},
                           source=str(origin), default_id="fx")
    offered = for_fixture(base, fixture, str(origin))
    assert offered.names == ("grep",) and offered.get("grep") is not None
    assert _toolbox(offered).call("grep", {"pattern": "x"}) == "found x"


# methods described as given -----------------------------------------------------------------------

CANCEL_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order."}},
                 "required": ["order_id"]}


def test_methods_offers_only_those_described_as_given(tmp_path: Path) -> None:
    project = _project(tmp_path)
    methods = {"cancel_order": {"description": "Cancel one order.", "parameters": CANCEL_SCHEMA}}
    toolset = _toolset(write_json(project / ".replio" / "tools.json",
                                  {"environments": {"shop": shop_decl(methods=methods)}}))
    assert [spec for spec in toolset.specs if spec["name"] in ("get_order", "cancel_order")] == [
        {"name": "cancel_order", "description": "Cancel one order.", "parameters": CANCEL_SCHEMA}]
    box = _toolbox(toolset)
    assert box.call("cancel_order", {"order_id": 1042}).startswith("Error: invalid arguments for cancel_order: ")
    assert box.call("cancel_order", {"order_id": "A-1042"}) == "Order A-1042 cancelled."
    assert box.states()["shop"]["orders"]["A-1042"]["status"] == "cancelled"  # type: ignore[index]


def test_methods_naming_no_public_method_is_a_load_error(tmp_path: Path) -> None:
    project = _project(tmp_path)
    methods = {"cancel_ordr": {"description": "Cancel.", "parameters": CANCEL_SCHEMA}}
    path = write_json(project / ".replio" / "tools.json", {"environments": {"shop": shop_decl(methods=methods)}})
    with pytest.raises(ToolSetError, match=r"environments\.shop\.methods\.cancel_ordr: Shop has no public method "
                       r"'cancel_ordr'; did you mean 'cancel_order'\? name one of: get_order, cancel_order"):
        _toolset(path)


# end state ----------------------------------------------------------------------------------------


class _Opaque:
    pass


class _Slotted:
    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 1


def _cycle() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


def _instance(**attributes: object) -> object:
    instance = _Opaque()
    vars(instance).update(attributes)
    return instance


def test_a_state_is_public_attributes_as_json_with_what_pydantic_can_describe() -> None:
    state = state_of("shop", _instance(orders={"A": {"tags": ("x", "y")}}, total=3.5, _cache=_Opaque()))
    assert state == {"orders": {"A": {"tags": ["x", "y"]}}, "total": 3.5}


@pytest.mark.parametrize(("attributes", "expected"), [
    ({"helper": _Opaque()}, "attribute 'helper' is not JSON (a _Opaque has no JSON form and no repr of its own)"),
    ({"score": float("nan")}, "attribute 'score' is not JSON (Out of range float values are not JSON compliant"),
    ({"loop": _cycle()}, "attribute 'loop' is not JSON (Circular reference"),
])
def test_a_state_that_is_not_json_is_refused_naming_the_attribute(attributes: dict[str, object],
                                                                   expected: str) -> None:
    with pytest.raises(ToolSetError) as info:
        state_of("shop", _instance(total=1, **attributes))
    assert str(info.value).startswith(f"environment 'shop': {expected}")
    assert str(info.value).endswith("; keep it in an attribute whose name starts with '_', or make it text, a "
                                    "number, a boolean, null, a list or a mapping")


class _Node:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<Node {self.name}>"


def test_an_object_json_cannot_hold_is_shown_by_its_own_repr() -> None:
    """As BFCL's file-system nodes are: their repr is what they hold, the same on every run."""
    assert state_of("fs", _instance(root=_Node("workspace"), nodes=[_Node("a")])) == {
        "root": "<Node workspace>", "nodes": ["<Node a>"]}


def test_an_instance_without_a_dict_has_no_state_to_read() -> None:
    with pytest.raises(ToolSetError, match=r"environment 'shop': _Slotted keeps its attributes in __slots__, "
                                           r"not a __dict__, so its state cannot be read; drop __slots__"):
        state_of("shop", _Slotted())


def test_a_set_in_the_state_is_a_sorted_list_whatever_the_hash_seed(tmp_path: Path) -> None:
    import subprocess

    script = """
import dataclasses, json
from replio_replay.tools.pyobjects import state_of

@dataclasses.dataclass
class Tag:
    names: frozenset

class Env:
    def __init__(self):
        self.tags = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
        self.nested = {"k": [frozenset({"x", "y", "z", "w"}), {3, 1, 2}]}
        self.kept = Tag(frozenset({"q", "r", "s", "t"}))

print(json.dumps(state_of("env", Env())))
"""
    seen = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"}).stdout for seed in range(6)}
    assert len(seen) == 1
    state = json.loads(seen.pop())
    assert state == {"tags": ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"],
                     "nested": {"k": [["w", "x", "y", "z"], [1, 2, 3]]}, "kept": {"names": ["q", "r", "s", "t"]}}


def test_two_environments_of_a_fixture_offering_one_tool_name_are_refused_naming_both(tmp_path: Path) -> None:
    project = _project(tmp_path)
    origin = project / ".replio" / "eval" / "twice.json"
    decls = {"shop": shop_decl("../envs/shop.py:Shop"), "depot": shop_decl("../envs/shop.py:Shop")}
    fixture = load_fixture({"task": "t", "environments": decls}, source=str(origin), default_id="twice")
    with pytest.raises(ToolSetError, match="environments 'shop' and 'depot' both offer a tool 'get_order'; give "
                                           "one of them a \"prefix\""):
        for_fixture(ToolSet("default", ()), fixture, str(origin))
    prefixed = load_fixture({"task": "t", "environments": {**decls, "depot": shop_decl("../envs/shop.py:Shop",
                                                                                       prefix="d_")}},
                            source=str(origin), default_id="twice")
    assert "d_get_order" in for_fixture(ToolSet("default", ()), prefixed, str(origin)).names
