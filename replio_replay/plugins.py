"""The plugin manager: the bundled catalog as a default plugin, and the installed plugins a project chose.

An installed plugin (an entry point in the `replio` group) adds fixtures and tools, which change
every tool set's requests: so one is used only by a project whose config names it in `plugins`,
never just because it is installed in the same Python environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pluggy

from . import hookspecs

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["BUILTIN_CATALOG", "ENTRY_POINT_GROUP", "Plugins", "choose_plugins", "plugin_manager"]

#: Third-party plugins declare an entry point in this group.
ENTRY_POINT_GROUP = "replio"
#: The name the bundled catalog registers under (and shows as its fixtures' source).
BUILTIN_CATALOG = "replio-core-eval"


@dataclass(frozen=True)
class Plugins:
    """The installed plugins, and those of them a project uses."""

    installed: tuple[str, ...]
    active: tuple[str, ...]
    named: bool  # the project's config has a `plugins` list

    @property
    def unused(self) -> tuple[str, ...]:
        return tuple(name for name in self.installed if name not in self.active)

    def notice(self) -> str | None:
        """What to tell a project that chose no plugins while some are installed; None otherwise."""
        if self.named or not self.unused:
            return None
        names = ", ".join(f'"{name}"' for name in self.unused)
        return (f"installed plugins not used by this project: {', '.join(self.unused)}; to use them, name them "
                f"in .replio/config.json as \"plugins\": [{names}] (\"plugins\": [] says none)")

    def summary(self) -> str | None:
        """`plugins: a (active), b (installed, not used)`; None when none is installed."""
        if not self.installed:
            return None
        states = [f"{name} ({'active' if name in self.active else 'installed, not used'})" for name in self.installed]
        return f"plugins: {', '.join(states)}"

    def to_json(self) -> dict[str, list[str]]:
        return {"active": list(self.active), "installed": list(self.installed)}


def choose_plugins(plugins: Sequence[str] | None) -> Plugins:
    """The installed plugins and those `plugins` (the config's list; None: not given, so none) names;
    a name that is not installed raises ConfigError listing the installed ones."""
    from ._runtime.suggest import did_you_mean
    from .config import CONFIG_FILE
    from .errors import ConfigError

    installed = tuple(sorted(_entry_points()))
    for name in plugins or ():
        if name not in installed:
            raise ConfigError(
                f"{CONFIG_FILE}: plugins: no installed plugin {name!r}; {did_you_mean(name, installed)}"
                f"installed: {', '.join(installed) or 'none'} (entry points in the {ENTRY_POINT_GROUP!r} "
                "group); install its package in this Python environment or remove the name")
    return Plugins(installed, tuple(sorted(set(plugins or ()))), plugins is not None)


def plugin_manager(active: Sequence[str] = ()) -> pluggy.PluginManager:
    """A manager with the hook specs, the bundled catalog and the installed plugins named in `active`."""
    from .fixtures import catalog

    pm = pluggy.PluginManager("replio")
    pm.add_hookspecs(hookspecs)
    pm.register(catalog, name=BUILTIN_CATALOG)
    if active:
        from .errors import ConfigError

        points = _entry_points()
        for name in active:
            try:
                plugin = points[name].load()
            except Exception as exc:  # its own code: one line naming it, not a traceback
                raise ConfigError(f"plugin {name!r} ({points[name].value}) failed to load: {exc!r}; fix or "
                                  "reinstall it, or remove it from \"plugins\" in .replio/config.json") from None
            pm.register(plugin, name=name)
    return pm


def _entry_points() -> dict[str, EntryPoint]:
    """Installed plugins by entry-point name (the first distribution's, if two declare one name)."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return found
