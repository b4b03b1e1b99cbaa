"""τ²-bench's retail domain as a replio-replay environment (written by `replio eval import tau2`).

``Retail(initialization_data, initialization_actions, assertions)`` is the domain's environment
as τ² starts a task: its databases loaded from ``.data/tau2/``, then `initialization_data`
merged into them and `initialization_actions` run, as `Environment.set_state` does (with its
sharing of one database between the two toolkits when data is merged). Each public method is
one of τ²'s tools, answering as `Environment.get_response` does: the tool's return value as
`to_json_str` writes it, a failure as ``Error: <message>``, then the domain's `sync_tools`.
One change to τ²: a tools module's `uuid.uuid4()` gives ids from a generator started afresh with
each environment, so a replay (and the reference run of the task's actions) makes the same ids.

Its state (public attributes): ``db`` and ``user_db``, each the records of that database
(table -> key -> record; a removed record is null) that differ from the domain's files, so two
runs leave equal state exactly when they leave equal databases (τ²'s hash comparison), and
``assertions``: whether each of the task's environment assertions holds (τ²'s
`run_env_assertion`), in order.
"""

import copy
import hashlib
import importlib
import importlib.util
import json
import pickle
import random
import sys
import uuid
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

_FOLDER = Path(__file__).resolve().parent / "tau2"
_PACKAGE = "replio_tau2_" + hashlib.sha256(str(_FOLDER).encode()).hexdigest()[:16]
_SPEC = {'agent': {'module': 'domains.retail.tools',
           'toolkit': 'RetailTools',
           'db_module': 'domains.retail.data_model',
           'db': 'RetailDB',
           'file': 'domains/retail/db.json'},
 'user': None,
 'tools': {'calculate': 'assistant',
           'cancel_pending_order': 'assistant',
           'exchange_delivered_order_items': 'assistant',
           'find_user_id_by_name_zip': 'assistant',
           'find_user_id_by_email': 'assistant',
           'get_order_details': 'assistant',
           'get_product_details': 'assistant',
           'get_item_details': 'assistant',
           'get_user_details': 'assistant',
           'list_all_product_types': 'assistant',
           'modify_pending_order_address': 'assistant',
           'modify_pending_order_items': 'assistant',
           'modify_pending_order_payment': 'assistant',
           'modify_user_address': 'assistant',
           'return_delivered_order_items': 'assistant',
           'transfer_to_human_agents': 'assistant'}}
_SYNC = None


def _package():
    if _PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(_PACKAGE, _FOLDER / "__init__.py",
                                                      submodule_search_locations=[str(_FOLDER)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[_PACKAGE] = package
        spec.loader.exec_module(package)
    return sys.modules[_PACKAGE]


def _module(name):
    return importlib.import_module(f"{_package().__name__}.{name}")


_PRISTINE = {}


def _pristine(side):
    """One side's database as the domain's file holds it, pickled, and its dump (read once)."""
    where = _SPEC[side]
    if side not in _PRISTINE:
        db_class = getattr(_module(where["db_module"]), where["db"])
        db = db_class.load(str(_FOLDER.parent / ".data" / "tau2" / where["file"]))
        _PRISTINE[side] = pickle.dumps(db), _dumped(db)
    return _PRISTINE[side]


def _database(side):
    """A fresh copy of one side's database (unpickled: a deep copy of retail's takes three times longer)."""
    return pickle.loads(_pristine(side)[0])


def _dumped(db):
    return db.model_dump(mode="json")


class _Ids:
    """What a tools module sees as `uuid`: ids from a generator started afresh with each environment
    (telecom names a new bill with `uuid.uuid4()`), so a replay, and the reference, make the same ones."""

    def __init__(self):
        self.random = random.Random(0)

    def uuid4(self):
        return uuid.UUID(int=self.random.getrandbits(128), version=4)

    def __getattr__(self, name):
        return getattr(uuid, name)


_IDS = _Ids()


def _toolkit(side):
    if _SPEC.get(side) is None:
        return None
    module = _module(_SPEC[side]["module"])
    if getattr(module, "uuid", None) is uuid:
        module.uuid = _IDS
    return getattr(module, _SPEC[side]["toolkit"])(_database(side))


# Copied from tau2-bench's Environment (environment/environment.py), a classmethod there.
def to_json_str(cls, resp: Any) -> str:
    """
    Convert a response to a JSON string.
    """

    def _process(resp: Any) -> str:
        if isinstance(resp, BaseModel):
            return resp.model_dump()
        elif isinstance(resp, str):
            return resp
        elif resp is None:
            return resp
        elif isinstance(resp, (int, float, bool)):
            return str(resp)
        elif isinstance(resp, list):
            return [_process(item) for item in resp]
        elif isinstance(resp, tuple):
            return tuple(_process(item) for item in resp)
        elif isinstance(resp, dict):
            return {k: _process(v) for k, v in resp.items()}
        elif isinstance(resp, (datetime, date)):
            # TODO: this did not fix the error: Object of type date is not JSON serializable
            return resp.isoformat()
        else:
            raise ValueError(f"Unsupported type: {type(resp)}")

    if not isinstance(resp, str):
        return json.dumps(_process(resp), default=str)  # FIXME: add default=str
    return resp


def _changes(now, before):
    """The records of `now` that differ from `before` (a removed one: None), per table."""
    changed = {}
    for table in sorted(set(now) | set(before)):
        new, old = now.get(table), before.get(table)
        if isinstance(new, dict) and isinstance(old, dict):
            rows = {key: new.get(key) for key in sorted(set(new) | set(old)) if new.get(key) != old.get(key)}
            if rows:
                changed[table] = rows
        elif new != old:
            changed[table] = new
    return changed


class _Sides:
    """What a domain's `sync_tools` reads as `self`: the two toolkits."""

    def __init__(self, tools, user_tools):
        self.tools, self.user_tools = tools, user_tools


class Retail:
    """τ²-bench's retail domain: the agent's and the simulated user's tools over its databases."""

    def __init__(self, initialization_data=None, initialization_actions=None, assertions=None):
        _IDS.random.seed(0)
        self._sides = _Sides(_toolkit("agent"), _toolkit("user"))
        self._files = {side: _pristine(side)[1] for side in ("agent", "user") if _SPEC.get(side)}
        self._assertions = list(assertions or [])
        # as Environment.set_state: the data merged, then the actions run
        tools, user_tools = self._sides.tools, self._sides.user_tools
        data = initialization_data or {}
        if data.get("agent_data") is not None:
            tools.update_db(data["agent_data"])
            if user_tools is not None and user_tools.db is not None:
                user_tools.db = tools.db
        if data.get("user_data") is not None:
            user_tools.update_db(data["user_data"])
            if tools is not None and tools.db is not None:
                tools.db = user_tools.db
        for action in initialization_actions or []:
            toolkit = user_tools if action["env_type"] == "user" else tools
            getattr(toolkit, action["func_name"])(**action["arguments"])
            self._sync()
        if data or initialization_actions or _SYNC is not None:
            self._refresh()
        else:  # the databases are the files' (the common case: no dump of all of retail's to compare)
            self.db = {}
            if user_tools is not None and user_tools.db is not None:
                self.user_db = {}
            if self._assertions:
                self.assertions = [self._holds(a) for a in self._assertions]

    def _dump(self, side):
        toolkit = self._sides.user_tools if side == "user" else self._sides.tools
        if toolkit is None or toolkit.db is None:
            return None
        return _dumped(toolkit.db)

    def _sync(self):
        if _SYNC is not None:
            _synced()(self._sides)

    def _refresh(self):
        for attribute, side in (("db", "agent"), ("user_db", "user")):
            now, before = self._dump(side), self._files.get(side)
            if now is not None:
                setattr(self, attribute, _changes(now, before or {}))
        if self._assertions:
            self.assertions = [self._holds(a) for a in self._assertions]

    def _holds(self, assertion):
        """Whether one environment assertion holds (τ²'s `run_env_assertion`; one that fails: it does not)."""
        toolkit = self._sides.user_tools if assertion["env_type"] == "user" else self._sides.tools
        try:
            result = getattr(toolkit, assertion["func_name"])(**assertion["arguments"])
            self._sync()
        except Exception:
            return False
        return isinstance(result, bool) and result == assertion.get("assert_value", True)

    def _call(self, requestor, name, arguments):
        """One tool call as `Environment.get_response` answers it."""
        toolkit = self._sides.user_tools if requestor == "user" else self._sides.tools
        try:
            response = toolkit.use_tool(tool_name=name, **arguments)
            self._sync()
        except Exception as e:
            response = f"Error: {e}"
        if _SYNC is not None or _mutates(toolkit, name):
            self._refresh()
        return to_json_str(None, response)


def _mutates(toolkit, name):
    """Whether a tool may change a database (τ²'s `tool_mutates_state`; when it cannot say: yes)."""
    try:
        return toolkit.tool_mutates_state(name)
    except Exception:
        return True


_SYNCED = []


def _synced():
    """The domain's `sync_tools`, copied from its environment, over the names of its data models."""
    if not _SYNCED:
        namespace = {}
        for name in ("data_model", "user_data_model"):
            try:
                namespace.update(vars(_module(f"domains.retail.{name}")))
            except ImportError:
                pass
        exec(_SYNC, namespace)
        _SYNCED.append(namespace["sync_tools"])
    return _SYNCED[0]


def _tool(name, requestor):
    def call(self, **arguments):
        return self._call(requestor, name, arguments)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"τ²'s {name} tool ({requestor})."
    return call


for _name, _requestor in _SPEC["tools"].items():
    setattr(Retail, _name, _tool(_name, _requestor))


# Each side's toolkit module and pristine database, read once where this module is imported (once a
# run, before any fixture's child is forked): each environment then starts from a copy of them.
for _side in ("agent", "user"):
    if _SPEC.get(_side):
        _module(_SPEC[_side]["module"])
        _pristine(_side)
