"""BFCL's classes as replio-replay environments, built as BFCL builds them (written by `replio eval import bfcl`).

``Class(scenario, long_context)`` is ``Class()`` then ``_load_scenario(scenario, long_context=...)``,
as bfcl_eval's `execute_multi_turn_func_call` builds an instance; a stateless class (MathAPI)
loads no scenario. BFCL's modules are the copies in `func_source_code/`, loaded as a package
under a name unique to this folder, each when a fixture first names its class.
"""

import copy
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

_FOLDER = Path(__file__).resolve().parent / "func_source_code"
_PACKAGE = "replio_bfcl_" + hashlib.sha256(str(_FOLDER).encode()).hexdigest()[:16]
_MODULES = {'GorillaFileSystem': 'gorilla_file_system', 'MathAPI': 'math_api', 'MessageAPI': 'message_api', 'TwitterAPI': 'posting_api', 'TicketAPI': 'ticket_api', 'TradingBot': 'trading_bot', 'TravelAPI': 'travel_booking', 'VehicleControlAPI': 'vehicle_control'}
_STATELESS = ['MathAPI']


def _package():
    if _PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(_PACKAGE, _FOLDER / "__init__.py",
                                                      submodule_search_locations=[str(_FOLDER)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[_PACKAGE] = package
        spec.loader.exec_module(package)
    return sys.modules[_PACKAGE]


def _environment(name):
    base = getattr(importlib.import_module(f"{_package().__name__}.{_MODULES[name]}"), name)

    def __init__(self, scenario=None, long_context=False):
        base.__init__(self)
        if name not in _STATELESS:
            self._load_scenario(copy.deepcopy(scenario or {}), long_context=long_context)

    return type(name, (base,), {"__init__": __init__, "__module__": __name__, "__doc__": base.__doc__})


def __getattr__(name):
    if name not in _MODULES:
        raise AttributeError(name)
    return _environment(name)
