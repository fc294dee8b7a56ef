"""Publishing ``out/`` safely: one run at a time, built aside, swapped in whole.

A run takes an exclusive lock (``<out>.lock``), writes everything into a
staging folder beside ``out/``, validates it, and only then exchanges the two
folders in one atomic ``renameat2(RENAME_EXCHANGE)``. A run that fails or is
killed before that leaves ``out/`` exactly as it was. A staging folder
``.<out>.staging-<pid>`` has a marker file beside it, ``.<out>.staging-<pid>.marker``,
written before the folder is made: it names the process and when it started.
A run killed outright (``kill -9``, a power cut) leaves both; every run, as it
takes the lock, removes the staging folders whose marker names a process that
is gone (``sweep``), and nothing else.

The output folder is the pipeline's own: each published folder carries a
marker file (``MARKER``) listing every file the pipeline wrote in it (paths
relative to it: ``parquet/rules.parquet``). A run refuses to publish over a
non-empty folder without the marker, or one holding any file, at any depth,
that the marker does not list, so nothing the pipeline did not write is ever
deleted. ``check_folders`` refuses an output folder that overlaps the
input folder (outputs would become inputs, or publishing would delete inputs).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline import workers
from pipeline.errors import Busy, ForeignOutput, Overlap

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


MARKER = ".rules-pipeline"
SITE_MARKER = ".rules-site"  # what `site` leaves in the folder it writes
_MARKER_HEAD = "rules-pipeline output folder"
_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")  # what SQLite leaves beside a database it opened


def marker_text(names: Iterable[str]) -> str:
    """The marker's contents: what it is, then every name the pipeline wrote, one a line."""
    listed = sorted(set(names) | {MARKER})
    return (
        f"{_MARKER_HEAD}: written by rules-pipeline and replaced whole by every run.\n"
        "Keep nothing else here: a run refuses to publish over a name not listed below.\n\n"
        + "".join(f"{name}\n" for name in listed)
    )


def owned_names(out: Path) -> set[str] | None:
    """The files (paths relative to ``out``) the pipeline wrote there, from its
    marker, or, for a folder published before the marker existed, from its
    ``run.json``'s list of outputs; None when ``out`` carries neither. A marker
    of an older version lists a sub-folder by its name alone: its files are
    then the outputs ``run.json`` lists in it."""
    try:
        text = (out / MARKER).read_text(encoding="utf-8")
    except (OSError, ValueError):
        text = ""
    if text.startswith(_MARKER_HEAD):
        _, _, listing = text.partition("\n\n")
        listed = {line for line in listing.splitlines() if line} | {MARKER}
        folders = {name for name in listed if "/" not in name and (out / name).is_dir()
                   and not any(other.startswith(f"{name}/") for other in listed)}
        if not folders:  # a marker of this version: run.json need not be read
            return listed
        return (listed - folders) | {f for f in _outputs(out) or () if f.split("/")[0] in folders}
    outputs = _outputs(out)
    return None if outputs is None else outputs | {"run.json"}


def _outputs(out: Path) -> set[str] | None:
    """The files ``out``'s ``run.json`` lists as the run's outputs, if it is the pipeline's."""
    try:
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))
        files = {o["file"] for o in report["outputs"]} if "pipeline_version" in report else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return files if files is not None and all(isinstance(f, str) for f in files) else None


def written_files(folder: Path) -> list[str]:
    """Every file under ``folder``, as a path relative to it: what a marker lists."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def others(folder: Path, known: set[str]) -> list[str]:
    """What lies under ``folder`` that is neither ``known`` (paths relative to
    it) nor a SQLite side file of one: files and links at any depth, and
    folders that hold nothing known (named with a trailing ``/``, their
    content unlisted). Links to folders are not followed."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath).relative_to(folder)
        for name in sorted(dirnames):
            rel = (base / name).as_posix()
            if os.path.islink(os.path.join(dirpath, name)):
                filenames.append(name)
            elif not any(k.startswith(f"{rel}/") for k in known):
                found.append(f"{rel}/")
        dirnames[:] = [d for d in dirnames if f"{(base / d).as_posix()}/" not in found
                       and not os.path.islink(os.path.join(dirpath, d))]
        found += [rel for name in sorted(filenames)
                  if (rel := (base / name).as_posix()) not in known and not sqlite_side_file(rel, known)]
    return sorted(found)


def check_owned(out: Path) -> None:
    """Raise ForeignOutput unless ``out`` is missing, empty, or holds only what
    the pipeline wrote there (see the module docstring)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ForeignOutput(f"--out {out} is not a folder: refusing to replace it")
    try:
        entries = sorted(entry.name for entry in out.iterdir())
    except OSError as exc:
        raise ForeignOutput(f"--out {out} cannot be listed ({exc.strerror}): refusing to replace it") from None
    if not entries:
        return
    owned = owned_names(out)
    if owned is None:
        raise ForeignOutput(
            f"--out {out} is not empty and was not written by this pipeline (it has no {MARKER}): "
            "nothing published; choose a new or empty folder"
        )
    foreign = others(out, owned)
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise ForeignOutput(
            f"--out {out} holds {foreign[0]!r}{more}, which the pipeline did not write: nothing published; "
            "move it elsewhere or choose another folder"
        )


def sqlite_side_file(name: str, owned: set[str]) -> bool:
    """A file SQLite keeps beside a database of ``owned`` that someone opened."""
    return any(name.endswith(end) and name[: -len(end)] in owned for end in _SQLITE_SIDE_FILES)


def check_folders(raw: Path, out: Path, cache: Path | None = None) -> None:
    """Raise Overlap when the output (or the cache) would be read as input, or
    publishing would replace the inputs. Reads no input file."""
    real_raw, real_out = raw.resolve(), out.resolve()
    if real_out == real_raw:
        raise Overlap(f"--out {out} is the input folder --raw {raw}: publishing would replace the inputs")
    if real_out.is_relative_to(real_raw):
        raise Overlap(f"--out {out} is inside --raw {raw}: the outputs would be read as inputs by the next run")
    if real_raw.is_relative_to(real_out):
        raise Overlap(f"--raw {raw} is inside --out {out}: publishing would replace the inputs")
    if cache is not None:
        real_cache = cache.resolve()
        if real_cache.is_relative_to(real_raw):
            raise Overlap(f"--cache-dir {cache} is inside --raw {raw}: the cache would be read as input")
        if real_cache.is_relative_to(real_out):
            raise Overlap(f"--cache-dir {cache} is inside --out {out}: publishing would delete it")
    if (raw / MARKER).is_file() or ((raw / "run.json").is_file() and owned_names(raw) is not None):
        raise Overlap(f"--raw {raw} is a folder this pipeline published: outputs are never read as inputs")
    # A dataset or a site written somewhere inside it (`site --dest raw/site`):
    # its pages would be read as thousands of web-page dumps.
    for dirpath, _, filenames in os.walk(raw):
        for marker, what in ((MARKER, "a dataset this pipeline published"), (SITE_MARKER, "a site `site` wrote")):
            if marker in filenames and Path(dirpath) != raw:
                raise Overlap(f"--raw {raw} holds {what} in {dirpath}: outputs are never read as inputs; "
                              "move it out of --raw")


def published_folder(path: Path) -> Path | None:
    """The dataset or site this pipeline wrote that ``path`` is, or lies in, once
    links are followed (a loop is left as it is), if any."""
    target = Path(os.path.realpath(path))
    for folder in (target, *target.parents):
        if (folder / MARKER).is_file() or (folder / SITE_MARKER).is_file():
            return folder
    return None


def site_files(dest: Path) -> set[str] | None:
    """The files (paths relative to ``dest``) the site's marker says ``site`` wrote
    there, or None without a marker (a marker of an older version lists none)."""
    try:
        lines = (dest / SITE_MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return {line for line in lines[1:] if line}


def site_others(dest: Path, written: set[str]) -> list[str]:
    """What lies under ``dest`` that is neither the marker nor listed in it."""
    return others(dest, written | {SITE_MARKER})


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
            sweep(out)  # every run, unchanged ones included
            yield
        finally:
            fh.truncate(0)
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def staging(out: Path) -> Iterator[Path]:
    """A fresh staging folder beside ``out`` (same file system, so the swap is a
    rename), with what earlier runs left there removed first (``sweep``), and its
    marker; whatever is left of the folder when the block ends (all of it, on a
    failure) is removed, and the marker. Both are made inside the block that
    removes them: a Ctrl-C that came just after the folder was made, before that
    block was entered, left it behind."""
    out.parent.mkdir(parents=True, exist_ok=True)
    sweep(out)
    path = out.parent / f".{out.name}.staging-{os.getpid()}"
    if os.path.lexists(path):  # what sweep left: nothing says it is the pipeline's to remove
        raise ForeignOutput(f"{path} is in the way of this run's staging folder, and no marker says a run "
                            "that is gone left it: nothing published; move it elsewhere")
    try:
        write_whole(_staging_marker(path), _staging_text(os.getpid()))
        path.mkdir()
        yield path
    finally:
        _remove_staging(path)


_STAGING_HEAD = "rules-pipeline staging folder"
_STAGING_TEXT = re.compile(re.escape(_STAGING_HEAD) + r" of process ([0-9]+), started at ([0-9]+|-) ")


def write_whole(path: Path, text: str) -> None:
    """Write a new file that appears with all of ``text`` or not at all: the text
    goes into an unnamed file (Linux's ``O_TMPFILE``) that is then linked in under
    its name. A staging folder's marker written the plain way was, for a moment,
    an empty file: a run killed in that moment left a marker that no later run
    could read, and so none removed. Where there is no unnamed file (another
    system, or a file system without them), or the name is taken, a plain write."""
    data = text.encode("utf-8")
    try:
        fd = os.open(path.parent, getattr(os, "O_TMPFILE", 0) | os.O_WRONLY, 0o666)
    except OSError:  # no O_TMPFILE (the flag 0 opens a folder for writing: EISDIR), or none here
        path.write_bytes(data)
        return
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.link(f"/proc/self/fd/{fd}", path)
    except OSError:
        path.write_bytes(data)
    finally:
        os.close(fd)


def _staging_marker(folder: Path) -> Path:
    return folder.with_name(folder.name + ".marker")


def _staging_text(pid: int) -> str:
    return (f"{_STAGING_HEAD} of process {pid}, started at {workers.started(pid) or '-'} (clock ticks after boot):\n"
            "the folder beside this file, named as it is without .marker. The next run removes both\n"
            "once that process is gone.\n")


def _marked(folder: Path) -> tuple[int, str] | None:
    """(pid, start) as the marker of staging folder ``folder`` names them, if it
    has one and it names the pid in the folder's name."""
    try:
        found = _STAGING_TEXT.match(_staging_marker(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if found is None or found[1] != folder.name.rpartition("-")[2]:
        return None
    return int(found[1]), found[2].strip("-")




def sweep(out: Path) -> list[Path]:
    """Remove what killed runs left beside ``out``: a swap left half done
    (``recover``), and each staging folder whose marker names a process that is
    gone, with its marker; returns the folders removed. A staging folder without
    a marker goes only if it is empty (made by a version before markers, killed
    as it made it); a link, and a folder whose marker is missing, damaged or
    names a live process, stay. Call it holding the lock."""
    recover(out)
    removed = []
    for folder in leftovers(out, "staging"):
        if folder.is_symlink() or not folder.is_dir():
            continue
        marked = _marked(folder)
        if marked is None:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
                removed.append(folder)
        elif workers.gone(*marked):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    # The markers of those folders, and of runs killed before they made theirs.
    for marker in out.parent.glob(f".{out.name}.staging-*.marker"):
        folder = marker.with_name(marker.name.removesuffix(".marker"))
        marked = _marked(folder)
        if marked and not os.path.lexists(folder) and workers.gone(*marked):
            with contextlib.suppress(OSError):
                marker.unlink()
    return removed


def recover(out: Path) -> None:
    """Finish or undo a swap that a killed run left half done (rename fallback only)."""
    olds = sorted(leftovers(out, "old"))
    if olds and not out.exists():
        os.replace(olds[-1], out)
        olds = olds[:-1]
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def leftovers(out: Path, kind: str) -> list[Path]:
    """The ``.<out>.staging-<pid>`` or ``.<out>.old-<pid>`` folders a run made beside ``out``."""
    pattern = re.compile(re.escape(f".{out.name}.{kind}-") + r"[0-9]+")
    return [p for p in out.parent.glob(f".{out.name}.{kind}-*") if pattern.fullmatch(p.name)]


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


def _remove_staging(staging: Path) -> None:
    """Remove a staging folder whole, even when a second Ctrl-C or SIGTERM comes
    while it is being removed (a signal sent to the whole process group, as
    `timeout` and `systemctl stop` send it, reaches a run twice): those wait
    until it is gone (``workers.ctrl_c_held``: blocking them in this thread did
    not hold one the kernel gave to another thread of the job)."""
    with workers.ctrl_c_held():
        shutil.rmtree(staging, ignore_errors=True)
        _staging_marker(staging).unlink(missing_ok=True)


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
