"""Files and their sha256: a new file that hashes the bytes written to it (so that no writer reads
its file back to hash it), a text written and hashed, a file hashed."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class HashingFile(io.RawIOBase):
    """A new file (``path``, created or emptied) and the sha256 of what was written to it."""

    def __init__(self, path: Path) -> None:
        self._file = io.FileIO(path, "w")
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer, /) -> int:
        written = self._file.write(data) or 0  # a short write: the buffer above writes the rest
        self.digest.update(memoryview(data)[:written])
        return written

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes, read a MiB at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_text(path: Path, text: str) -> str:
    """Write ``text`` (UTF-8) as the file ``path``; returns the sha256 of its bytes."""
    data = text.encode("utf-8")
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()
