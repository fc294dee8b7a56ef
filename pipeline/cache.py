"""Cache of the first stage (decode, parse, assemble) per source, and of each
lineage step (the alignment of one release with the next) per pair of releases.

An entry is keyed by the file's sha256, its place in ``raw/``, its source id,
the limits in force and the pipeline's own code (a hash of its modules,
grammar and data), so a change to any of them parses again. A step's key is
the content of both releases as alignment reads it, so adding one release
aligns one new pair (or two, when it lands between two others). ``--full``
bypasses the cache. After a published run the cache is pruned to the entries
that run used, so it holds the sources that still exist and no more, and those
keys are written down (``LEDGER``); every other run (unchanged, or one that
fails after a run that was killed or failed wrote entries) prunes it to them
again, so the cache is bounded by what the last published run used (plus, while
a run is at work, what that run adds).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline import __version__, workers

_ROOT = Path(__file__).resolve().parent
_ENTRY = re.compile(r"[0-9a-f]{64}\.pickle")
# The keys of the entries the last published run used, one a line after a header.
LEDGER = "published-run.keys"
_LEDGER_HEAD = "rules-pipeline parse cache: the entries the last published run used"
_TEMP = re.compile(r"\.([0-9a-f]{64}|" + re.escape(LEDGER) + r")\.([0-9]+)\.tmp")


@cache
def code_version(*packages: str) -> str:
    """A hash of the code that decides a result: the top-level modules (the core),
    the data files, the grammar, and the subpackages named (all of them when none
    is), so that moving or changing a module of a stage can never leave its
    cache stale."""
    digest = hashlib.sha256(__version__.encode())
    folders = [_ROOT / name for name in packages] if packages else [p for p in sorted(_ROOT.iterdir()) if p.is_dir()]
    files = sorted(_ROOT.glob("*.py")) + sorted((_ROOT / "data").glob("*"))
    files += [p for folder in folders for p in sorted(folder.rglob("*.py"))]
    for path in files:
        digest.update(str(path.relative_to(_ROOT)).encode())
        digest.update(path.read_bytes())
    for grammar in sorted(resources.files("pipeline.grammars").iterdir(), key=lambda g: g.name):
        if grammar.name.endswith(".lark"):
            digest.update(grammar.name.encode())
            digest.update(grammar.read_bytes())
    return digest.hexdigest()[:16]


# The packages each cache's entries depend on.
SOURCE_CODE = ("ingest",)
STEP_CODE = ("ingest", "corpus", "lineage")


class SourceCache:
    """Pickled first-stage results in a folder, one file per key. With
    ``reuse=False`` (``--full``) nothing is read back, but fresh results still
    replace the old ones, so the next run can reuse them."""

    def __init__(self, folder: Path, reuse: bool = True) -> None:
        self.folder = folder
        self.reuse = reuse

    def key(self, sha256: str, rel_path: str, source_id: str, settings: Any) -> str:
        raw = f"{code_version(*SOURCE_CODE)}\0{sha256}\0{rel_path}\0{source_id}\0{settings!r}"
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()

    def step_key(self, before: str, after: str) -> str:
        """The key of one lineage step, from the digests of the two releases as
        alignment sees them (``lineage.Release.digest``)."""
        raw = f"{code_version(*STEP_CODE)}\0step\0{before}\0{after}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def get(self, key: str) -> Any | None:
        if not self.reuse:
            return None
        try:
            with (self.folder / f"{key}.pickle").open("rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None

    def has(self, key: str) -> bool:
        """Whether ``get`` may find the entry (it is there, and may be read back),
        without reading it."""
        return self.reuse and (self.folder / f"{key}.pickle").is_file()

    def put(self, key: str, value: Any) -> None:
        """Write atomically (temp file, then rename), so a killed run leaves no torn entry."""
        self.put_pickled(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def put_pickled(self, key: str, data: bytes) -> None:
        """``put`` for a value already pickled (``data``: what ``get`` loads)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, self.folder / f"{key}.pickle")
        except OSError:
            pass  # a cache that cannot be written only costs time

    def prune(self, keep: set[str]) -> int:
        """Delete the entries whose key is not in ``keep`` (the keys a published
        run used, written down as the ``LEDGER``), and temp files of runs no
        longer alive; returns how many files went. Only files named as this class
        names them are touched, whatever else the folder holds."""
        removed = self._prune(keep)
        try:
            tmp = self.folder / f".{LEDGER}.{os.getpid()}.tmp"
            tmp.write_text("".join(f"{line}\n" for line in [_LEDGER_HEAD, *sorted(keep)]), encoding="utf-8")
            os.replace(tmp, self.folder / LEDGER)
        except OSError:
            pass  # the next unchanged run then keeps every entry
        return removed

    def prune_unused(self) -> int:
        """``prune`` to the entries the last published run used (``LEDGER``): what
        a run that failed or was killed since wrote goes. Without a ledger (a cache
        of an older version) entries stay, and only dead runs' temp files go."""
        try:
            lines = (self.folder / LEDGER).read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            lines = []
        keep = set(lines[1:]) if lines[:1] == [_LEDGER_HEAD] else None
        return self._prune(keep)

    def _prune(self, keep: set[str] | None) -> int:
        """Delete the entries not in ``keep`` (none when it is None) and dead runs' temp files."""
        removed = 0
        try:
            names = [p.name for p in self.folder.iterdir()]
        except OSError:
            return 0
        for name in names:
            temp = _TEMP.fullmatch(name)
            stale = (keep is not None and _ENTRY.fullmatch(name) and name[:-7] not in keep) or (
                temp and workers.gone(int(temp[2])))
            if stale:
                try:
                    (self.folder / name).unlink()
                    removed += 1
                except OSError:
                    pass
        return removed


def is_cache_file(name: str) -> bool:
    """A file name this cache writes: an entry, the ledger, or either being written."""
    return bool(_ENTRY.fullmatch(name) or _TEMP.fullmatch(name) or name == LEDGER)


