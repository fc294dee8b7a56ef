"""Per-source cache of the first stage (decode, parse, assemble).

An entry is keyed by the file's sha256, its place in ``raw/``, the limits in
force and the pipeline's own code (a hash of its modules, grammar and data),
so a change to any of them parses again. ``--full`` bypasses the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline import __version__

_ROOT = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of everything that decides what the first stage produces."""
    digest = hashlib.sha256(__version__.encode())
    files = sorted(_ROOT.glob("*.py")) + sorted((_ROOT / "data").glob("*")) + sorted(
        (_ROOT.parent / "grammars").glob("*.lark")
    )
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class SourceCache:
    """Pickled first-stage results in a folder, one file per key. With
    ``reuse=False`` (``--full``) nothing is read back, but fresh results still
    replace the old ones, so the next run can reuse them."""

    def __init__(self, folder: Path, reuse: bool = True) -> None:
        self.folder = folder
        self.reuse = reuse

    def key(self, sha256: str, rel_path: str, settings: Any) -> str:
        raw = f"{code_version()}\0{sha256}\0{rel_path}\0{settings!r}"
        return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()

    def get(self, key: str) -> Any | None:
        if not self.reuse:
            return None
        try:
            with (self.folder / f"{key}.pickle").open("rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None

    def put(self, key: str, value: Any) -> None:
        """Write atomically (temp file, then rename), so a killed run leaves no torn entry."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}.tmp"
            with tmp.open("wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.folder / f"{key}.pickle")
        except OSError:
            pass  # a cache that cannot be written only costs time
