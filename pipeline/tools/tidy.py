"""``make clean``: remove what the pipeline generated beside the project, and nothing else.

An output folder goes only as far as its marker lists the pipeline's own files
(a folder without one is left alone), and only when no run holds its lock;
staging and swap leftovers beside it, its lock file, the parse cache's entries,
the benchmark's work and results, the files a site's marker lists (``site/``),
and the bytecode caches go too. Whatever else a user keeps in
those places stays, and is named.

    python -m pipeline tidy [OUT ...]             # default: out

Standard library only, and runnable on its own (``python3 -m pipeline.tools.tidy``):
``make clean`` runs it so when there is no virtualenv, hence no click, since
``make clean`` removes the virtualenv and may be run again without one.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from pipeline import cache
from pipeline.publish import folder as publish


def _held(lock: Path) -> bool:
    """True when a running job holds ``lock``."""
    try:
        with lock.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def tidy_output(out: Path) -> Iterator[str]:
    """Remove the output folder ``out`` (the pipeline's files in it) and its leftovers; yield what was kept."""
    lock = out.with_name(out.name + ".lock")
    if lock.exists() and _held(lock):
        yield f"kept {out}: a run is writing it"
        return
    publish.recover(out)
    for leftover in publish.leftovers(out, "staging") + publish.leftovers(out, "old"):
        shutil.rmtree(leftover, ignore_errors=True)
    # The marker beside each staging folder a killed run left (no run holds the lock).
    for marker in out.parent.glob(f".{out.name}.staging-*.marker"):
        if not marker.with_name(marker.name.removesuffix(".marker")).exists():
            marker.unlink(missing_ok=True)
    if out.is_dir() and not out.is_symlink():
        owned = publish.owned_names(out)
        if owned is None:
            if any(out.iterdir()):
                yield f"kept {out}: the pipeline did not write it (no {publish.MARKER})"
                lock.unlink(missing_ok=True)
                return
            owned = set()
        others = publish.others(out, owned)
        _remove_written(out, owned - {publish.MARKER})
        for entry in out.iterdir():
            if publish.sqlite_side_file(entry.name, owned):
                entry.unlink()
        if others:
            yield f"kept {out}: it holds {len(others)} file(s) the pipeline did not write, e.g. {others[0]}"
        else:
            (out / publish.MARKER).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                out.rmdir()
    lock.unlink(missing_ok=True)


def _remove_written(folder: Path, written: set[str]) -> None:
    """Remove the files ``written`` lists (paths relative to ``folder``, none
    outside it), then the folders they leave empty."""
    real = folder.resolve()
    for rel in sorted(written):
        path = folder / rel
        if path.is_file() and not path.is_symlink() and real in path.resolve().parents:
            path.unlink()
    _remove_empty(folder)


def tidy_site(site: Path) -> Iterator[str]:
    """Remove the files a site's marker lists (``python -m pipeline site``), the
    folders they leave empty, and the marker when nothing else is left."""
    written = publish.site_files(site) if site.is_dir() and not site.is_symlink() else None
    if written is None:
        return
    _remove_written(site, written)
    others = publish.site_others(site, written)
    if others:
        yield f"kept {site}: it holds {len(others)} file(s) `site` did not write, e.g. {sorted(others)[0]}"
    else:
        (site / publish.SITE_MARKER).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            site.rmdir()


def _remove_empty(folder: Path) -> None:
    """Remove the empty folders under ``folder``, deepest first."""
    for path in sorted((p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink()),
                       key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            path.rmdir()


def tidy_bench(bench: Path) -> Iterator[str]:
    """Remove what ``make bench`` wrote: its results and its work folders (each scale's and the generated releases)."""
    for name in ("latest.json", "previous.json"):
        (bench / "results" / name).unlink(missing_ok=True)
    work = bench / "work"
    if work.is_dir() and not work.is_symlink():
        for entry in work.iterdir():
            if entry.is_dir() and not entry.is_symlink() and re.fullmatch(r"real|generated|[0-9]+x", entry.name):
                shutil.rmtree(entry, ignore_errors=True)
    for folder in (bench / "results", work):
        with contextlib.suppress(OSError):
            folder.rmdir()
        if folder.is_dir():
            yield f"kept {folder}: it holds files the benchmark did not write"


def tidy_cache(folder: Path) -> Iterator[str]:
    """Remove the parse cache's entries under ``folder``, and the folders they leave empty."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for path in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        if path.is_file() and cache.is_cache_file(path.name):
            path.unlink()
    _remove_empty(folder)
    with contextlib.suppress(OSError):
        folder.rmdir()
    if folder.exists():
        yield f"kept {folder}: it holds files the cache did not write"


def tidy(root: Path, outs: list[str]) -> list[str]:
    """Everything above for the output folders ``outs`` under ``root``; returns what was kept, one line each."""
    kept: list[str] = []
    for name in outs:
        kept += tidy_output(root / name)
    kept += tidy_cache(root / ".cache")
    for folder in ("pipeline", "tests"):
        for pycache in sorted((root / folder).rglob("__pycache__")) if (root / folder).is_dir() else []:
            shutil.rmtree(pycache, ignore_errors=True)
    kept += tidy_bench(root / "bench")
    kept += tidy_site(root / "site")
    return kept


if __name__ == "__main__":  # make clean without a virtualenv; otherwise `python -m pipeline tidy`
    for line in tidy(Path.cwd(), sys.argv[1:] or ["out"]):
        print(line)
