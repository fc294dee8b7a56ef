"""``SHA256SUMS``: one ``sha256  file`` line per file of the dataset, as ``sha256sum`` writes them.

``sha256sum -c SHA256SUMS`` in the folder checks a download whole. It is
written into the staging folder last of the dataset's files, before the swap.
Left out are the files that describe the run rather than the dataset (and so
differ between two runs of the same input, or change without the dataset
changing): ``run.json`` (rewritten by every run, an unchanged one too),
``changes.md`` (what changed since the folder published before it) and the
folder's marker (its list of names) -- and ``SHA256SUMS`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pipeline.publish.folder import MARKER
from pipeline.publish.sink import sha256_of, write_text

SUMS = "SHA256SUMS"
NOT_SUMMED = frozenset({"run.json", "changes.md", MARKER, SUMS})


def summed(out: Path) -> list[str]:
    """The files of ``out`` that ``SHA256SUMS`` lists (paths relative to it), in byte order of their names."""
    names = (p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    return sorted((n for n in names if n not in NOT_SUMMED), key=lambda n: n.encode("utf-8"))


def sums_text(out: Path, known: Mapping[str, str] | None = None) -> str:
    """The lines of ``SHA256SUMS`` for ``out``; ``known`` gives digests already made, by path."""
    known = known or {}
    return "".join(f"{known.get(name) or sha256_of(out / name)}  {name}\n" for name in summed(out))


def write(out: Path, known: Mapping[str, str] | None = None) -> str:
    """Write ``SHA256SUMS`` into ``out``; returns its own sha256."""
    return write_text(out / SUMS, sums_text(out, known))
