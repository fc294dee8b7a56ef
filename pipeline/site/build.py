"""A static, offline, hyperlinked site from a published ``out/``: ``python -m pipeline site``.

Pages (all relative links, so the folder works from the file system or any static host):

- ``index.html``: releases on a timeline (a 24 px link per release under its year), the
  current release, a search box;
- ``release/<source>.html``: one page per release and per dump, the whole document,
  opening with its rules (the document's own opening and contents folded, the contents
  linked), every rule anchored ``R`` + its number without dots (``#R70242a``), every rule
  number a link to its lineage, every cross-reference a link and the first occurrence of
  each glossary term in a rule a link to its entry; a truncated or suspect copy warns first;
- ``lineage/<lineage>.html``: one rule through the releases: its current (or last) wording,
  then its history with word diffs;
- ``changes/<source>.html``: what changed from the release before, matched through lineages;
- ``compare.html`` (any two sources, in the browser), ``search.html`` (offline search over
  ``search-index.js``, the query in the address: ``search.html?q=702.42``), ``run.html``
  (the run report, with SVG charts of a bar per release).

Every page's footer carries the data notice (``pipeline.publish.notice``).

The site is built in a staging folder beside ``--dest`` and swapped in whole; a
folder this command did not write (no ``.rules-site`` marker) is never replaced.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.errors import SiteError
from pipeline.publish import folder as publish
from pipeline.publish.folder import SITE_MARKER
from pipeline.site import pages as sitepages
from pipeline.site.data import load

MARKER = SITE_MARKER
TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True, slots=True)
class SiteResult:
    dest: Path
    pages: int
    releases: int
    dumps: int
    lineages: int
    change_pages: int
    unresolved_xrefs: int
    bytes: int
    seconds: float


def environment() -> Environment:
    """Jinja2 with autoescaping on: every value from the sources is escaped unless it is ``Markup``."""
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_dest(out: Path, dest: Path, raw: Path | None = None) -> None:
    out_r, dest_r = out.resolve(), dest.resolve()
    if _inside(dest_r, out_r) or _inside(out_r, dest_r):
        raise SiteError(f"--dest {dest} and --out {out} overlap: the site goes in a folder of its own")
    if raw is not None and raw.is_dir() and _inside(dest_r, raw.resolve()):
        raise SiteError(f"--dest {dest} is inside the input folder {raw}: the next ingest would refuse it; "
                        "the site goes elsewhere")
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise SiteError(f"--dest {dest}: exists and is not a folder; not replaced")
    if dest.is_dir() and any(dest.iterdir()):
        written = publish.site_files(dest)
        if written is None:
            raise SiteError(f"--dest {dest}: a folder this command did not write (no {MARKER}); not replaced")
        foreign = sorted(publish.site_others(dest, written))
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise SiteError(f"--dest {dest} holds {foreign[0]}{more}, which this command did not write: "
                            "not replaced; move it elsewhere")


def build_site(out: Path, dest: Path, raw: Path | None = None) -> SiteResult:
    """Read the dataset published in ``out`` and write the site to ``dest`` (replaced
    whole; never inside ``raw``, the input folder)."""
    started = time.perf_counter()
    _check_dest(out, dest, raw)
    ds = load(out)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.parent / f".{dest.name}.staging-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    files: list[str] = []
    try:
        pages = sitepages.Pages(ds, environment())
        written = 0
        total = 0
        for rel, content in pages.all():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8")
            path.write_bytes(data)
            files.append(Path(rel).as_posix())
            written += rel.endswith(".html")
            total += len(data)
        for static in sorted((TEMPLATES / "static").iterdir()):
            (staging / "static").mkdir(exist_ok=True)
            shutil.copyfile(static, staging / "static" / static.name)
            files.append(f"static/{static.name}")
            total += static.stat().st_size
        # The marker lists every file written: a rebuild or `make clean` removes those, and no other.
        (staging / MARKER).write_text(f"written by `python -m pipeline site` from {out}\n"
                                      + "".join(f"{f}\n" for f in sorted(files)), encoding="utf-8")
        _swap(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return SiteResult(
        dest=dest, pages=written, releases=len(ds.releases), dumps=len(ds.sources) - len(ds.releases),
        lineages=len(ds.lineages), change_pages=pages.change_pages, unresolved_xrefs=pages.unresolved,
        bytes=total, seconds=time.perf_counter() - started,
    )


def _swap(staging: Path, dest: Path) -> None:
    if not dest.exists():
        staging.rename(dest)
        return
    old = dest.parent / f".{dest.name}.old-{os.getpid()}"
    dest.rename(old)
    staging.rename(dest)
    shutil.rmtree(old)
