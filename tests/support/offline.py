"""pip with no package index: what a test builds and installs comes from this machine, never the network.

A test that builds a package does it with the build backend of the running environment
(`--no-build-isolation`), installs with `--no-index --no-deps`, and lends a fresh virtual
environment the running one's packages through a `.pth` file instead of downloading them.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

#: A loopback port nothing listens on: an index access, should one slip through, fails at once.
CLOSED_INDEX = "http://127.0.0.1:9/"


def offline_pip_env(env: dict[str, str]) -> dict[str, str]:
    """`env` with every pip setting of the machine dropped (its config files too) and the index closed."""
    return {**{k: v for k, v in env.items() if not k.startswith("PIP_")},
            "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_INDEX_URL": CLOSED_INDEX,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def venv_lent_our_packages(env_dir: Path) -> Path:
    """A new virtual environment, without pip, that finds the running environment's packages after
    its own (a `.pth` path line is appended to `sys.path` behind the venv's site-packages, and the
    `.pth` files of the lent folder, such as an editable install's, are not run). Returns its Python."""
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    # the running environment's own folder, then the interpreter's when it sees those too (a virtual
    # environment made with --system-site-packages finds its dependencies there)
    lent = dict.fromkeys([sysconfig.get_path("purelib"), *(p for p in site.getsitepackages() if p in sys.path)])
    (Path(own) / "lent-by-the-tests.pth").write_text("".join(f"{p}\n" for p in lent), encoding="utf-8")
    return python


def pip(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The running environment's pip, offline (`--python PY` first in `args` installs into another)."""
    return subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, capture_output=True, text=True,
                          env=offline_pip_env(env), timeout=120)
