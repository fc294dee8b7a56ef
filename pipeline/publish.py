"""Publishing ``out/`` safely: one run at a time, built aside, swapped in whole.

A run takes an exclusive lock (``<out>.lock``), writes everything into a
staging folder beside ``out/``, validates it, and only then exchanges the two
folders in one atomic ``renameat2(RENAME_EXCHANGE)``. A run that fails or is
killed before that leaves ``out/`` exactly as it was; the leftover staging
folder is removed by the next run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class Busy(RuntimeError):
    """Another run holds the lock on this output folder."""


@contextmanager
def lock(out: Path) -> Iterator[None]:
    """Hold ``<out>.lock`` for the duration; raise Busy if another run holds it."""
    path = out.with_name(out.name + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise Busy(f"{out} is being written by {holder}; try again when it has finished") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            fh.truncate(0)
            fcntl.flock(fh, fcntl.LOCK_UN)


def staging_dir(out: Path) -> Path:
    """A fresh staging folder beside ``out`` (same file system, so the swap is a rename)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    for stale in out.parent.glob(f".{out.name}.staging-*"):
        shutil.rmtree(stale, ignore_errors=True)
    path = out.parent / f".{out.name}.staging-{os.getpid()}"
    path.mkdir()
    return path


def recover(out: Path) -> None:
    """Finish or undo a swap that a killed run left half done (rename fallback only)."""
    olds = sorted(out.parent.glob(f".{out.name}.old-*"))
    if olds and not out.exists():
        os.replace(olds[-1], out)
        olds = olds[:-1]
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2; False where the system cannot."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(staging: Path, out: Path) -> None:
    """Make ``staging`` the new ``out``; the old contents are deleted afterwards."""
    if out.exists() and _exchange(staging, out):
        shutil.rmtree(staging)
        return
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old)
    else:
        os.replace(staging, out)
