"""Every row the pipeline publishes, derived once from a built corpus.

``tables`` gives each table of the contract (``tables.py``) as rows in its column
order; ``rules_json`` the ``rules.json`` tree, from the corpus and those rows. The
writers (``csv``, ``json``, ``parquet``, ``sqlite``) only serialise what they are
given. ``elements`` and ``sources`` are the corpus's own; the others are derived
from it all, once, when the first of them is asked for. The large tables (the
ledger, renumber_map, rule_history, ...) are not kept as lists at all but made
from the corpus's own records each time they are read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Mapping as Lookup
from functools import cache
from operator import attrgetter, itemgetter
from typing import Any, Generic, Protocol, TypeVar

from pipeline.numbers import cross_references, section_of, sort_key
from pipeline.numbers import normalise as normalise_number
from pipeline.publish.keywords import keyword_rows
from pipeline.publish.meta import Meta
from pipeline.publish.tables import KINDS, TABLES
from pipeline.records import WRITTEN_TWICE, Check, Element, Lineage, Mapping, Source, line_id

COLUMNS: dict[str, tuple[str, ...]] = {t.name: t.columns for t in TABLES}


class Built(Protocol):
    """What publishing reads of a built corpus (``run.Corpus`` is one)."""

    @property
    def sources(self) -> Sequence[Source]: ...
    @property
    def elements(self) -> Sequence[Element]: ...
    @property
    def mappings(self) -> Sequence[Mapping]: ...
    @property
    def reference(self) -> str: ...
    @property
    def lineages(self) -> Sequence[Lineage]: ...
    @property
    def history(self) -> Sequence[dict[str, Any]]: ...
    @property
    def reference_elements(self) -> Sequence[Element]: ...  # when the reference is a history's, not a source
    @property
    def lent_mappings(self) -> Sequence[Mapping]: ...  # a history's releases' rows: read for xrefs, not written
    @property
    def reference_date(self) -> str: ...  # the reference's date when it is a history's release, not a source


def _reference_elements(corpus: Built) -> Sequence[Element]:
    """The reference release's elements: a source's, or (a run on dumps alone) the history's."""
    return corpus.reference_elements or [el for el in corpus.elements if el.source_id == corpus.reference]


Row = tuple[Any, ...]
T = TypeVar("T")


class OnDemand(Generic[T]):
    """A table whose rows are made from ``items`` each time it is read: no list of them is kept."""

    def __init__(self, row: Callable[[T], Row], items: Sequence[T]) -> None:
        self.row, self.items = row, items

    def __iter__(self) -> Iterator[Row]:
        return map(self.row, self.items)


def format_checks(checks: Iterable[Check]) -> str:
    """The ``checks`` column of ``sources.csv``.

    >>> format_checks([Check("glossary_text", True, "5 of 5 entries have text")])
    'glossary_text=ok (5 of 5 entries have text)'
    """
    return "; ".join(str(c) for c in checks)


def _getter(name: str, *columns: str) -> Callable[[Any], Row]:
    """The values of a table's ``columns`` (all of them by default) from a record
    whose attributes are named as the columns are."""
    return attrgetter(*(columns or COLUMNS[name]))


# flags, the last column, is a tuple joined with ";"; the others are the element's attributes.
_ELEMENT_CELLS = _getter("elements", *COLUMNS["elements"][:-1])


def element_row(el: Element) -> Row:
    """An element in the column order of ``elements.csv``."""
    return (*_ELEMENT_CELLS(el), ";".join(el.flags))


# Where each column of ``elements.csv`` is among an element's fields (made, for
# ``element_id``, ``parent_id`` and ``flags``, from the fields ``element_columns`` names).
_FIELD = {name: k for k, name in enumerate(Element._fields)}
_AS_IS = tuple((k, _FIELD[c]) for k, c in enumerate(COLUMNS["elements"]) if c in _FIELD)


def element_columns(els: Sequence[Element]) -> list[Sequence[Any]]:
    """``element_row`` of each of ``els`` (at least one), as the table's columns:
    the elements' fields taken apart in one step, no row made.

    >>> el = Element("cr", 3, 4, "rule", "1.1 Hi", parent_line=2, flags=("a", "b"))
    >>> [list(c) for c in element_columns([el])] == [[v] for v in element_row(el)]
    True
    """
    fields = list(zip(*els, strict=True))
    sources, starts, parents = fields[_FIELD["source_id"]], fields[_FIELD["line_start"]], fields[_FIELD["parent_line"]]
    columns: list[Sequence[Any]] = [()] * len(COLUMNS["elements"])
    for k, field in _AS_IS:
        columns[k] = fields[field]
    columns[_ELEMENT_AT["element_id"]] = list(map(line_id, sources, starts))
    columns[_ELEMENT_AT["parent_id"]] = [line_id(s, p) if p else "" for s, p in zip(sources, parents, strict=True)]
    columns[_ELEMENT_AT["flags"]] = list(map(";".join, fields[_FIELD["flags"]]))
    return columns


_ELEMENT_AT = {c: k for k, c in enumerate(COLUMNS["elements"])}


class Ledger:
    """Rows of ``elements.csv`` (the ledger, or its noise) made from ``items`` each
    time the table is read, as rows (``element_row``) or ``size`` rows at a time
    as columns (``columns``); no list of them is kept."""

    def __init__(self, items: Sequence[Element]) -> None:
        self.items = items

    def __iter__(self) -> Iterator[Row]:
        return map(element_row, self.items)

    def columns(self, size: int) -> Iterator[list[Sequence[Any]]]:
        for start in range(0, len(self.items), size):
            yield element_columns(self.items[start:start + size])


def source_row(src: Source) -> dict[str, Any]:
    row: dict[str, Any] = {
        "source_id": src.source_id, "path": src.path, "sha256": src.sha256, "bytes": src.bytes,
        "encoding": src.encoding, "newline": src.newline, "format": src.format,
        "effective_date": src.effective_date, "era": src.era, "lines": src.lines,
        # The contract's statuses: ok, suspect (read and published, but a self-check
        # failed: its reasons under suspect, not error) or quarantined (not read).
        "status": src.status,
        "error": src.error if src.status == "quarantined" else "", "encoding_evidence": src.evidence,
        "numbering_like": src.numbering_like,
        "flags": ";".join(src.flags),
    }
    row.update({f"lines_{k}": src.line_counts.get(k, 0) for k in KINDS})
    row["checks"] = format_checks(src.checks)
    row["suspect"] = src.error if src.status == "suspect" else ""
    return row


def _qa_sections(elements: Sequence[Element], rule_section: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each QA's section (canonical, as written): that of the rule or section it follows."""
    out: dict[str, tuple[str, str]] = {}
    follows: Element | None = None  # the last rule, section or chapter
    for el in elements:
        if el.kind == "qa":
            out[el.element_id] = _section_after(follows, rule_section)
        elif el.kind in ("rule", "section", "chapter"):
            follows = el
    return out


def _section_after(el: Element | None, rule_section: dict[str, str]) -> tuple[str, str]:
    if el is None or el.kind == "chapter":
        return ("", "")
    written = normalise_number(el.number_as_written)
    if el.kind == "rule":
        return (rule_section.get(el.canonical_number, ""), section_of(written))
    return (el.canonical_number, written)


def _with_xrefs(mappings: Sequence[Mapping], by_xref: dict[tuple[str, str], Mapping]) -> list[Mapping]:
    """Each source's own rows, then its cross-reference-only numbers in number order."""
    extra: dict[str, list[Mapping]] = defaultdict(list)
    for (sid, _), row in by_xref.items():
        extra[sid].append(row)
    out: list[Mapping] = []
    order = list(dict.fromkeys([m.source_id for m in mappings] + list(extra)))
    own: dict[str, list[Mapping]] = defaultdict(list)
    for m in mappings:
        own[m.source_id].append(m)
    for sid in order:
        out += own[sid] + sorted(extra[sid], key=lambda m: sort_key(m.number_as_written))
    return out


def _as_rows(name: str, rows: Iterable[dict[str, Any]]) -> list[Row]:
    """Rows built as dicts (the small tables), in the contract's column order."""
    return list(map(itemgetter(*COLUMNS[name]), rows))


class _Tables(Lookup[str, Iterable[Row]]):
    """Every table of the contract, its rows in column order. ``elements`` and
    ``sources`` are the corpus's own; the others are derived from it all, once,
    when the first of them is asked for, so that the first two can be written
    (and sent to the database process) meanwhile."""

    def __init__(self, corpus: Built) -> None:
        self.corpus = corpus
        self._derived: dict[str, Iterable[Row]] | None = None

    def __getitem__(self, name: str) -> Iterable[Row]:
        if name == CITED:
            return _Cited(self["renumber_map"])
        if name == "elements":
            return Ledger(self.corpus.elements)
        if name == "sources":
            return _as_rows("sources", map(source_row, self.corpus.sources))
        if self._derived is None:
            self._derived = _derived(self.corpus)
        return self._derived[name]

    def __iter__(self) -> Iterator[str]:
        return (table.name for table in TABLES)

    def __len__(self) -> int:
        return len(TABLES)


def tables(corpus: Built) -> Lookup[str, Iterable[Row]]:
    """Every table of the contract, its rows in column order; and ``cited`` (the
    database's index of numbers, ``cited_rows``), which no file of its own holds."""
    return _Tables(corpus)


# The database's table of each number as each source wrote it (``cited_rows``).
CITED = "cited"
CITED_COLUMNS = ("source_id", "number", "kind", "lineage_id", "canonical_number", "map_row", "position")


class _Cited:
    """``cited_rows`` of a ``renumber_map`` table, made when read."""

    def __init__(self, renumber_map: Iterable[Row]) -> None:
        self.renumber_map = renumber_map

    def __iter__(self) -> Iterator[Row]:
        return iter(cited_rows(self.renumber_map))


def cited_rows(renumber_map: Iterable[Row]) -> list[Row]:
    """The rows of the database's ``cited`` table (``CITED_COLUMNS``): each (source,
    number as it wrote it, normalised) once per kind, from ``renumber_map``'s rows in
    their order: a ``rule`` (the first lineage mapped there), a ``section`` (a titled
    row, its last; ``position`` its first: a number written twice keeps its first
    place), or ``twice`` (a number the source wrote for two rules: the row that says
    so). A chapter ("5") is no section to trace. ``map_row`` is the ``renumber_map``
    row it stands for (its rowid in the database: 1 for the first); a section's
    ``canonical_number`` is that row's ('' for none), so that it is found by what it
    is now. In the order of ``position``."""
    at = {c: k for k, c in enumerate(COLUMNS["renumber_map"])}
    pick = itemgetter(at["source_id"], at["number_as_written"], at["title"], at["lineage_id"],
                      at["canonical_number"], at["reason"])
    found: dict[tuple[str, str, str], list[Any]] = {}
    normalised: dict[str, str] = {}  # a few thousand numbers, each written by many sources
    for rowid, row in enumerate(renumber_map, 1):
        source, written, title, lineage, canonical, reason = pick(row)
        number = normalised.get(written)
        if number is None:
            number = normalised[written] = normalise_number(written or "")
        if title:
            if len(number) < 3:
                continue
            key = (source, number, "section")
            position = found[key][6] if key in found else rowid
            found[key] = [source, number, "section", lineage or None, canonical or "", rowid, position]
        elif lineage:
            found.setdefault((source, number, "rule"), [source, number, "rule", lineage, None, rowid, rowid])
        elif (reason or "").startswith(WRITTEN_TWICE):
            key = (source, number, "twice")
            position = found[key][6] if key in found else rowid
            found[key] = [source, number, "twice", None, None, rowid, position]
    return [tuple(r) for r in sorted(found.values(), key=lambda r: r[6])]


_XREF_ROW = ("element_id", "target_as_written", "target_canonical", "target")
assert COLUMNS["xrefs"] == _XREF_ROW, "the rows of xrefs are made in this order"


def _derived(corpus: Built) -> dict[str, Iterable[Row]]:
    """The tables made from the whole corpus (all but ``elements`` and ``sources``)."""
    els = corpus.elements
    section = cache(section_of)  # a few thousand numbers, asked for hundreds of thousands of times
    ref = _reference_elements(corpus)
    ref_lines = {el.line_start: el.canonical_number for el in ref if el.kind == "section"}
    rule_section = {
        el.canonical_number: ref_lines.get(el.parent_line, section(el.canonical_number))
        for el in ref if el.kind == "rule"
    }
    qa_section = _qa_sections(els, rule_section)
    # The sources with an element of each number, and (apart: a section's number
    # may be a rule's too, 103.2 of 103.2a) those with one inside each section.
    mapped_sources: dict[str, set[str]] = defaultdict(set)
    section_sources: dict[str, set[str]] = defaultdict(set)
    texts: dict[str, set[str]] = defaultdict(set)
    for el in els:
        number = el.canonical_number
        if number:
            mapped_sources[number].add(el.source_id)
            section_sources[section(number)].add(el.source_id)
            if el.kind == "rule":
                texts[number].add(el.text)
    qa_count: dict[str, int] = defaultdict(int)
    for sec, _ in qa_section.values():
        qa_count[sec] += 1
    rule_count: dict[str, int] = defaultdict(int)
    lineage_of = {line.canonical_number: line.lineage_id for line in corpus.lineages if line.canonical_number}
    rules = []
    emitted: set[str] = set()
    for el in ref:
        # A number the reference uses twice (702.175 in September 2024) keeps its first rule.
        if el.kind == "rule" and el.canonical_number not in emitted:
            emitted.add(el.canonical_number)
            sec = rule_section[el.canonical_number]
            rule_count[sec] += 1
            rules.append({
                "number": el.canonical_number, "section": sec, "text": el.text,
                "lineage_id": lineage_of.get(el.canonical_number, ""),
                "variants": len(texts[el.canonical_number]),
                "sources": ";".join(sorted(mapped_sources[el.canonical_number])),
            })
    sections = []
    for el in ref:
        if el.kind == "section" and el.canonical_number and el.canonical_number not in emitted:
            emitted.add(el.canonical_number)
            sections.append({
                "number": el.canonical_number, "title": el.text, "chapter": el.canonical_number[:1],
                "rules": rule_count.get(el.canonical_number, 0), "qa": qa_count.get(el.canonical_number, 0),
                "sources": ";".join(sorted(mapped_sources[el.canonical_number]
                                           | section_sources[el.canonical_number])),
            })
    like = {s.source_id: s.numbering_like for s in corpus.sources}
    # Looked up for the run's sources and the releases they share numbering with: of a
    # history's 150,000 rows, a run on a few dumps reads those of one or two releases.
    asked = like.keys() | like.values()
    per_source_map = {
        (m.source_id, normalise_number(m.number_as_written)): m.canonical_number
        for m in (*corpus.mappings, *corpus.lent_mappings) if m.source_id in asked and m.number_as_written
    }
    xref_rows: list[Row] = []
    # Numbers a source writes only inside cross-references get renumber_map rows
    # of their own (method "xref"), mapped through the release it shares numbering with.
    by_xref: dict[tuple[str, str], Mapping] = {}
    for el in els:
        if el.kind in ("rule", "example", "qa", "glossary", "prose"):
            found = cross_references(el.answer if el.kind == "qa" else el.text)
            if not found:  # most elements: nothing more to make
                continue
            source, element_id = el.source_id, el.element_id
            donor = like.get(source, "")
            for written, target in found:
                own = per_source_map.get((source, target))
                mapped = own if own is not None else per_source_map.get((donor, target), "")
                if own is None and (source, target) not in by_xref:
                    why = (
                        "cross-reference to a rule this release does not contain" if donor == source
                        else f"written only as a cross-reference; no rule {target} in {donor or 'any release'}"
                    )
                    by_xref[source, target] = Mapping(
                        source, target, "", mapped, "xref" if mapped else "unmapped",
                        100.0 if mapped else 0.0, "" if mapped else why,
                    )
                xref_rows.append((element_id, written, mapped, target))  # in the columns' order (_XREF_ROW)
    return {
        "sections": _as_rows("sections", sections),
        "rules": _as_rows("rules", rules),
        "renumber_map": OnDemand(_getter("renumber_map"), _with_xrefs(corpus.mappings, by_xref)),
        "qa": _as_rows("qa", (
            {"qa_id": el.element_id, "section": qa_section[el.element_id][0], "question": el.question,
             "answer": el.answer, "source_id": el.source_id, "line_start": el.line_start,
             "line_end": el.line_end, "duplicate_of": el.duplicate_of,
             "section_as_written": qa_section[el.element_id][1]}
            for el in els if el.kind == "qa"
        )),
        "xrefs": xref_rows,
        "glossary": OnDemand(_getter("glossary"), [el for el in els if el.kind == "glossary"]),
        "rule_history": OnDemand(itemgetter(*COLUMNS["rule_history"]), corpus.history),
        "lineages": OnDemand(_getter("lineages"), corpus.lineages),
        "noise": Ledger([el for el in els if el.kind == "noise"]),
        "keywords": _as_rows("keywords", keyword_rows(corpus.sources, els, corpus.mappings, corpus.lineages)),
    }


def _columns(name: str, *columns: str) -> Callable[[Row], Row]:
    """The values of ``columns`` from a row of table ``name``."""
    return itemgetter(*(COLUMNS[name].index(c) for c in columns))


def rules_json(corpus: Built, rows: Lookup[str, Iterable[Row]], meta: Meta) -> dict[str, Any]:
    """The canonical dataset as one tree (CONTRACT.md, ``rules.json``), ``meta`` its ``meta``."""
    variants: dict[str, list[dict[str, Any]]] = defaultdict(list)
    examples: dict[str, list[str]] = defaultdict(list)
    ref = {el.element_id: el for el in _reference_elements(corpus)}
    for el in corpus.elements:
        if el.kind == "rule" and el.canonical_number:
            variants[el.canonical_number].append({
                "source_id": el.source_id, "number_as_written": el.number_as_written,
                "line_start": el.line_start, "line_end": el.line_end, "text": el.text,
            })
    for el in ref.values():
        if el.kind == "example" and el.parent_id in ref:
            examples[ref[el.parent_id].canonical_number].append(el.text)
    refs: dict[str, list[str]] = defaultdict(list)
    for element_id, target in map(_columns("xrefs", "element_id", "target_canonical"), rows["xrefs"]):
        citing = ref.get(element_id)
        if citing is not None and citing.kind == "rule" and target:
            refs[citing.canonical_number].append(target)
    qa_by_section: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for section, *qa in map(_columns("qa", "section", "qa_id", "question", "answer", "source_id"), rows["qa"]):
        qa_by_section[section].append(dict(zip(("qa_id", "question", "answer", "source_id"), qa, strict=True)))
    rules_by_section: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for number, section, text in map(_columns("rules", "number", "section", "text"), rows["rules"]):
        rules_by_section[section].append({
            "number": number, "text": text, "examples": examples.get(number, []),
            "variants": variants.get(number, []), "xrefs": list(dict.fromkeys(refs.get(number, []))),
        })
    return {
        "meta": meta.rules_json(),
        "sections": [
            {"number": number, "title": title, "rules": rules_by_section.get(number, []),
             "qa": qa_by_section.get(number, [])}
            for number, title in map(_columns("sections", "number", "title"), rows["sections"])
        ],
    }
