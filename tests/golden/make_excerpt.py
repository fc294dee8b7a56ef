"""Cut byte-exact excerpts of raw/ files for golden cases (a developer tool).

    python -m tests.golden.make_excerpt raw/cr-2006-10-01.txt 1-3 1530-1532 > tests/golden/era/x.txt

Each range of lines (1-based, in the decoded text) is copied byte for byte,
line endings and BOM included; ranges are concatenated in the order given.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pipeline.ingest.decode import to_text

_BOMS = {"utf-8-sig": b"\xef\xbb\xbf", "utf-16-le+bom": b"\xff\xfe", "utf-16-be+bom": b"\xfe\xff"}
_CODEC = {"utf-8-sig": "utf-8", "utf-16-le+bom": "utf-16-le", "utf-16-be+bom": "utf-16-be", "ascii": "ascii"}


def span(text: str) -> tuple[int, int]:
    """A range of lines as written on the command line: ``1530-1532``, or ``7`` for one line.

    >>> span("1530-1532"), span("7")
    ((1530, 1532), (7, 7))
    """
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def excerpt(path: Path, ranges: list[tuple[int, int]]) -> bytes:
    data = path.read_bytes()
    text, encoding, _, _ = to_text(data)
    bom = _BOMS.get(encoding, b"")
    codec = _CODEC.get(encoding, encoding)
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    starts.append(len(text))
    out = bytearray(bom)
    for first, last in ranges:
        chunk = text[starts[first - 1] : starts[min(last, len(starts) - 1)]]
        out += chunk.encode(codec)
    return bytes(out)


if __name__ == "__main__":
    sys.stdout.buffer.write(excerpt(Path(sys.argv[1]), [span(r) for r in sys.argv[2:]]))
