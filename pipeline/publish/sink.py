"""A new file that hashes the bytes written to it, so that no writer reads its file back to hash it."""

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
