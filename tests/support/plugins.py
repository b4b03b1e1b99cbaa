"""Installing a third-party plugin as pip would, into a folder the test puts on PYTHONPATH."""

from __future__ import annotations

from pathlib import Path


def install_plugin(site: Path, module: str, source: str) -> str:
    """What pip leaves behind for a package with an entry point in the `replio` group: a module and
    its dist-info. Returns the plugin's name (the module's, with `-` for `_`), as a config names it."""
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(source)
    name = module.replace("_", "-")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[replio]\n{name} = {module}\n")
    return name
