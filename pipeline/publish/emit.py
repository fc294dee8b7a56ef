"""Write the contract's tables (CSV and ``rules.json``), their Parquet copies and
``rules.sqlite`` from a built corpus.

Each table's rows are made once, as tuples in the contract's column order; the
large tables (the ledger, renumber_map, rule_history, ...) are not kept as lists
at all but made from the corpus's own records each time they are read. They are
written as the csv module writes them (``\\n`` line ends, stable order), hashed on
their way to the file. Meanwhile a process of its own loads the same rows into
SQLite as they are written (``database.Building``), and a thread copies each
CSV, once written, to Parquet (Arrow reads and writes outside the GIL) while the
next one is written.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Mapping as Lookup
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial
from itertools import islice
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pipeline import workers
from pipeline.corpus import xrefs
from pipeline.corpus.dedupe import normalise_number
from pipeline.ingest.checks import format_checks
from pipeline.numbers import section_of, sort_key
from pipeline.publish import parquet
from pipeline.publish import sqlite as database
from pipeline.publish.datapackage import sha256_of, validate_rules_json
from pipeline.publish.tables import BY_NAME, KINDS, TABLES
from pipeline.records import Element, Mapping, Source
from pipeline.run import Corpus

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

SCHEMA_VERSION = "1.0"
COLUMNS: dict[str, tuple[str, ...]] = {t.name: t.columns for t in TABLES}
RULES_JSON = "rules.json"
DATABASE = "rules.sqlite"


Row = tuple[Any, ...]
T = TypeVar("T")


class OnDemand(Generic[T]):
    """A table whose rows are made from ``items`` each time it is read: no list of them is kept."""

    def __init__(self, row: Callable[[T], Row], items: Sequence[T]) -> None:
        self.row, self.items = row, items

    def __iter__(self) -> Iterator[Row]:
        return map(self.row, self.items)


@dataclass(frozen=True, slots=True)
class Written:
    """What ``write`` wrote: rows and sha256 of each file, by path relative to the folder."""

    rows: dict[str, int]
    sha256: dict[str, str]


class _HashingFile(io.RawIOBase):
    """A new file that hashes the bytes written to it (so nobody reads it back to hash it)."""

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


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Row],
              also: Callable[[list[Row]], None] | None = None) -> tuple[int, str]:
    """Write a header and rows; returns the rows written and the file's sha256.
    ``also`` is given the rows too, 10,000 at a time, as they are written.

    The bytes are those of the csv module (``QUOTE_MINIMAL``, ``\\n`` line ends), which
    writes the same as pandas' ``to_csv`` here, four times faster (a test holds the two
    equal). They are made a column of 10,000 rows at a time (``_cells``), by loops that
    run in C: one Python call per cell took two thirds of the time."""
    n = 0
    sink = _HashingFile(path)
    quoted = _Quoted()
    with io.TextIOWrapper(io.BufferedWriter(sink, 1 << 20), encoding="utf-8", newline="") as fh:
        fh.write(",".join(map(_cell, columns)) + "\n")
        for chunk in _chunks(rows, 10_000):
            columns_of = (_cells(column, quoted) for column in zip(*chunk, strict=True))
            lines = map(",".join, zip(*columns_of, strict=True))
            fh.write("\n".join(lines) + "\n")
            if also is not None:
                also(chunk)
            n += len(chunk)
    return n, sink.digest.hexdigest()


class _Quoted(dict[str, str]):
    """Cells of text that needs quoting, by text, each made by ``_cell`` once:
    releases repeat most wordings of the one before. Emptied when it reaches
    ``limit`` texts, so that its memory stays bounded on any history."""

    def __init__(self, limit: int = 1 << 17) -> None:
        super().__init__()
        self.limit = limit

    def __missing__(self, text: str) -> str:
        if len(self) >= self.limit:
            self.clear()
        cell = self[text] = _cell(text)
        return cell


def _cells(values: Sequence[Any], quoted: _Quoted) -> Sequence[str]:
    """``[_cell(v) for v in values]``, for one column of rows: text that needs no
    quoting (none of its cells holds a quote, comma or line break) is its own cell,
    numbers are ``str``; only a column of another mix goes a value at a time."""
    try:
        joined = "".join(values)
    except TypeError:  # not all text
        types = set(map(type, values))
        if str not in types and type(None) not in types:
            return list(map(str, values))
        return list(map(_cell, values))
    if '"' in joined or "," in joined or "\n" in joined or "\r" in joined:
        return list(map(quoted.__getitem__, values))
    return values


def _cell(value: Any) -> str:
    """A CSV cell: ``None`` is empty; a string is quoted (its quotes doubled) when it
    holds a comma, a quote or a line break (a carriage return too, which the csv
    module of Python 3.11 leaves bare, and readers take for the end of a line).

    >>> [_cell(v) for v in (None, 97.0, 3, "a b", "a,b", 'a "b" c', "a\\nb")]
    ['', '97.0', '3', 'a b', '"a,b"', '"a ""b"" c"', '"a\\nb"']
    """
    if isinstance(value, str):
        if '"' in value:
            return '"' + value.replace('"', '""') + '"'
        return '"' + value + '"' if "," in value or "\n" in value or "\r" in value else value
    return "" if value is None else str(value)


def _chunks(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """``rows`` in lists of ``size`` (the last one shorter), taken by ``islice`` in C."""
    it = iter(rows)
    while batch := list(islice(it, size)):
        yield batch


def _getter(name: str, *columns: str) -> Callable[[Any], Row]:
    """The values of a table's ``columns`` (all of them by default) from a record
    whose attributes are named as the columns are."""
    return attrgetter(*(columns or COLUMNS[name]))


# flags, the last column, is a tuple joined with ";"; the others are the element's attributes.
_ELEMENT_CELLS = _getter("elements", *COLUMNS["elements"][:-1])


def element_row(el: Element) -> Row:
    """An element in the column order of ``elements.csv``."""
    return (*_ELEMENT_CELLS(el), ";".join(el.flags))


def source_row(src: Source) -> dict[str, Any]:
    row: dict[str, Any] = {
        "source_id": src.source_id, "path": src.path, "sha256": src.sha256, "bytes": src.bytes,
        "encoding": src.encoding, "newline": src.newline, "format": src.format,
        "effective_date": src.effective_date, "era": src.era, "lines": src.lines,
        # The contract's two statuses: read (ok) or not (quarantined). A source that
        # was read but failed a self-check is ok, with its reasons under suspect.
        "status": "quarantined" if src.status == "quarantined" else "ok",
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

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._derived: dict[str, Iterable[Row]] | None = None

    def __getitem__(self, name: str) -> Iterable[Row]:
        if name == "elements":
            return OnDemand(element_row, self.corpus.elements)
        if name == "sources":
            return _as_rows("sources", map(source_row, self.corpus.sources))
        if self._derived is None:
            self._derived = _derived(self.corpus)
        return self._derived[name]

    def __iter__(self) -> Iterator[str]:
        return (table.name for table in TABLES)

    def __len__(self) -> int:
        return len(TABLES)


def tables(corpus: Corpus) -> Lookup[str, Iterable[Row]]:
    """Every table of the contract, its rows in column order."""
    return _Tables(corpus)


def _derived(corpus: Corpus) -> dict[str, Iterable[Row]]:
    """The tables made from the whole corpus (all but ``elements`` and ``sources``)."""
    els = corpus.elements
    section = cache(section_of)  # a few thousand numbers, asked for hundreds of thousands of times
    ref = [el for el in els if el.source_id == corpus.reference]
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
    per_source_map = {
        (m.source_id, normalise_number(m.number_as_written)): m.canonical_number
        for m in corpus.mappings if m.number_as_written
    }
    like = {s.source_id: s.numbering_like for s in corpus.sources}
    xref_rows = []
    # Numbers a source writes only inside cross-references get renumber_map rows
    # of their own (method "xref"), mapped through the release it shares numbering with.
    by_xref: dict[tuple[str, str], Mapping] = {}
    for el in els:
        if el.kind in ("rule", "example", "qa", "glossary", "prose"):
            body = el.answer if el.kind == "qa" else el.text
            for written, target in xrefs.find(body):
                own = per_source_map.get((el.source_id, target))
                mapped = own if own is not None else per_source_map.get((like.get(el.source_id, ""), target), "")
                if own is None and (el.source_id, target) not in by_xref:
                    donor = like.get(el.source_id, "")
                    why = (
                        "cross-reference to a rule this release does not contain" if donor == el.source_id
                        else f"written only as a cross-reference; no rule {target} in {donor or 'any release'}"
                    )
                    by_xref[el.source_id, target] = Mapping(
                        el.source_id, target, "", mapped, "xref" if mapped else "unmapped",
                        100.0 if mapped else 0.0, "" if mapped else why,
                    )
                xref_rows.append({
                    "element_id": el.element_id, "target_as_written": written,
                    "target_canonical": mapped, "target": target,
                })
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
        "xrefs": _as_rows("xrefs", xref_rows),
        "glossary": OnDemand(_getter("glossary"), [el for el in els if el.kind == "glossary"]),
        "rule_history": OnDemand(itemgetter(*COLUMNS["rule_history"]), corpus.history),
        "lineages": OnDemand(_getter("lineages"), corpus.lineages),
        "noise": OnDemand(element_row, [el for el in els if el.kind == "noise"]),
    }


def _columns(name: str, *columns: str) -> Callable[[Row], Row]:
    """The values of ``columns`` from a row of table ``name``."""
    return itemgetter(*(COLUMNS[name].index(c) for c in columns))


def rules_json(corpus: Corpus, rows: Lookup[str, Iterable[Row]]) -> dict[str, Any]:
    """The canonical dataset as one tree (CONTRACT.md, ``rules.json``)."""
    variants: dict[str, list[dict[str, Any]]] = defaultdict(list)
    examples: dict[str, list[str]] = defaultdict(list)
    ref = {el.element_id: el for el in corpus.elements if el.source_id == corpus.reference}
    for el in corpus.elements:
        if el.kind == "rule" and el.canonical_number:
            variants[el.canonical_number].append({
                "source_id": el.source_id, "number_as_written": el.number_as_written,
                "line_start": el.line_start, "line_end": el.line_end, "text": el.text,
            })
        if el.kind == "example" and el.source_id == corpus.reference and el.parent_id in ref:
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
        "meta": {
            "schema_version": SCHEMA_VERSION,
            "reference": corpus.reference,
            "generated_from": sorted(s.sha256 for s in corpus.sources if s.status != "quarantined"),
        },
        "sections": [
            {"number": number, "title": title, "rules": rules_by_section.get(number, []),
             "qa": qa_by_section.get(number, [])}
            for number, title in map(_columns("sections", "number", "title"), rows["sections"])
        ],
    }


def write_json(path: Path, doc: dict[str, Any]) -> str:
    """Write ``doc`` as ``json.dumps`` does (compact, UTF-8) with a newline after,
    its sections one at a time rather than as one string; returns the file's sha256."""
    sink = _HashingFile(path)
    with io.TextIOWrapper(io.BufferedWriter(sink, 1 << 20), encoding="utf-8", newline="") as fh:
        fh.write("{")
        for i, (key, value) in enumerate(doc.items()):
            fh.write("," * bool(i) + _compact(key) + ":")
            if key == "sections":  # nearly all of the file
                fh.write("[")
                for j, section in enumerate(value):
                    fh.write("," * bool(j) + _compact(section))
                fh.write("]")
            else:
                fh.write(_compact(value))
        fh.write("}\n")
    return sink.digest.hexdigest()


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _parquet_copy(out: Path, name: str) -> tuple[str, int, str]:
    """Copy a written CSV to Parquet: (its path relative to ``out``, rows, sha256)."""
    table = BY_NAME[name]
    rows = parquet.copy(out, table)
    path = parquet.path_of(out, table)
    return path.relative_to(out).as_posix(), rows, sha256_of(path)


def write(corpus: Corpus, out: Path) -> Written:
    """Write every table (CSV and Parquet), ``rules.json`` and ``rules.sqlite`` into ``out``.

    The database is built in a second process meanwhile, from the rows as they
    are written; each Parquet copy is made in a thread as soon as its CSV is
    written."""
    with workers.fewer_collections():
        return _write(corpus, out)


def _write(corpus: Corpus, out: Path) -> Written:
    out.mkdir(parents=True, exist_ok=True)
    data = tables(corpus)
    rows: dict[str, int] = {}
    sha256: dict[str, str] = {}
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet")
    building: database.Building | None = None
    try:
        building = database.build_aside(out / DATABASE, corpus.reference)
        copies: list[Future[tuple[str, int, str]]] = []
        for name in sorted(data, key=[t.name for t in TABLES].index):  # in the order the database loads them
            file = f"{name}.csv"
            rows[file], sha256[file] = write_csv(out / file, COLUMNS[name], data[name], partial(building.feed, name))
            building.written(name)
            copies.append(pool.submit(_parquet_copy, out, name))
        doc = rules_json(corpus, data)
        validate_rules_json(doc)
        rows[RULES_JSON] = sum(len(s["rules"]) for s in doc["sections"])
        sha256[RULES_JSON] = write_json(out / RULES_JSON, doc)
        del doc
        for copied in copies:
            path, rows[path], sha256[path] = copied.result()
        pool.shutdown()
        # Inside the try: a Ctrl-C while waiting for the database must stop its
        # process too, or it writes on into a staging folder being removed.
        sha256[DATABASE] = building.wait()
    except BaseException:
        # Whatever failed (a full disk, Ctrl-C, SIGTERM), the staging folder is
        # about to be removed: the database process is ended at once, not waited
        # for (a Ctrl-C during that wait had left it writing on), and the first
        # failure is the one reported.
        try:
            pool.shutdown(cancel_futures=True)
        finally:
            if building is not None:
                building.stop()
        raise
    return Written(rows, sha256)
