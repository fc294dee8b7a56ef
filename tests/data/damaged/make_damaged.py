"""Write the damaged copies in this folder from the bundled files in raw/.

    python -m tests.data.damaged.make_damaged          # rewrite every case here
    python -m tests.data.damaged.make_damaged --check  # exit 1 if a file differs

Each case is an excerpt of a bundled file (title, date, the start of the
contents, the start of the body, and one keyword section) damaged the way real
copies are; the functions are also applied by the tests to whole releases.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from tests.golden.make_excerpt import excerpt

HERE = Path(__file__).resolve().parent
RAW = HERE.parents[2] / "raw"

MANGLED_BOM = b"\xef\xbf\xbd\xef\xbf\xbd"


def mangle_bom(data: bytes) -> bytes:
    """A UTF-16 file after a UTF-8 round trip: its BOM's two bytes became U+FFFD each."""
    assert data[:2] in (b"\xff\xfe", b"\xfe\xff")
    return MANGLED_BOM + data[2:]


def rewrite_carriage_returns(data: bytes) -> bytes:
    """A byte-wise LF -> CRLF conversion (unix2dos) run on UTF-16: a CR byte goes
    in before every LF byte, and the byte pairs slip by one at every line end."""
    return re.sub(rb"(?<!\r)\n", b"\r\n", data)


def pad_with_nuls(data: bytes, seed: int = 11) -> bytes:
    """A scraper's fixed-width padding: NUL runs between words, before or after the space."""
    rng = random.Random(seed)
    return re.sub(rb" ", lambda m: rng.choice([b"\x00" * 6, b" \x00\x00\x00", b"\x00\x00 ", b" "]), data)


def one_line_html(text: str, section: str) -> bytes:
    """A keyword section as a web page saved on one line: ``<h2>Title</h2><p>rule</p>...``."""
    lines = [ln for ln in text.split("\n") if ln.startswith(section)]
    title = lines[0].removeprefix(section + ".").strip()
    escape = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
    return (f"<h2>{title}</h2>" + "".join(f"<p>{ln.translate(escape)}</p>" for ln in lines[1:]) + "\n").encode()


def cases() -> dict[str, bytes]:
    """File name -> damaged bytes."""
    from pipeline.ingest.decode import decode

    utf16 = excerpt(RAW / "cr-2016-08-26.txt", [(1, 4), (18, 21), (171, 182), (3279, 3284)])
    seed = (RAW / "000_eb8496d4591d3274.txt").read_bytes()
    return {
        "cr-2016-08-26__mangled-bom.txt": mangle_bom(utf16),
        "cr-2016-08-26__mangled-bom-cr-rewritten.txt": rewrite_carriage_returns(mangle_bom(utf16)),
        "000__nul-padding.txt": pad_with_nuls(seed[: seed.index(b"\n", 2000) + 1]),
        "cr-2026-08-07__one-line.html": one_line_html(decode((RAW / "cr-2026-08-07.txt").read_bytes()).text,
                                                      "702.42"),
    }


def main(argv: list[str]) -> int:
    differ = []
    for name, data in cases().items():
        path = HERE / name
        if "--check" in argv:
            if not path.exists() or path.read_bytes() != data:
                differ.append(name)
        else:
            path.write_bytes(data)
            print(f"wrote {path.relative_to(HERE.parents[2])}")
    for name in differ:
        print(f"differs: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
