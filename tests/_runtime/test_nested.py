"""The namespaces a fork server's child makes for itself (_runtime/nested.py): the first process of a
PID namespace of its own, without a capability (nor one to get back), writable only in its worktree
and temp folder; with ``mount_setattr`` (Linux 5.12) and without it, mount by mount (issue 47)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from replio_replay._runtime.confine import Level
from tests.tools.test_confinement import require_level

#: Run as another process (setpriv's): its namespaces, then what it sees and may write.
_OWN_NAMESPACES = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from replio_replay._runtime import nested
if sys.argv[5] == "remount":
    nested._SYS_MOUNT_SETATTR = -1  # no such system call: as on a kernel before 5.12
folder = sys.argv[2]
pid = nested.own_namespaces([f"{folder}/work"], f"{folder}/temp")
if pid == 0:
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    def writes(path):
        try:
            open(path, "w").write("x")
            return True
        except OSError:
            return False
    print(json.dumps({
        "pid": os.getpid(), "caps": status["CapEff"].strip(), "bounding": status["CapBnd"].strip(),
        "no_new_privs": status["NoNewPrivs"].strip(), "pids": [p for p in os.listdir("/proc") if p.isdigit()],
        "work": writes(f"{folder}/work/a"), "temp": writes(f"{folder}/temp/b"), "tmpdir": os.environ["TMPDIR"],
        "other": writes(f"{folder}/other/c"), "beside": writes(f"{folder}/d"), "shm": writes("/dev/shm/e"),
        "outside": writes(sys.argv[3])}), flush=True)
    os._exit(5)
print("parent", "none" if pid is None else os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="setpriv changes the user only for root")
@pytest.mark.parametrize("how", ["mount_setattr", "remount"])
@pytest.mark.parametrize("who", [["--reuid=65534", "--regid=65534", "--clear-groups"], []], ids=["nobody", "root"])
def test_a_fork_servers_child_is_walled_off_in_namespaces_of_its_own(tmp_path: Path, who: list[str],
                                                                     how: str) -> None:
    setpriv = ["setpriv", *who, "--inh-caps=-all", "--bounding-set=-all"]
    repo = str(Path(__file__).resolve().parents[2])
    outside = tmp_path / "outside"  # beyond nobody's reach anyway: root's alone shows the wall
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:  # pytest's is closed to nobody
        os.chmod(folder, 0o777)
        for name in ("work", "temp", "other"):
            (Path(folder) / name).mkdir()
            os.chmod(Path(folder) / name, 0o777)
        done = subprocess.run([*setpriv, sys.executable, "-c", _OWN_NAMESPACES, repo, folder, str(outside), "", how],
                              capture_output=True, text=True, timeout=60, cwd="/")
        inside, parent = done.stdout.splitlines()
        seen = json.loads(inside)
        assert parent == "parent 5", done.stderr
        # Root without CAP_SETFCAP may not map itself into a user namespace: it makes one unmapped.
        assert (seen["pid"], seen["pids"], seen["caps"], seen["bounding"], seen["no_new_privs"]) == (
            1, ["1"], "0000000000000000", "0000000000000000", "1"), seen
        assert (seen["work"], seen["temp"], seen["shm"], seen["tmpdir"]) == (True, True, True, f"{folder}/temp"), seen
        assert not (seen["other"] or seen["beside"] or seen["outside"]), seen
        assert sorted(os.listdir(f"{folder}/temp")) == ["b", "e"]  # its /dev/shm is its temp folder
    assert not outside.exists()


_NOT_NESTING = """
import sys
sys.path.insert(0, sys.argv[1])
from replio_replay._runtime import confine
confine._NESTING = "import sys; sys.exit('no user namespace here')"  # what a kernel refusing one says
print(confine.nesting(confine.confinement()), confine.nesting(confine.confinement()))
"""


def test_where_bubblewrap_makes_no_namespace_inside_it_the_run_says_once_what_the_children_lack() -> None:
    require_level(Level.BWRAP)
    done = subprocess.run([sys.executable, "-c", _NOT_NESTING, str(Path(__file__).resolve().parents[2])],
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert done.stdout == "False False\n", done.stderr
    told = [line for line in done.stderr.splitlines() if line.startswith("replio: ")]
    assert len(told) == 1 and "makes no user namespace inside it here (no user namespace here): each fixture's " \
        "Python (environments, Python tools) runs in the fork server's PID namespace" in told[0], done.stderr


_NESTS = """
import sys
sys.path.insert(0, sys.argv[1])
from replio_replay._runtime import confine
print(confine.nesting(confine.confinement()))
"""


def test_a_python_under_tmp_nests_as_any_other(tmp_path: Path) -> None:
    """A virtualenv under /tmp (as a CI job's checkout often is) is hidden by bubblewrap's fresh /tmp
    unless bound in: the probe ran its Python without it, failed (`execvp ... No such file`) and took
    the walls away from every fixture's child."""
    require_level(Level.BWRAP)
    venv = Path(tempfile.mkdtemp(prefix="replio-venv-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                       check=True, timeout=120)
        done = subprocess.run([str(venv / "bin" / "python"), "-c", _NESTS, str(Path(__file__).resolve().parents[2])],
                              capture_output=True, text=True, timeout=120, cwd="/")
    finally:
        shutil.rmtree(venv, ignore_errors=True)
    assert done.stdout == "True\n" and "replio: " not in done.stderr, done.stderr
