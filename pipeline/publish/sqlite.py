"""``rules.sqlite``: every table of the contract, keyed and indexed, with full-text search.

The FTS5 index ``search`` holds every distinct wording of a rule, glossary
entry or Q&A in any source, once (the first element with it; ``duplicate_of``
points the others at it), under its canonical number and with ``current`` set
when the reference has it; ``search_in`` says which sources have each wording
and how they numbered it. A search lists the current rules first, then the
current glossary, then older wordings and Q&A; ``release`` searches one
source's own wordings. ``unicode61`` with diacritics removed lets "Dandan"
find "Dandân" as well as "Dandân" itself. A query that is a number lists the
rules of that number first (``search_in`` has each source's own numbers).

Each of ``rules`` and ``glossary`` has a full-text index of its own tied to it
(``rules_fts``, ``glossary_fts``: ``content=`` the table, as ``sqlite-utils
enable-fts`` makes them), so that Datasette's ``_search`` works on those tables;
``meta`` (key, value) says what made the file (``publish.meta``).

Beside the contract's tables, what the lineage queries (``pipeline.query``)
look up: ``cited``, each number as a source wrote it (normalised, as a
citation is read) with the rule or section it is there, and an index of
``rule_history`` by source; a query reads a few rows, never the whole tables.
The searching itself is ``pipeline.query.search``.
"""

from __future__ import annotations

import errno
import hashlib
import multiprocessing
import queue
import signal
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from itertools import chain
from pathlib import Path
from typing import Any

from pipeline import __version__, workers
from pipeline.publish.meta import SCHEMA_VERSION, Meta
from pipeline.publish.rows import CITED
from pipeline.publish.tables import TABLES, Table

Row = tuple[object, ...]
_SQL_TYPE = {"integer": "INTEGER", "number": "REAL", "string": "TEXT", "date": "TEXT"}


def _create(table: Table) -> str:
    cols = [f'"{c}" {_SQL_TYPE[table.type_of(c)]}' for c in table.columns]
    if table.primary_key:
        cols.append("PRIMARY KEY (" + ", ".join(f'"{c}"' for c in table.primary_key) + ")")
    for col, ref, ref_col in table.foreign_keys:
        cols.append(f'FOREIGN KEY ("{col}") REFERENCES "{ref}" ("{ref_col}")')
    return f'CREATE TABLE "{table.name}" ({", ".join(cols)})'


class Columns(list[Sequence[object]]):
    """Rows sent as columns (``Building.feed_columns``)."""


Sent = list[Row] | Columns  # a table's rows as sent to the database process


class Building:
    """``build`` running in a process of its own, sent each table's rows as the
    job writes them to its CSV file (``feed``; ``written`` when a table is
    complete), in the order of ``TABLES``.

    The process starts from the small ``forkserver`` process, not as a copy of
    the job: a forked copy that read the job's rows touched each of them, and so
    copied the pages it shared with its parent (475 MB of its own at 1x). A
    thread of the job sends the rows (pickled, 10,000 at a time), so that the
    job writes on while the process loads them."""

    def __init__(self, path: Path, reference: str, meta: Meta | None = None) -> None:
        ctx = multiprocessing.get_context("forkserver")
        self.path = path
        self._reader, writer = ctx.Pipe(duplex=False)
        rows_in, self._rows_out = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_build_child, args=(path, reference, meta, rows_in, writer), daemon=True)
        with workers.ctrl_c_held():
            workers.start_forkserver()
            self._proc.start()
        try:
            writer.close()
            rows_in.close()
            self._queue: queue.SimpleQueue[tuple[str, Sent | None] | None] = queue.SimpleQueue()
            self._gone = False
            self._sender = threading.Thread(target=self._send, name="database-rows", daemon=True)
            self._sender.start()
            self._outcome: tuple[str, str] | None = None
        except BaseException:  # a Ctrl-C here: the caller has no Building to stop
            self._proc.terminate()
            self._proc.join()
            raise

    def feed(self, table: str, rows: list[Row]) -> None:
        """Rows of ``table``, in its column order."""
        self._put((table, rows))

    def feed_columns(self, table: str, columns: list[Sequence[object]]) -> None:
        """Rows of ``table`` given as its columns, in its column order: that
        process makes the rows of them, not the job."""
        self._put((table, Columns(columns)))

    def written(self, table: str) -> None:
        """``table`` is complete."""
        self._put((table, None))

    def _put(self, item: tuple[str, Sent | None] | None) -> None:
        if not self._gone:  # else the process has gone: ``wait`` says why
            self._queue.put(item)

    def _send(self) -> None:
        try:
            while (item := self._queue.get()) is not None:
                self._rows_out.send(item)
        except (OSError, ValueError):  # the process has gone (failed, or stopped): its rows are let go
            self._gone = True
            while not self._queue.empty():
                self._queue.get_nowait()
        finally:
            self._rows_out.close()

    def wait(self) -> str:
        """Wait for it; raise OSError if it failed, else return the file's sha256
        (hashed by that process too). Asked again, it answers the same."""
        if self._outcome is None:
            self._put(None)
            self._sender.join()
            try:
                self._outcome = self._reader.recv()
            except EOFError:  # it ended before it said anything (killed, say)
                self._outcome = ("the database process ended without a word", "")
            self._proc.join()
        error, digest = self._outcome
        if error:
            raise OSError(errno.EIO, error, str(self.path))
        return str(digest)

    def stop(self) -> None:
        """End it at once and wait until it has (the run was interrupted: it is
        not to write on in a folder that is being removed)."""
        self._put(None)
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join()
        self._sender.join(timeout=SENDER_JOIN_SECONDS)  # a send the ended process cut short has failed by now

    # What a caller may ask of it (the tests do), without reaching into how it is made.

    @property
    def pid(self) -> int | None:
        """The database process's id."""
        return self._proc.pid

    def alive(self) -> bool:
        """Whether the process, or the thread that sends it rows, still runs."""
        return self._proc.is_alive() or self._sender.is_alive()

    def pending(self) -> int:
        """How many batches of rows wait to be sent (none once the process has gone)."""
        return self._queue.qsize()

    def hang_up(self) -> None:
        """Close the job's end of the pipe the process answers on, as a job that has gone leaves it."""
        self._reader.close()

    def close(self, timeout: float | None = None) -> int | None:
        """End the rows as a job that goes ends them, without waiting for an answer, and
        wait (up to ``timeout`` seconds) for the process to end: its exit code, or None
        if it runs on."""
        self._put(None)
        self._sender.join(timeout=timeout)
        self._proc.join(timeout=timeout)
        return self._proc.exitcode


# How long ``stop`` waits for the sending thread (it ends once the process has).
SENDER_JOIN_SECONDS = 5.0


def build_aside(path: Path, reference: str, meta: Meta | None = None) -> Building:
    """Start ``build`` in a process of its own: ``feed`` it each table's rows as
    they are written, then ``wait`` for it, or ``stop`` it."""
    return Building(path, reference, meta)


class _Fed(Mapping[str, Iterable[Row]]):
    """The rows of each table as the job sends them (``Building.feed``), in the order of ``TABLES``."""

    def __init__(self, rows_in: Any, first: tuple[str, Sent | None]) -> None:
        self.rows_in = rows_in
        self._first: tuple[str, Sent | None] | None = first  # received before the file was made

    def __getitem__(self, name: str) -> Iterable[Row]:
        return self._rows(name)

    def _next(self) -> tuple[str, Sent | None]:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        item: tuple[str, Sent | None] = self.rows_in.recv()  # EOFError if the job went: this process ends too
        return item

    def _rows(self, name: str) -> Iterator[Row]:
        # The rows of each batch are taken by ``executemany`` from ``chain`` in C,
        # not handed on one at a time by a generator of this module (1.4 million
        # rows at 1x): only each batch passes through Python.
        return chain.from_iterable(self._batches(name))

    def _batches(self, name: str) -> Iterator[Iterable[Row]]:
        while True:
            table, rows = self._next()
            if table != name:
                raise ValueError(f"rows of {table} came where those of {name} were due")
            if rows is None:
                return
            yield zip(*rows, strict=True) if isinstance(rows, Columns) else rows

    def __iter__(self) -> Iterator[str]:
        return (table.name for table in TABLES)

    def __len__(self) -> int:
        return len(TABLES)


def _build_child(path: Path, reference: str, meta: Meta | None, rows_in: Any, writer: Any) -> None:
    # Ctrl-C is the parent's to handle (it exits and ends this daemon process);
    # SIGTERM, as sent by the parent on its way out, ends this one quietly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        # Nothing is made before the first rows come: a Ctrl-C while this process
        # was being started can leave the job without it to stop, and the job
        # then removes its staging folder and goes; this process sees the pipe
        # end and goes too, quietly (it had tried to make the file in the removed
        # folder, failed, and printed a traceback when it could not say so).
        try:
            first = rows_in.recv()
        except EOFError:
            return
        try:
            build(_Fed(rows_in, first), path, reference, meta)
            with path.open("rb") as fh:
                outcome = ("", hashlib.file_digest(fh, "sha256").hexdigest())
        except Exception as exc:  # reported to the parent, which fails the run cleanly
            outcome = (f"{type(exc).__name__}: {exc}", "")
        with suppress(OSError):  # else the job has gone: there is nobody to tell
            writer.send(outcome)
    finally:
        writer.close()


# The file is built in a staging folder and swapped in whole, so a crash loses
# nothing published: no journal, no syncs. A page cache that holds the tables'
# keys while they grow, and sorts in memory, make loading and indexing cheaper.
# None of these changes what the file holds. Pages of 64 KiB (SQLite's largest;
# 4 KiB is its default) hold a long element's two texts on one page rather than
# a chain of overflow pages: at 1x the build took 6.2-7.2 s, not 7.9-8.9 s
# (16 KiB: 6.9-7.4 s), the file is 5% smaller, and a search is as quick (3 ms).
PRAGMAS = ("page_size = 65536", "journal_mode = OFF", "synchronous = OFF", "cache_size = -65536",
           "temp_store = MEMORY")


def build(tables: Mapping[str, Iterable[Row]], path: Path, reference: str = "", meta: Meta | None = None) -> None:
    """Load the contract's tables (rows in column order; an empty string is NULL)
    into a new SQLite file, in one transaction, then build the search indexes and
    the ``meta`` table; ``reference`` is the source whose wordings are current."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        for pragma in PRAGMAS:
            con.execute(f"PRAGMA {pragma}")
        loaded: set[str] = set()
        for table in TABLES:
            con.execute(_create(table))
            marks = ", ".join(["nullif(?, '')"] * len(table.columns))
            con.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', tables[table.name])
            for col in table.indexes:
                con.execute(f'CREATE INDEX "{table.name}_{col}" ON "{table.name}" ("{col}")')
            loaded.add(table.name)
            if loaded >= _SEARCH_IN_READS and table.name in _SEARCH_IN_READS:  # as soon as both are in
                _build_search_in(con, reference)
            if table.name == "renumber_map":  # its index, sent right after it
                _load_cited(con, tables[CITED])
        _build_search(con, reference)
        con.execute("CREATE INDEX rule_history_source_id ON rule_history (source_id)")  # what ``diff`` reads
        for name, columns in TIED_FTS.items():
            _tie_fts(con, name, columns)
        _load_meta(con, meta or Meta(SCHEMA_VERSION, __version__, "", reference, "", "", {}))
        con.commit()
    finally:
        con.close()


# The tables with a full-text index of their own, and the columns it holds.
TIED_FTS = {"rules": ("number", "text"), "glossary": ("term", "text")}
_TOKENIZE = "unicode61 remove_diacritics 2"  # as ``search``'s: "Dandan" finds "Dandân"


def _tie_fts(con: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> None:
    """``<table>_fts`` over ``columns`` of ``table``, an FTS5 index whose content is
    the table's own rows (by rowid), written as ``sqlite-utils enable-fts`` writes
    it: Datasette finds it by its ``content=[table]`` and searches the table with it."""
    cols = ", ".join(f"[{c}]" for c in columns)
    con.execute(f"CREATE VIRTUAL TABLE [{table}_fts] USING FTS5 ({cols}, tokenize='{_TOKENIZE}', content=[{table}])")
    con.execute(f"INSERT INTO [{table}_fts] (rowid, {cols}) SELECT rowid, {cols} FROM [{table}]")


def _load_meta(con: sqlite3.Connection, meta: Meta) -> None:
    """The ``meta`` table: what made the file, one (key, value) a row."""
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO meta VALUES (?, ?)", meta.rows())


SEARCHED = "('rule', 'glossary', 'qa')"
_SEARCH_IN_READS = frozenset({"sources", "elements"})  # the tables ``_build_search_in`` reads


def _build_search_in(con: sqlite3.Connection, reference: str) -> None:
    """Which elements have each searched wording, and which of them each shows.
    It reads ``sources`` and ``elements`` alone, and is made as soon as they are
    loaded: the job is then still making the tables derived from them, and this
    process would wait for their rows meanwhile."""
    # An entry is the rowid of the first element with a wording; search_in lists
    # every element with it. An element's rowid is its place in elements.csv.
    con.execute("CREATE TABLE search_in (entry INTEGER NOT NULL, source_id TEXT NOT NULL, number_as_written TEXT, "
                "element INTEGER NOT NULL)")
    con.execute(
        "INSERT INTO search_in SELECT first.rowid, e.source_id, e.number_as_written, e.rowid FROM elements e "
        "JOIN elements first ON first.element_id = coalesce(e.duplicate_of, e.element_id) "
        f"WHERE e.kind IN {SEARCHED} ORDER BY e.rowid"
    )
    con.execute("CREATE INDEX search_in_entry ON search_in (entry, source_id)")
    con.execute("CREATE INDEX search_in_source ON search_in (source_id, entry)")
    # Each wording is shown from the reference when it has it, else from the
    # newest source with it (an undated one dated by the release it is like),
    # as that source first numbers it. The sources ranked so once (rank 1 the
    # best), each entry's best rank is a minimum over its rows, and the row it
    # shows one look-up in search_in's index: not a sort of all 300,000 rows
    # (1.3 s at 1x, against 0.2).
    con.execute("CREATE TEMP TABLE rank (source_id TEXT PRIMARY KEY, r INTEGER NOT NULL UNIQUE) WITHOUT ROWID")
    con.execute(
        "INSERT INTO temp.rank SELECT so.source_id, row_number() OVER (ORDER BY so.source_id = :ref DESC, "
        " coalesce(so.effective_date, lk.effective_date, '') DESC, so.effective_date IS NULL, so.source_id) "
        "FROM sources so LEFT JOIN sources lk ON lk.source_id = so.numbering_like",
        {"ref": reference},
    )
    con.execute("CREATE TEMP TABLE shown (entry INTEGER PRIMARY KEY, source_id TEXT, number_as_written TEXT, "
                "element INTEGER)")
    con.execute(
        "WITH best AS (SELECT m.entry, min(k.r) AS r FROM search_in m JOIN temp.rank k ON k.source_id = m.source_id "
        " GROUP BY m.entry) "
        "INSERT INTO temp.shown SELECT m.entry, m.source_id, m.number_as_written, m.element "
        "FROM best JOIN temp.rank k ON k.r = best.r JOIN search_in m ON m.rowid = ("
        " SELECT x.rowid FROM search_in x WHERE x.entry = best.entry AND x.source_id = k.source_id "
        " ORDER BY x.number_as_written, x.element LIMIT 1)"
    )


def _build_search(con: sqlite3.Connection, reference: str) -> None:
    """The full-text index: each wording of ``search_in`` once, as ``temp.shown`` shows it."""
    con.execute(
        "CREATE VIRTUAL TABLE search USING fts5(kind, number, title, text, number_as_written UNINDEXED, "
        "source_id UNINDEXED, current UNINDEXED, position UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
    )
    con.execute(
        "INSERT INTO search (rowid, kind, number, title, text, number_as_written, source_id, current, position) "
        "SELECT e.rowid, e.kind, "
        " coalesce(CASE e.kind WHEN 'qa' THEN q.section ELSE e.canonical_number END, ''), "
        " coalesce(CASE e.kind WHEN 'rule' THEN s.title WHEN 'glossary' THEN e.term ELSE e.question END, ''), "
        " coalesce(CASE e.kind WHEN 'qa' THEN e.answer ELSE e.text END, ''), "
        " coalesce(shown.number_as_written, ''), shown.source_id, shown.source_id = :ref, shown.element "
        "FROM elements e JOIN temp.shown ON shown.entry = e.rowid "
        "LEFT JOIN rules r ON e.kind = 'rule' AND r.number = e.canonical_number "
        "LEFT JOIN sections s ON s.number = r.section "
        "LEFT JOIN qa q ON e.kind = 'qa' AND q.qa_id = e.element_id "
        f"WHERE e.duplicate_of IS NULL AND e.kind IN {SEARCHED} ORDER BY e.rowid",
        {"ref": reference},
    )


def _load_cited(con: sqlite3.Connection, rows: Iterable[Row]) -> None:
    """``cited`` (``rows.cited_rows``: each number as each source wrote it, with the
    rule, section or "written for two rules" it is there), keyed and indexed for
    the queries. At 1x it is 37 MB of the file's 490."""
    con.execute("CREATE TABLE cited (source_id TEXT NOT NULL, number TEXT NOT NULL, kind TEXT NOT NULL, "
                "lineage_id TEXT, canonical_number TEXT, map_row INTEGER NOT NULL, position INTEGER NOT NULL, "
                "PRIMARY KEY (source_id, number, kind))")
    con.executemany("INSERT INTO cited VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute("CREATE INDEX cited_number ON cited (number, kind)")
    con.execute("CREATE INDEX cited_now ON cited (canonical_number) WHERE kind = 'section'")
