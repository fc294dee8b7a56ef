"""The history a run maps its dumps through when ``raw/`` lacks the releases.

A folder of scraped dumps alone (FAQ and web pages, cut copies) has no release to
attach them to. The package ships the history it was built with
(``pipeline/data/history.json.gz``): each official release of the chain (id, date,
era, sha256), its rules, sections, chapters, examples and glossary (what attaching,
aligning and the reference's tables read: numbers and cleaned wordings, each
distinct wording once), each rule's lineage and each section's current number, and
the lineages themselves. ``--history OUT`` reads the same from a dataset published
earlier. ``make history`` makes the shipped file from a full ingest of ``raw/``.

The releases come back as ``Source`` records and elements, the way a run reads
them, so the numbering stage treats them as releases like any other: with no
release in ``raw/`` it maps through the history's lineages as they are; with a
release in ``raw/`` newer than the history's newest, the history's releases that
``raw/`` lacks join its chain, and the steps are aligned as ever.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, cast

from pipeline.errors import DatasetError
from pipeline.lineage.chain import Lineages
from pipeline.numbers import normalise as normalise_number
from pipeline.records import Element, Lineage, Source

FORMAT = 1
SHIPPED = "history.json.gz"
# The kinds a release keeps in the history: what attach, align, the lineage steps and
# the reference's rules, sections and rules.json read.
KINDS = ("chapter", "section", "rule", "example", "glossary")
T = TypeVar("T")
LINEAGE_FIELDS = ("lineage_id", "canonical_number", "first_source", "first_number", "last_source", "last_number",
                  "ended", "ended_in", "split_from", "merged_into")


@dataclass(frozen=True)
class History:
    """A history's compact form, read: its releases oldest first, each with its
    elements (lines numbered from 1 in their order), and what the chain said of
    them: the lineage of each rule element (by release and line), each section's
    current number, and the lineages. The elements are made when first asked for
    (a run whose ``raw/`` holds the releases only asks for the newest's date)."""

    name: str  # what run.json calls it: "shipped cr-2026-08-07", or the folder
    doc: dict[str, Any] = field(repr=False)
    digest: str = ""  # the sha256 of its compact form

    @property
    def newest(self) -> tuple[str, str]:
        """The newest release's (id, date)."""
        last = self.doc["releases"][-1]
        return last["id"], last["date"]

    @cached_property
    def _read(self) -> tuple[list[tuple[Source, list[Element]]], dict[tuple[str, int], str],
                             dict[tuple[str, str], str], list[Lineage]]:
        texts: list[str] = self.doc["texts"]
        lineages = [Lineage(**dict(zip(LINEAGE_FIELDS, row, strict=True))) for row in self.doc["lineages"]]
        releases: list[tuple[Source, list[Element]]] = []
        of_element: dict[tuple[str, int], str] = {}
        sections: dict[tuple[str, str], str] = {}
        for rel in self.doc["releases"]:
            sid = rel["id"]
            src = Source(sid, f"{sid}.txt", rel["sha256"], 0, format="cr_document", effective_date=rel["date"],
                         era=rel["era"], numbering_like=sid)
            els = []
            for line, (kind, number, text, parent, term, extra) in enumerate(rel["elements"], start=1):
                els.append(Element(sid, line, line, kind, texts[text], number_as_written=number, parent_line=parent,
                                   text=texts[text], term=texts[term]))
                if kind == "rule" and isinstance(extra, int) and extra >= 0:
                    of_element[sid, line] = lineages[extra].lineage_id
                elif kind == "section" and number:
                    sections.setdefault((sid, normalise_number(number)), extra)
            releases.append((src, els))
        return releases, of_element, sections, lineages

    @property
    def releases(self) -> list[tuple[Source, list[Element]]]:
        return self._read[0]

    @cached_property
    def _kept(self) -> dict[Hashable, Any]:
        return {}

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make()`` returned the first time this history was asked for ``key``.
        For the work a run mapping through the history as a whole (its lineages as
        they are) does on the history's releases alone, the same for every such run:
        a process that runs the job again and again (the tests) does it once. What it
        keeps is shared: never to be changed. (``apart_from`` makes a new history,
        with nothing kept.)"""
        kept = self._kept
        if key not in kept:
            kept[key] = make()
        return cast(T, kept[key])

    def apart_from(self, taken: set[str]) -> History:
        """The history with each release whose id a source of the run has (a cut copy
        saved as ``cr-2017-08-25.txt``) called ``history/<id>``: a source's rows are
        its own, never a release's of the same name. (A raw file's id has no ``/``
        unless it ends with its extension, so the new ids are free.)"""
        releases = self.doc["releases"]
        if not any(rel["id"] in taken for rel in releases):
            return self
        return replace(self, doc=dict(self.doc, releases=[
            dict(rel, id=f"history/{rel['id']}") if rel["id"] in taken else rel for rel in releases]))

    @cached_property
    def _by_number(self) -> dict[tuple[str, str], str]:
        """Each rule's lineage by release and number as written, made once a history."""
        releases, of_element, _, _ = self._read
        by_number: dict[tuple[str, str], str] = {}
        for src, els in releases:
            for el in els:
                lid = of_element.get((src.source_id, el.line_start))
                if lid:
                    by_number.setdefault((src.source_id, normalise_number(el.number_as_written)), lid)
        return by_number

    def followed(self) -> Lineages:
        """The releases followed as the chain that made the history followed them
        (what ``chain.follow`` would make of them again, without aligning a step).
        The run's own to change: every table is a copy of the history's, whose index
        is made once a history (``shipped()`` reads the shipped one once a process)."""
        releases, of_element, sections, lineages = self._read
        return Lineages(lineages={ln.lineage_id: replace(ln) for ln in lineages}, of_element=dict(of_element),
                        by_number=dict(self._by_number), sections=dict(sections),
                        releases=[src.source_id for src, _ in releases])


def _compact(releases: list[dict[str, Any]], lineages: list[list[str]]) -> bytes:
    """The compact form, deterministic bytes: gzip'd JSON (no time, no name in the
    gzip header), every distinct string of the elements once, in a ``texts`` table."""
    texts: dict[str, int] = {}

    def ref(text: str) -> int:
        return texts.setdefault(text, len(texts))

    for rel in releases:
        rel["elements"] = [[kind, number, ref(text), parent, ref(term), extra]
                           for kind, number, text, parent, term, extra in rel["elements"]]
    doc = {"format": FORMAT, "texts": list(texts), "releases": releases, "lineages": lineages}
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return gzip.compress(data, compresslevel=9, mtime=0)


def compact_of(out: Path) -> bytes:
    """The compact form of the history a published folder holds: its chain releases
    (``numbering_like`` their own id), their elements, and the lineages. A folder
    with no release (a run on dumps alone) has its history's name in ``run.json``
    and no history of its own: a ``DatasetError``."""
    from pipeline.query.dataset import records

    def table(name: str, *required: str) -> list[dict[str, str]]:
        header: list[str] = []
        return [dict(zip(header, values, strict=True))
                for _, values in records(out / f"{name}.csv", required, header)]

    chain = sorted((s for s in table("sources", "source_id", "numbering_like", "effective_date", "era", "sha256")
                    if s["source_id"] and s["numbering_like"] == s["source_id"]),
                   key=lambda s: (s["effective_date"], s["source_id"]))
    if not chain:
        raise DatasetError(f"{out / 'sources.csv'}: no official release in this dataset, so no history to map "
                           "through: name a dataset published from a raw folder that held the releases")
    ids = {s["source_id"] for s in chain}
    lineage_rows = table("lineages", *LINEAGE_FIELDS)
    index = {row["lineage_id"]: k for k, row in enumerate(lineage_rows)}
    # Each lineage's rule in each release (one at most), by number and wording.
    lineage_at: dict[tuple[str, str, str], int] = {}
    for row in table("rule_history", "lineage_id", "source_id", "number_as_written", "text"):
        if row["source_id"] in ids and row["number_as_written"]:
            lineage_at.setdefault((row["source_id"], row["number_as_written"], row["text"]), index[row["lineage_id"]])
    kept: dict[str, list[dict[str, str]]] = {sid: [] for sid in ids}
    for _, values in _element_rows(out, kept):
        kept[values["source_id"]].append(values)
    releases = []
    for src in chain:
        sid = src["source_id"]
        els = sorted(kept[sid], key=lambda e: int(e["line_start"]))
        position = {e["element_id"]: k + 1 for k, e in enumerate(els)}
        rows = []
        for e in els:
            extra: int | str = ""
            if e["kind"] == "rule" and e["number_as_written"]:
                extra = lineage_at.get((sid, e["number_as_written"], e["text"]), -1)
            elif e["kind"] == "section":
                extra = e["canonical_number"]
            rows.append((e["kind"], e["number_as_written"], e["text"], position.get(e["parent_id"], 0), e["term"],
                         extra))
        releases.append({"id": sid, "date": src["effective_date"], "era": src["era"], "sha256": src["sha256"],
                         "elements": rows})
    return _compact(releases, [[row[f] for f in LINEAGE_FIELDS] for row in lineage_rows])


def _element_rows(out: Path, kept: dict[str, list[dict[str, str]]]) -> Any:
    """The elements of the releases in ``kept`` of the kinds a history keeps, streamed."""
    from pipeline.query.dataset import records

    columns = ("element_id", "source_id", "line_start", "kind", "number_as_written", "canonical_number",
               "parent_id", "text", "term")
    header: list[str] = []
    at: list[int] = []
    for line, values in records(out / "elements.csv", columns, header):
        at = at or [header.index(c) for c in columns]
        row = {c: values[k] for c, k in zip(columns, at, strict=True)}
        if row["source_id"] in kept and row["kind"] in KINDS:
            yield line, row


def load(data: bytes, name: str) -> History:
    """A history from its compact form; ``name`` is what run.json will call it."""
    try:
        doc = json.loads(gzip.decompress(data))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"format {doc.get('format') if isinstance(doc, dict) else None!r}, "
                             f"this pipeline reads {FORMAT}")
        if not doc["releases"] or not all(isinstance(r, dict) for r in doc["releases"]):
            raise ValueError("no release")
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise DatasetError(f"{name}: not a history this pipeline can read ({exc})") from None
    return History(name, doc, hashlib.sha256(data).hexdigest())


def shipped_bytes() -> bytes:
    """The compact form the package ships (empty when it ships none)."""
    try:
        return resources.files("pipeline").joinpath("data", SHIPPED).read_bytes()
    except (FileNotFoundError, OSError):
        return b""


@cache
def shipped() -> History | None:
    """The history the package ships with (read once a process), or None."""
    data = shipped_bytes()
    if not data:
        return None
    history = load(data, SHIPPED)
    return replace(history, name=f"shipped {history.newest[0]}")


def published(out: Path) -> History:
    """The history of a dataset published earlier (``--history OUT``)."""
    return load(compact_of(out), str(out))


def to_use(raw_releases: Sequence[Source], history: History | None) -> tuple[History | None, bool]:
    """Whether a run uses ``history``, and how: (history, whole). Whole (its
    lineages as they are) when ``raw/`` holds no release; as releases joining
    the chain when ``raw/``'s newest is newer than the history's (a stale
    history) and lacks some of its releases; not at all otherwise: ``raw/``'s
    releases are the history then (and the history's are not read)."""
    if history is None:
        return None, False
    if not raw_releases:
        return history, True
    newest = max(s.effective_date for s in raw_releases)
    dates = {s.effective_date for s in raw_releases}
    if newest > history.newest[1] and any(rel["date"] not in dates for rel in history.doc["releases"]):
        return history, False
    return None, False


def write(out: Path, dest: Path) -> int:
    """Write the compact form of ``out``'s history to ``dest`` (replaced whole,
    never half-written); its size in bytes."""
    data = compact_of(out)
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return len(data)


if __name__ == "__main__":  # make history: python -m pipeline.lineage.history OUT DEST
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python -m pipeline.lineage.history OUT DEST (OUT: a published folder)")
    try:
        size = write(Path(sys.argv[1]), Path(sys.argv[2]))
    except (DatasetError, OSError) as exc:
        sys.exit(f"error: {exc}")
    print(f"{sys.argv[2]}: {size} bytes")
