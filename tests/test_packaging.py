"""The package as its users get it: the documented CI recipe (an sdist, a wheel built from it, the
wheel installed into a fresh virtual environment) made offline from a copy of the source, and
that install replays the repository's recordings. The build uses the running environment's
setuptools and the fresh environment borrows the running one's dependencies (`tests/support/offline.py`),
so no package index is reached."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import yaml

from tests.support.offline import pip, venv_lent_our_packages

REPO = Path(__file__).resolve().parent.parent
#: What the sdist is built from: the files `pyproject.toml` packs, nothing of the working tree's.
SOURCE = ("pyproject.toml", "README.md", "LICENSE", "replio_replay")
#: What the replay reads: the recordings and the project's config.
RECORDINGS = ("cassettes", "golden", ".replio")


def _step(name: str) -> str:
    (job,) = yaml.safe_load((REPO / "docs" / "github-actions.yml").read_text())["jobs"].values()
    return next(step["run"] for step in job["steps"] if step.get("name") == name)


#: The workflow's install step, which this test follows without the network: `build` makes the sdist,
#: then the wheel from the unpacked sdist, and pip installs the wheel.
RECIPE = "pip install build && python -m build --outdir dist && pip install dist/*.whl"


def _build_offline(project: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """The sdist and the wheel `python -m build --outdir dist` makes, by the same setuptools hooks."""
    hook = "from setuptools import build_meta; print(build_meta.build_sdist('dist'))"
    sdist = subprocess.run([sys.executable, "-c", hook], cwd=project, capture_output=True, text=True, env=env,
                           timeout=120)
    assert sdist.returncode == 0, sdist.stdout[-3000:] + sdist.stderr[-3000:]
    archive = project / "dist" / sdist.stdout.strip().splitlines()[-1]
    shutil.unpack_archive(archive, project / "unpacked")
    (unpacked,) = (project / "unpacked").iterdir()
    wheel = pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", str(project / "dist"),
                str(unpacked), env=env)
    assert wheel.returncode == 0, wheel.stdout[-3000:] + wheel.stderr[-3000:]
    (built,) = (project / "dist").glob("*.whl")
    return archive, built


def test_the_ci_recipe_builds_an_sdist_and_a_wheel_that_install_and_replay(tmp_path: Path) -> None:
    assert _step("Install") == RECIPE
    project = tmp_path / "clone"
    project.mkdir()
    for part in (*SOURCE, *RECORDINGS):
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, project / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / part, project / part)
    env_dir = tmp_path / "venv"
    python = venv_lent_our_packages(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env |= {"CI": "true", "VIRTUAL_ENV": str(env_dir), "PATH": f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}",
            "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

    def bash(command: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-ec", command], cwd=project, capture_output=True, text=True, env=env,
                              timeout=timeout)

    sdist, wheel = _build_offline(project, env)
    install = pip("--python", str(python), "install", "--quiet", "--no-index", "--no-deps", str(wheel), env=env)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        metadata = email.parser.Parser().parsestr(
            whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
    assert {"replio_replay/py.typed", "replio_replay/fixtures/catalog/grep-symbol.json",
            "replio_replay/report/templates/report.html.j2"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert metadata["License-Expression"] == "Apache-2.0" and "Typing :: Typed" in metadata.get_all("Classifier")
    assert {u.split(", ")[0] for u in metadata.get_all("Project-URL")} >= {"Homepage", "Documentation", "Source"}
    with tarfile.open(sdist) as tar:
        packed = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "pyproject.toml", "replio_replay/py.typed"} <= packed

    where = bash("cd .. && python -c 'import replio_replay; print(replio_replay.__file__)' && command -v replio", 60)
    module, program = where.stdout.split()
    assert Path(module).is_relative_to(env_dir) and Path(program) == env_dir / "bin" / "replio", where.stdout
    replay = bash(_step("Replay the fixtures"), 300)
    assert replay.returncode == 0, replay.stdout[-3000:] + replay.stderr[-3000:]
    assert ET.parse(project / "replio-junit.xml").getroot().get("failures") == "0"
