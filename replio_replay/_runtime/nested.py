"""Namespaces a confined process makes for what it forks: the fork server's own ``/proc``, and each fixture's child walled off from the others.

A fixture's child is forked from the fork server, so `confine` cannot start it: the child makes
its own namespaces (`own_namespaces`), once it knows its worktree. It forks into a user, PID and
mount namespace of its own, whose first process (the one that serves replio) mounts a ``/proc``
of that PID namespace (read-only: it sees only its own processes, nor the server's nor another
child's), makes every mount read-only but for its worktree and a temp folder of its own (also its
``/dev/shm``), and drops every capability the new user namespace gave it (the bounding set
too, with ``no_new_privs``: nothing it executes gets one back). Nothing it does then can write
another fixture's worktree, nor signal, trace or read another fixture's processes.

The kernel mounts a new ``/proc`` in a user namespace only where a whole ``/proc`` is already in
sight with nothing mounted over it, and bubblewrap covers parts of every ``/proc`` it mounts (its
``/proc/sys``): under bubblewrap the server therefore gets ``/proc`` from `server_namespaces`
instead (`confine.wrap` with ``nest``), which the children's checks then accept. Root may map
itself into a user namespace only holding ``CAP_SETFCAP``, which bubblewrap keeps for the server
to use once, before any of the project's code runs; a child's user namespace is left unmapped
(its processes see themselves as ``nobody``, and keep root's files as root's; a filesystem
mounted there would hold no file of theirs, so its temp folder is a folder replio made).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import tempfile
from collections.abc import Sequence

__all__ = ["own_namespaces", "server_namespaces"]

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 0x4000, 1 << 18
_PROC_FLAGS = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY
_SYS_MOUNT_SETATTR = 442  # one number on every architecture (syscalls added since 5.1 share it)
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 1
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAPABILITY_VERSION_3 = 0x20080522
_SHM = "/dev/shm"


def server_namespaces() -> None:
    """Give this process (the fork server, started by `confine.wrap` with ``nest`` under
    bubblewrap) a PID namespace with a ``/proc`` of its own, in which its children can mount
    theirs; return in the server, capabilities dropped. Two processes stay above it, replio's
    code only: one outside the namespace, ending as the server does, and the namespace's first,
    which reaps what the server's children leave. OSError (nothing forked) when it cannot.
    """
    libc = _libc()
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID) != 0:
        raise _error("unshare")
    _map_ids(uid, gid, required=True)
    init = os.fork()
    if init:
        os._exit(follow(init))
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount("proc", "/proc", "proc", _PROC_FLAGS)  # over bubblewrap's bind of the machine's /proc
    _drop_privileges(libc)
    server = os.fork()
    if server:
        os._exit(_init(server))
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def own_namespaces(writable: Sequence[str], temp: str) -> int | None:
    """Fork this process into user, PID and mount namespaces of its own (see the module
    docstring), writable only in `writable` (the worktree) and in `temp` (a folder of its own,
    made its temp folder, ``TMPDIR``, and its ``/dev/shm``), and return as
    `os.fork` does: 0 in the namespace's first process, which dies with its parent, the child's
    pid in the parent; None, having forked nothing, where the kernel makes no user namespace
    here (then this process is as it was). In the child, the walls raise OSError when they
    cannot be put up: it must then end."""
    libc = _libc()
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID) != 0:
        return None
    _map_ids(uid, gid, required=False)
    pid = os.fork()
    if pid:
        return pid
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing done here reaches the server's mounts
    _mount("proc", "/proc", "proc", _PROC_FLAGS)
    kept = list(dict.fromkeys(os.path.realpath(path) for path in [*writable, temp]))
    for path in kept:
        _mount(path, path, None, _MS_BIND | _MS_REC)  # a mount of its own, made writable again below
    _read_only("/", True)
    for path in kept:
        try:
            _read_only(path, False)
        except PermissionError:  # read-only for the server too (locked so by its confinement): it stays so
            pass
    if os.path.isdir(_SHM):  # POSIX shared memory and semaphores: in its temp folder, not beside others'
        _mount(temp, _SHM, None, _MS_BIND)
    os.environ["TMPDIR"] = tempfile.tempdir = temp
    _drop_privileges(libc)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return 0


def follow(pid: int) -> int:
    """Wait for `pid` and end as it did: its exit status, or killed by its signal (128 + the
    signal where this process is a namespace's first, which its own signal does not end)."""
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


def _init(pid: int) -> int:
    """As a PID namespace's first process: reap every process reparented to it until `pid` ends,
    and end as it did."""
    while True:
        try:
            ended, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 1
        if ended == pid:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _error(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _map_ids(uid: int, gid: int, *, required: bool) -> None:
    """Map this process's user and group to themselves in its new user namespace; root's user
    only where the process held ``CAP_SETFCAP`` when it made it (the kernel's rule)."""
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
        except OSError:
            if required:
                raise


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encoded = [None if s is None else s.encode() for s in (source, target, kind, data)]
    if _libc().mount(*encoded[:3], flags, encoded[3]) != 0:
        raise _error(f"mount {target}")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def _read_only(path: str, read_only: bool) -> None:
    """Make `path`'s mount and every mount below it read-only, or writable: Linux 5.12's
    ``mount_setattr``, else each mount remounted (`_remount`)."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else _MOUNT_ATTR_RDONLY, 0, 0)
    if _libc().syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), _AT_RECURSIVE, ctypes.byref(attr),
                       ctypes.sizeof(attr)) == 0:
        return
    if ctypes.get_errno() != errno.ENOSYS:
        raise _error(f"mount_setattr {path}")
    _remount(path, read_only)


#: The per-mount options of /proc/self/mountinfo that a remount must keep (the kernel refuses to
#: clear one locked by a more privileged namespace), as mount(2) flags.
_KEPT_OPTIONS = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC, "noatime": 1024,
                 "nodiratime": 2048, "relatime": 1 << 21, "strictatime": 1 << 24}
_MS_REMOUNT = 32


def _remount(path: str, read_only: bool) -> None:
    """`_read_only` before ``mount_setattr``: each mount at or below `path` (the last mounted on a
    point is the one its path reaches) bind-remounted with its own options and `read_only`."""
    points: dict[str, int] = {}
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")  # \040 for a space, as the kernel writes
            if point == path or point.startswith(path.rstrip("/") + "/"):
                flags = sum(flag for name, flag in _KEPT_OPTIONS.items() if name in fields[5].split(","))
                points[point] = flags
    for point, flags in sorted(points.items()):
        try:
            _mount(None, point, None, _MS_REMOUNT | _MS_BIND | flags | (_MS_RDONLY if read_only else 0))
        except (FileNotFoundError, NotADirectoryError):  # hidden under a mount made after it: out of reach
            continue
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # EINVAL: the same, no longer a mount's root through its path
                raise


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_privileges(libc: ctypes.CDLL) -> None:
    """Drop every capability (the bounding set first, so that no program executed gets one
    back), and take ``no_new_privs``: a set-user-ID program gives nothing either."""
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # past the last capability this kernel has
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _error("prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), (_CapData * 2)()) != 0:
        raise _error("capset")

