"""The published dataset as the site shows it, read from ``out/`` and never re-derived.

Everything here comes from the tables a run published (``sources.csv``,
``elements.csv``, ``rule_history.csv``, ``xrefs.csv``, ``glossary.csv``,
``sections.csv``, ``rules.csv``, ``renumber_map.csv``, ``run.json`` and, when
the run has them, ``lineages.csv``). A rule's lineage is keyed by its
``lineage_id`` when ``rule_history.csv`` has that column, else by its canonical
number (the tables before lineages were published).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import DatasetError, SiteError
from pipeline.query import dataset, frames

# Undated sources with no known numbering sit at the start of the era their wording shows.
_ERA_START = {"pre-2009": "1999", "2009-2018": "2009-07-11", "2018-2021": "2018-04-27", "2021+": "2021-04-16"}


@dataclass(frozen=True, slots=True)
class Source:
    """One row of ``sources.csv``: a release (a dated official CR) or a dump."""

    source_id: str
    format: str
    effective_date: str
    era: str
    status: str
    numbering_like: str
    row: dict[str, str]

    @property
    def official(self) -> bool:
        """A whole dated Comprehensive Rules release, a link of the lineage chain
        (it shares its own numbering); the others, copies of one included, are dumps."""
        return (self.format == "cr_document" and bool(self.effective_date) and self.status == "ok"
                and self.numbering_like in ("", self.source_id))


@dataclass(frozen=True, slots=True)
class Item:
    """One element shown on its source's page (noise is left out)."""

    element_id: str
    kind: str
    number: str
    text: str
    term: str
    question: str
    answer: str
    line_start: int


@dataclass(frozen=True, slots=True)
class Version:
    """One row of ``rule_history.csv``: a lineage in one source (or its removal there)."""

    source_id: str
    date: str
    number: str
    change: str
    text: str


@dataclass
class Lineage:
    """One rule followed through the releases."""

    key: str
    canonical: str
    versions: list[Version] = field(default_factory=list)
    first_source: str = ""
    ended: str = ""
    ended_in: str = ""
    split_from: str = ""
    merged_into: str = ""

    @property
    def numbers(self) -> list[str]:
        """The numbers it had, in order, each once."""
        return list(dict.fromkeys(v.number for v in self.versions if v.number))

    @property
    def last_number(self) -> str:
        return self.canonical or (self.numbers[-1] if self.numbers else self.key)


@dataclass
class Dataset:
    """What the site is built from."""

    out: Path
    sources: list[Source]  # in date order; dumps just after the release they share numbering with
    items: dict[str, list[Item]]  # per source, in line order
    xrefs: dict[str, list[tuple[str, str, str]]]  # element id -> (as written, target, target canonical)
    lineages: dict[str, Lineage]  # in the order of rule_history.csv
    by_number: dict[tuple[str, str], str]  # (source id, number as written) -> lineage key
    by_canonical: dict[str, str]  # canonical number -> lineage key
    glossary: list[dict[str, str]]
    sections: dict[str, str]  # canonical section number -> title
    rules: int  # rules in the reference numbering
    run: dict[str, Any]
    changes_md: str
    keyed_by: str  # "lineage_id" or "canonical_number"
    _by_id: dict[str, Source] = field(default_factory=dict, repr=False)

    @property
    def releases(self) -> list[Source]:
        return [s for s in self.sources if s.official]

    def source(self, source_id: str) -> Source | None:
        if len(self._by_id) != len(self.sources):
            self._by_id = {s.source_id: s for s in self.sources}
        return self._by_id.get(source_id)


def rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a published CSV; a missing file, column or cell is a ``SiteError``."""
    header: list[str] = []
    for line, values in records(path, required, header):
        yield line, dict(zip(header, values, strict=True))


def records(path: Path, required: tuple[str, ...], header: list[str]) -> Iterator[tuple[int, list[str]]]:
    """``dataset.records``, its errors told as the site's."""
    try:
        yield from dataset.records(path, required, header)
    except DatasetError as exc:
        raise SiteError(str(exc)) from None


def order_key(src: Source, dates: dict[str, str]) -> tuple[str, int, str]:
    """Date order: the stated date, else just after the release whose numbering the
    source shares, else the start of its wording's era (as ``rule_history.csv`` orders them)."""
    if src.effective_date:
        return (src.effective_date, 0, src.source_id)
    if dates.get(src.numbering_like):
        return (dates[src.numbering_like], 1, src.source_id)
    return (_ERA_START.get(src.era, "9999"), 1, src.source_id)


def _sources(out: Path) -> list[Source]:
    found = [
        Source(r["source_id"], r["format"], r["effective_date"], r["era"], dataset.source_status(r),
               r.get("numbering_like", ""), r)
        for _, r in rows(out / "sources.csv", ("source_id", "format", "effective_date", "era", "status"))
    ]
    dates = {s.source_id: s.effective_date for s in found}
    pages: dict[str, str] = {}
    for s in found:
        other = pages.setdefault(slug(s.source_id), s.source_id)
        if other != s.source_id:
            raise SiteError(f"{out / 'sources.csv'}: sources {other!r} and {s.source_id!r} would share a page name")
    return sorted(found, key=lambda s: order_key(s, dates))


def _items(out: Path, known: set[str]) -> dict[str, list[Item]]:
    path = out / "elements.csv"
    items: dict[str, list[Item]] = defaultdict(list)
    needed = ("element_id", "source_id", "line_start", "kind", "number_as_written", "text", "question", "answer",
              "term")
    header: list[str] = []
    pick: list[int] = []
    # The ledger is the largest table: its cells are picked by position, not through a dict.
    for line, values in records(path, needed, header):
        if not pick:
            pick = [header.index(c) for c in needed]
        eid, sid, start, kind, number, text, question, answer, term = (values[i] for i in pick)
        if kind == "noise":
            continue
        if sid not in known:
            raise SiteError(f"{path}:{line}: source {sid!r} is not in sources.csv")
        try:
            line_start = int(start)
        except ValueError:
            raise SiteError(f"{path}:{line}: line_start {start!r} is not a number") from None
        items[sid].append(Item(eid, kind, number, text, term, question, answer, line_start))
    for found in items.values():
        found.sort(key=lambda it: it.line_start)
    return dict(items)


def _xrefs(out: Path) -> dict[str, list[tuple[str, str, str]]]:
    found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for _, r in rows(out / "xrefs.csv", ("element_id", "target_as_written", "target_canonical")):
        target = r.get("target") or r["target_as_written"]
        found[r["element_id"]].append((r["target_as_written"], target, r["target_canonical"]))
    return dict(found)


def _lineages(out: Path, known: set[str], lent: bool = False) -> tuple[dict[str, Lineage], str]:
    """The lineages of ``rule_history.csv``, with what ``lineages.csv`` says of each.
    With ``lent`` (the run mapped its dumps through a history, as ``run.json`` says),
    ``lineages.csv`` also lists the history's lineages, which no row of this dataset
    is in: those have no page."""
    path = out / "rule_history.csv"
    lineages: dict[str, Lineage] = {}
    keyed_by = "canonical_number"
    for line, r in rows(path, ("canonical_number", "source_id", "effective_date", "number_as_written", "change",
                               "text")):
        if "lineage_id" in r:
            keyed_by = "lineage_id"
        key = r.get("lineage_id") or r["canonical_number"]
        if not key:
            raise SiteError(f"{path}:{line}: a row with neither lineage_id nor canonical_number")
        if r["source_id"] not in known:
            raise SiteError(f"{path}:{line}: source {r['source_id']!r} is not in sources.csv")
        lin = lineages.get(key)
        if lin is None:
            lin = lineages[key] = Lineage(key, r["canonical_number"])
        lin.versions.append(Version(r["source_id"], r["effective_date"], r["number_as_written"], r["change"],
                                    r["text"]))
    table = out / "lineages.csv"
    if table.is_file():
        for line, r in rows(table, ("lineage_id", "canonical_number", "ended", "ended_in", "split_from",
                                    "merged_into")):
            lin = lineages.get(r["lineage_id"])
            if lin is None and lent:
                continue
            if lin is None:
                raise SiteError(f"{table}:{line}: lineage {r['lineage_id']!r} has no row in rule_history.csv")
            lin.canonical, lin.first_source = r["canonical_number"], r.get("first_source", "")
            lin.ended, lin.ended_in = r["ended"], r["ended_in"]
            lin.split_from, lin.merged_into = r["split_from"], r["merged_into"]
    return lineages, keyed_by


def load(out: Path) -> Dataset:
    """Read a published folder; a missing or malformed table raises ``SiteError``."""
    if not out.is_dir():
        raise SiteError(f"{out}: no such folder (run `python -m pipeline ingest --out {out}` first)")
    _verify(out)
    sources = _sources(out)
    known = {s.source_id for s in sources}
    run_path = out / "run.json"
    if not run_path.is_file():  # the run report page is made of it
        raise SiteError(f"{run_path}: not found (is this a published out/ folder? run `python -m pipeline ingest`)")
    try:
        run = json.loads(run_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SiteError(f"{run_path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SiteError(f"{run_path}: cannot be read: {exc}") from None
    if not isinstance(run, dict) or not isinstance(run.get("status"), str):
        raise SiteError(f"{run_path}: not a run report (no status)")
    lineages, keyed_by = _lineages(out, known, lent=bool(run.get("history")))
    by_number: dict[tuple[str, str], str] = {}
    by_canonical: dict[str, str] = {}
    for lin in lineages.values():
        if lin.canonical:
            by_canonical.setdefault(lin.canonical, lin.key)
        for v in lin.versions:
            if v.number:
                by_number.setdefault((v.source_id, v.number), lin.key)
    changes = out / "changes.md"
    glossary = [r for _, r in rows(out / "glossary.csv", ("term", "text", "source_id"))]
    sections = {r["number"]: r["title"] for _, r in rows(out / "sections.csv", ("number", "title"))}
    rules = sum(1 for _ in rows(out / "rules.csv", ("number",)))
    return Dataset(
        out=out, sources=sources, items=_items(out, known), xrefs=_xrefs(out), lineages=lineages,
        by_number=by_number, by_canonical=by_canonical, glossary=glossary, sections=sections, rules=rules,
        run=run,
        changes_md=changes.read_text(encoding="utf-8") if changes.is_file() else "", keyed_by=keyed_by,
    )


def _verify(out: Path) -> None:
    """Each CSV against the sha256 ``datapackage.json`` states, as ``trace`` and
    ``load`` check them (a table edited since it was published made a site of the edit)."""
    if not (out / frames.DESCRIPTOR).is_file():
        return
    try:
        frames.verify(out)
    except DatasetError as exc:
        raise SiteError(str(exc)) from None


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def slug(key: str) -> str:
    """A lineage key as a file name (the site's JavaScript applies the same rule).

    >>> slug("702.89a"), slug("L 12/3")
    ('702.89a', 'L_12_3')
    """
    return _UNSAFE.sub("_", key)


def anchor(number: str) -> str:
    """The anchor of a rule or section number: ``R`` and the number without dots or spaces.

    >>> anchor("702.42a"), anchor("702. 37a"), anchor("502.6")
    ('R70242a', 'R70237a', 'R5026')
    """
    return "R" + number.replace(".", "").replace(" ", "")
