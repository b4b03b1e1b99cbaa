"""The plugin manager: the bundled catalog as a default plugin, third-party ones by entry point.
"""

from __future__ import annotations

import pluggy

from . import hookspecs

__all__ = ["BUILTIN_CATALOG", "ENTRY_POINT_GROUP", "plugin_manager"]

#: Third-party plugins declare an entry point in this group.
ENTRY_POINT_GROUP = "replio"
#: The name the bundled catalog registers under (and shows as its fixtures' source).
BUILTIN_CATALOG = "replio-core-eval"


def plugin_manager(*, entry_points: bool = True) -> pluggy.PluginManager:
    """A manager with the hook specs, the bundled catalog and (optionally) installed plugins."""
    from .fixtures import catalog

    pm = pluggy.PluginManager("replio")
    pm.add_hookspecs(hookspecs)
    pm.register(catalog, name=BUILTIN_CATALOG)
    if entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm
