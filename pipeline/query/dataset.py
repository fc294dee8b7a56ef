"""The one reader of a published ``out/`` for the commands: its CSVs as records,
its files checked, and its database for the queries (the typed DataFrames for
users are ``pipeline.query.frames``).

``records`` streams a published CSV's rows, naming the file and line of a damaged
one (the site, the tools and the history read the CSVs through it).
``Published`` is the light handle the commands use (``resolve``, ``trace``,
``diff``; ``search`` reads the same file): ``rules.sqlite`` opened read-only,
answering each question with a few indexed look-ups instead of reading the
tables whole. ``unchanged`` is its cheap check that the folder is as it was
published: each file's size and time against ``run.json``, and a sha256 only
for a file whose time differs (a copy that kept its bytes).
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import unicodedata
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Any

from pipeline.errors import DatasetError, TraceError
from pipeline.numbers import normalise as normalise_number
from pipeline.query.frames import verify


def source_status(row: Mapping[str, str]) -> str:
    """What a ``sources.csv`` row says of its source: ``quarantined`` (not read),
    ``suspect`` (read and published, but a self-check failed: the reasons are
    under ``suspect``) or ``ok``. A folder published before the contract named
    ``suspect`` as a status wrote such a source ``ok``, its reasons under ``suspect``.

    >>> source_status({"status": "suspect", "suspect": "a.txt: rule_count: ..."}), source_status({"status": "ok"})
    ('suspect', 'ok')
    >>> source_status({"status": "ok", "suspect": "a.txt: rule_count: ..."})  # an older folder
    'suspect'
    """
    return "suspect" if row.get("status") == "ok" and row.get("suspect") else row.get("status", "")



DATABASE = "rules.sqlite"
REPORT = "run.json"
Row = dict[str, str]


def missing(path: Path) -> str:
    """What to say of a published file that is not there (run from another folder, say)."""
    return (f"{path} not found: run `python -m pipeline ingest` first, or give the dataset's folder with --out "
            f"(looked in {path.parent.resolve()})")


def unchanged(out: Path, names: Iterable[str]) -> None:
    """DatasetError unless each of ``names`` in ``out`` is as ``run.json`` says
    it was published: its size, and its time (a file of the right size with
    another time, as a plain copy leaves it, is hashed). Without a readable
    ``run.json`` the CSVs among them are checked against ``datapackage.json``'s
    sha256s instead, as ``verify`` does. A byte changed in place, keeping size
    and time, goes unseen: the price of not reading the files."""
    try:
        report = json.loads((out / REPORT).read_text(encoding="utf-8"))
        published = {item["file"]: item for item in report["outputs"]}
    except (OSError, ValueError, KeyError, TypeError):
        verify(out, set(names))
        return
    for name in names:
        path, item = out / name, published.get(name)
        if not isinstance(item, dict) or "bytes" not in item:
            continue  # a file this run.json does not describe
        stat = path.stat()
        if stat.st_size != item["bytes"]:
            raise DatasetError(f"{path}: {stat.st_size} bytes, not the {item['bytes']} it was published with "
                               f"({REPORT}): changed or damaged since; run `python -m pipeline ingest --full` "
                               "to rebuild it")
        if stat.st_mtime_ns != item.get("mtime_ns", stat.st_mtime_ns) and item.get("sha256"):
            import hashlib  # only for a file copied since

            digest = hashlib.sha256()
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() != item["sha256"]:
                raise DatasetError(f"{path}: does not match its sha256 in {REPORT}: changed or damaged since it "
                                   "was published; run `python -m pipeline ingest --full` to rebuild it")


def records(path: Path, required: Collection[str] = (), header: list[str] | None = None
            ) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each row of a published CSV, streamed; the header is put
    in ``header``. A missing file, column or cell is a ``DatasetError`` naming the file
    and line (every reader of a published folder reads its CSVs through here or ``load``)."""
    header = [] if header is None else header
    if not path.is_file():
        raise DatasetError(f"{path}: not found (is this a published out/ folder? run `python -m pipeline ingest`)")
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header[:] = next(reader, [])
        if not header:
            raise DatasetError(f"{path}:1: empty file, no header row")
        missing = [c for c in required if c not in header]
        if missing:
            raise DatasetError(f"{path}:1: missing column(s) {', '.join(missing)}")
        width = len(header)
        for values in reader:
            if len(values) != width:
                raise DatasetError(f"{path}:{reader.line_num}: {len(values)} fields, the header has {width}")
            yield reader.line_num, values


def rows(out: Path, name: str) -> list[Row]:
    """A published CSV (``name`` without ``.csv``) as dicts of strings, in its order
    (read by ``records``; its errors told as ``TraceError``s, as the queries tell them)."""
    path = out / f"{name}.csv"
    if not path.is_file():
        raise TraceError(missing(path))
    header: list[str] = []
    try:
        return [dict(zip(header, values, strict=True)) for _, values in records(path, (), header)]
    except DatasetError as exc:
        raise TraceError(f"{exc}: run `python -m pipeline ingest` again") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TraceError(f"{path} cannot be read ({exc}): run `python -m pipeline ingest` again") from None


def connect(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only (a missing file is an error, not a new database)."""
    return sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True)


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LETTERED = re.compile(r"\d+\.\d*[A-Za-z]+")


def checked_date(text: str) -> str:
    """``text`` if it is a real date written YYYY-MM-DD, else ValueError (a date
    is compared as text with the releases' dates: "2005-1-1" or "20050101" would
    pick another release than the one meant).

    >>> checked_date("2004-10-01")
    '2004-10-01'
    >>> checked_date("2005-02-30")
    Traceback (most recent call last):
    ...
    ValueError: not a date: '2005-02-30' (give YYYY-MM-DD, e.g. 2004-10-01)
    """
    try:
        if _ISO_DATE.fullmatch(text):
            date.fromisoformat(text)
            return text
    except ValueError:
        pass
    raise ValueError(f"not a date: {text!r} (give YYYY-MM-DD, e.g. 2004-10-01)")


def cited_number(text: str) -> str:
    """A citation as people write it: ``CR 502.32a``, ``rule 502.32a.``, ``502.32a``.

    Rules are lettered in lower case; a capital is taken as the letter it is.

    >>> cited_number("CR 502.32a"), cited_number("rule 702. 37a."), cited_number("702.42A")
    ('502.32a', '702.37a', '702.42a')
    >>> cited_number("702.19a,"), cited_number("(CR 702.19a)"), cited_number("７０２.１９a")
    ('702.19a', '702.19a', '702.19a')
    """
    # As it stood in a sentence ("702.19a,", "(702.19a)"), in full-width digits ("７０２.１９a").
    text = unicodedata.normalize("NFKC", text).strip().rstrip(",;:").strip("()[]")
    words = text.split(None, 1)
    if len(words) == 2 and words[0].casefold().rstrip(".") in ("cr", "rule", "rules", "section"):
        text = words[1]
    number = normalise_number(text.strip())
    return number.lower() if _LETTERED.fullmatch(number) else number


def ending(lid: str, lineage: Callable[[str], Mapping[str, str] | None]) -> tuple[str, str, str]:
    """How lineage ``lid`` ended, where, and the current number its content stands
    under: (``removed``, ``merged`` or "" when it goes on; the release it ended in;
    the number). A merge is followed into the rule that took the content in, and on
    through that rule's own merges; the number is "" when the content's last home
    was removed. ``lineage`` looks a lineage's row up by id (a dict's ``get``, or a
    query of the database).

    >>> rows = {"a": {"ended": "merged", "ended_in": "r2", "merged_into": "b", "canonical_number": ""},
    ...         "b": {"ended": "merged", "ended_in": "r3", "merged_into": "c", "canonical_number": ""},
    ...         "c": {"ended": "", "ended_in": "", "merged_into": "", "canonical_number": "500.4"}}
    >>> ending("a", rows.get), ending("c", rows.get)
    (('merged', 'r2', '500.4'), ('', '', '500.4'))
    """
    first = line = lineage(lid)
    if not first or not first["ended"]:
        return "", "", first["canonical_number"] if first else ""
    seen = {lid}
    while line is not None and line["ended"] == "merged" and line["merged_into"] not in seen:
        seen.add(line["merged_into"])
        line = lineage(line["merged_into"])
    into = line["canonical_number"] if line is not None and not line["ended"] else ""
    return first["ended"], first["ended_in"], into


class Lineages(Mapping[str, Row]):
    """The ``lineages`` rows by id, as a dict would give them: a row looked up
    when asked for (``lineages[lid]``, ``get``, ``in``), the table read whole
    only when it is walked. A query asks for a few of its thousands of rows:
    reading them all took a resolve or a diff 20-40 ms."""

    def __init__(self, read: Callable[..., list[Row]]) -> None:
        self._read = read
        self._asked: dict[str, Row | None] = {}
        self._whole: dict[str, Row] | None = None

    def _row(self, lid: str) -> Row | None:
        if self._whole is not None:
            return self._whole.get(lid)
        if lid not in self._asked:
            found = self._read("SELECT * FROM lineages WHERE lineage_id = ?", lid)
            self._asked[lid] = found[0] if found else None
        return self._asked[lid]

    def __getitem__(self, lid: str) -> Row:
        row = self._row(lid) if isinstance(lid, str) else None
        if row is None:
            raise KeyError(lid)
        return row

    def __contains__(self, lid: object) -> bool:
        return isinstance(lid, str) and self._row(lid) is not None

    def _table(self) -> dict[str, Row]:
        if self._whole is None:
            self._whole = {r["lineage_id"]: r for r in self._read("SELECT * FROM lineages ORDER BY rowid")}
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


class Published:
    """A published folder's ``rules.sqlite``, for lineage questions.

    ``sources`` and ``releases`` (the chain's releases in date order) are read
    whole (a hundred rows or so); ``lineages`` looks a lineage up as asked (and
    reads the table whole when walked), as are a rule's history and the
    numbers each source wrote (``history_of``, ``lineage_at``, ``section_at``,
    ...). ``history``, ``numbers``, ``sections`` and ``twice`` give those
    whole, for tools that walk every lineage. Rows are dicts of strings, as the
    CSVs have them. DatasetError when the file is not a database this version wrote."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / DATABASE
        if not self.path.is_file():
            raise TraceError(missing(self.path))
        self._con = connect(self.path)
        try:
            sources = self._all("SELECT * FROM sources ORDER BY rowid")
            self._all("SELECT 1 FROM cited LIMIT 1")
        except sqlite3.OperationalError as exc:  # no such table: a database of another version
            raise DatasetError(f"{self.path}: {exc}: made by another version; run `python -m pipeline ingest "
                               "--full` to rebuild it") from None
        self.sources: dict[str, Row] = {r["source_id"]: r for r in sources}
        # The chain's releases: each shares its own numbering. A copy of one, a
        # truncated or suspect one, shares another's, though it states a date too.
        chain = [s for s, r in self.sources.items() if r["effective_date"] and r.get("numbering_like", s) == s]
        self.releases = sorted(chain, key=lambda s: (self.sources[s]["effective_date"], s))
        self._histories: dict[str, list[Row]] = {}
        self.lineages = Lineages(self._all)

    @classmethod
    def load(cls, out: Path) -> Published:
        return cls(out)

    def _all(self, sql: str, *args: object) -> list[Row]:
        """The rows of a query as the CSVs have them: every cell a string, an empty one ''.
        ``args`` are its parameters, or one dict of named ones."""
        cursor = self._con.execute(sql, args[0] if len(args) == 1 and isinstance(args[0], dict) else args)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, ["" if v is None else v if type(v) is str else str(v) for v in row], strict=True))
                for row in cursor]

    def numbered_now(self, number: str) -> list[str]:
        """The lineages whose current number is ``number`` ('' for those that have none), in table order."""
        where = "canonical_number = ?" if number else "coalesce(canonical_number, '') = ?"
        return [r["lineage_id"] for r in self._all(f"SELECT lineage_id FROM lineages WHERE {where} ORDER BY rowid",
                                                    number)]

    def split_from(self, lid: str) -> list[Row]:
        """The ``lineages`` rows of the rules cut from lineage ``lid``, in table order."""
        where = "split_from = ?" if lid else "coalesce(split_from, '') = ?"
        return self._all(f"SELECT * FROM lineages WHERE {where} ORDER BY rowid", lid)

    def history_of(self, lid: str) -> list[Row]:
        """The ``rule_history`` rows of a lineage, in their order."""
        if "history" in self.__dict__:
            return self.history.get(lid, [])
        if lid not in self._histories:
            self._histories[lid] = self._all("SELECT * FROM rule_history WHERE lineage_id = ? ORDER BY rowid", lid)
        return self._histories[lid]

    def rows_in(self, old: str, new: str) -> list[Row]:
        """The numbered ``rule_history`` rows of two sources, lineage by lineage in the
        history's order (it is written a lineage at a time), but for a lineage
        the two number and word alike: what can have changed from one to the other.

        The two sources' rows are read in one pass in the table's order and
        compared here: each source's rows are spread over every page of the
        table (a lineage's rows are written together), and finding each row's
        twin in the other source read those pages again, twice the time."""
        cursor = self._con.execute(
            "SELECT * FROM rule_history WHERE rowid IN (SELECT rowid FROM rule_history WHERE source_id IN (?, ?)) "
            "ORDER BY rowid", (old, new))
        names = [d[0] for d in cursor.description]
        lid, sid, number, text = (names.index(c) for c in ("lineage_id", "source_id", "number_as_written", "text"))
        rows = cursor.fetchall()
        # The (number, text) of each lineage in each source: a row whose lineage
        # has the same number (both numbered) and text in the other is alike.
        worded = {(r[lid], r[sid]): (r[number], r[text]) for r in rows}
        other = {old: new, new: old}
        return [dict(zip(names, ["" if v is None else v if type(v) is str else str(v) for v in r], strict=True))
                for r in rows if r[number] is not None
                and worded.get((r[lid], other[r[sid]]), (None, None)) != (r[number], r[text])]

    def lineage_at(self, source: str, number: str) -> str:
        """The lineage of the rule ``source`` numbered ``number`` (normalised), or ''."""
        found = self._all("SELECT lineage_id FROM cited WHERE source_id = ? AND number = ? AND kind = 'rule'",
                          source, number)
        return found[0]["lineage_id"] if found else ""

    def twice_at(self, source: str, number: str) -> str:
        """Why ``number`` is no one rule of ``source`` (it wrote it for two), or ''."""
        found = self._all("SELECT m.reason FROM cited c JOIN renumber_map m ON m.rowid = c.map_row "
                          "WHERE c.source_id = ? AND c.number = ? AND c.kind = 'twice'", source, number)
        return found[0]["reason"] if found else ""

    def rule_now(self, number: str) -> Row | None:
        """The ``rules`` row of current rule ``number`` (its wording now), or None."""
        found = self._all("SELECT number, text FROM rules WHERE number = ?", number)
        return found[0] if found else None

    def section_at(self, source: str, number: str) -> Row | None:
        """The ``renumber_map`` row of section ``number`` of ``source``, or None."""
        found = self._all("SELECT m.* FROM cited c JOIN renumber_map m ON m.rowid = c.map_row "
                          "WHERE c.source_id = ? AND c.number = ? AND c.kind = 'section'", source, number)
        return found[0] if found else None

    def having(self, number: str, kind: str = "rule") -> list[tuple[str, str]]:
        """(source, lineage) of every source that wrote ``number`` for a ``rule`` (or a ``section``)."""
        return [(r["source_id"], r["lineage_id"]) for r in
                self._all("SELECT source_id, lineage_id FROM cited WHERE number = ? AND kind = ? ORDER BY position",
                          number, kind)]

    def sections_now(self, current: str) -> list[Row]:
        """The ``renumber_map`` rows of every source's sections that are now ``current``
        ('' for none), in ``renumber_map``'s order."""
        return self._all("SELECT m.* FROM cited c JOIN renumber_map m ON m.rowid = c.map_row "
                         "WHERE c.kind = 'section' AND c.canonical_number = ? ORDER BY c.position", current)

    # Whole tables, for the tools that walk every lineage (and the tests' hand-traced keys).

    @cached_property
    def history(self) -> dict[str, list[Row]]:
        history: dict[str, list[Row]] = {}
        for r in self._all("SELECT * FROM rule_history ORDER BY rowid"):
            history.setdefault(r["lineage_id"], []).append(r)
        return history

    def _cited(self, kind: str, column: str) -> dict[tuple[str, str], Any]:
        sql = (f"SELECT c.source_id, c.number, {column} AS value FROM cited c JOIN renumber_map m "
               "ON m.rowid = c.map_row WHERE c.kind = ? ORDER BY c.position")
        return {(r["source_id"], r["number"]): r["value"] for r in self._all(sql, kind)}

    @cached_property
    def numbers(self) -> dict[tuple[str, str], str]:
        """(source, number) -> lineage id."""
        return self._cited("rule", "c.lineage_id")

    @cached_property
    def twice(self) -> dict[tuple[str, str], str]:
        """(source, number) -> why it is no one rule (renumber_map's reason)."""
        return self._cited("twice", "m.reason")

    @cached_property
    def sections(self) -> dict[tuple[str, str], Row]:
        """(source, number) -> its renumber_map row."""
        every = self._all("SELECT m.* FROM cited c JOIN renumber_map m ON m.rowid = c.map_row "
                          "WHERE c.kind = 'section' ORDER BY c.position")
        return {(r["source_id"], normalise_number(r["number_as_written"])): r for r in every}

    # Where a number or a date points.

    def release_on(self, as_of: str) -> str:
        """The newest official release in effect on a date (YYYY-MM-DD)."""
        try:
            checked_date(as_of)
        except ValueError as exc:
            raise TraceError(str(exc)) from None
        before = [s for s in self.releases if self.sources[s]["effective_date"] <= as_of]
        if not before:
            first = f"the first is {self.releases[0]}" if self.releases else "the dataset has no dated release"
            raise TraceError(f"no release in effect on {as_of} ({first})")
        return before[-1]

    def known(self, source: str) -> str:
        """``source``, if the dataset has it (an empty one: none asked for)."""
        if source and source not in self.sources:
            raise TraceError(f"no source {source!r} in the published dataset")
        return source

    def find(self, number: str, source: str = "", as_of: str = "") -> str:
        """The lineage of a rule number: as ``source`` wrote it, as the release in
        effect on ``as_of`` numbered it, or else a current number (or an old one
        that only one lineage ever had)."""
        number = cited_number(number)
        if not number:
            raise TraceError("no rule number given")
        if as_of:
            source = self.release_on(as_of)
        if self.known(source):
            lid = self.lineage_at(source, number)
            twice = "" if lid else self.twice_at(source, number)
            if twice:
                raise TraceError(f"{source} has {number} {twice.removeprefix('written ')}: "
                                 "give the current number of the one you mean")
            if not lid:
                sections = {s for s, _ in self.having(number, "section")}
                elsewhere = [sid for sid in self.releases if sid in sections]
                if elsewhere:  # a section number of other releases (702.42 in 2004)
                    raise TraceError(f"{source} has no rule or section {number} (a section of {elsewhere[0]} to "
                                     f"{elsewhere[-1]}: give a date or source in those years)")
                rules = {s for s, _ in self.having(number)}
                having = [sid for sid in self.releases if sid in rules]
                if having:  # cited before it was written, or after it ended (502.32a in July 2003)
                    raise TraceError(f"{source} has no rule {number} (releases {having[0]} to {having[-1]} have "
                                     "one: give a date or source in those years)")
                raise TraceError(f"{source} has no rule {number}")
            return lid
        current = self.numbered_now(number)
        if current:
            return current[0]
        had = sorted({lid for _, lid in self.having(number)})
        if len(had) == 1:
            return had[0]
        if not had:
            raise TraceError(f"no rule {number} in any source")
        spans = "; ".join(f"{lid} ({self._span(lid, number)})" for lid in had[:6])
        raise TraceError(f"{number} was {len(had)} different rules over the years: {spans}. "
                         "Say which with --source ID or --as-of YYYY-MM-DD")

    def _span(self, lid: str, number: str) -> str:
        dates = [r["effective_date"] for r in self.history_of(lid)
                 if normalise_number(r["number_as_written"]) == number and r["effective_date"]]
        return f"{dates[0]}..{dates[-1]}" if dates else "undated sources"
