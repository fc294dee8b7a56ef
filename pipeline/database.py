"""``rules.sqlite``: every table of the contract, keyed and indexed, with full-text search.

The FTS5 index ``search`` covers the reference's rules, every glossary entry
and every Q&A; ``unicode61`` with diacritics removed lets "Dandan" find
"Dandân" as well as "Dandân" itself.
"""

from __future__ import annotations

import errno
import multiprocessing
import re
import signal
import sqlite3
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.tables import TABLES, Table

_SQL_TYPE = {"integer": "INTEGER", "number": "REAL", "string": "TEXT"}


def _create(table: Table) -> str:
    cols = [f'"{c}" {_SQL_TYPE[table.type_of(c)]}' for c in table.columns]
    if table.primary_key:
        cols.append("PRIMARY KEY (" + ", ".join(f'"{c}"' for c in table.primary_key) + ")")
    for col, ref, ref_col in table.foreign_keys:
        cols.append(f'FOREIGN KEY ("{col}") REFERENCES "{ref}" ("{ref_col}")')
    return f'CREATE TABLE "{table.name}" ({", ".join(cols)})'


def build_aside(tables: dict[str, list[tuple[object, ...]]], path: Path) -> Callable[[], None]:
    """Start ``build`` in a forked process (which shares ``tables`` without copying);
    returns the function that waits for it and raises if it failed."""
    ctx = multiprocessing.get_context("fork")
    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_build_child, args=(tables, path, writer), daemon=True)
    proc.start()
    writer.close()

    def wait() -> None:
        message = reader.recv() if reader.poll(None) else "the database process ended without a word"
        proc.join()
        if message:
            raise OSError(errno.EIO, message, str(path))

    return wait


def _build_child(tables: dict[str, list[tuple[object, ...]]], path: Path, writer: Any) -> None:
    # Ctrl-C is the parent's to handle (it exits and ends this daemon process);
    # SIGTERM, as sent by the parent on its way out, ends this one quietly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        build(tables, path)
    except Exception as exc:  # reported to the parent, which fails the run cleanly
        writer.send(f"{type(exc).__name__}: {exc}")
    else:
        writer.send("")
    finally:
        writer.close()


def build(tables: dict[str, list[tuple[object, ...]]], path: Path) -> None:
    """Load the contract's tables (rows in column order) into a new SQLite file."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        for table in TABLES:
            con.execute(_create(table))
            marks = ", ".join("?" * len(table.columns))
            rows = ([None if v == "" else v for v in row] for row in tables[table.name])
            con.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', rows)
            for col in table.indexes:
                con.execute(f'CREATE INDEX "{table.name}_{col}" ON "{table.name}" ("{col}")')
        con.execute(
            "CREATE VIRTUAL TABLE search USING fts5(kind, number, title, text, source_id UNINDEXED, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        con.execute(
            "INSERT INTO search SELECT 'rule', r.number, s.title, r.text, '' FROM rules r "
            "LEFT JOIN sections s ON s.number = r.section ORDER BY r.rowid"
        )
        con.execute(
            "INSERT INTO search SELECT 'glossary', '', term, text, source_id FROM glossary "
            "WHERE duplicate_of IS NULL ORDER BY rowid"
        )
        con.execute(
            "INSERT INTO search SELECT 'qa', section, question, answer, source_id FROM qa "
            "WHERE duplicate_of IS NULL ORDER BY rowid"
        )
        con.commit()
    finally:
        con.close()


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str
    number: str
    title: str
    snippet: str
    source_id: str


def fts_query(text: str) -> str:
    """Words of a plain query, each quoted, so FTS syntax characters are harmless.

    >>> fts_query('double strike')
    '"double" "strike"'
    """
    return " ".join('"' + w.replace('"', '""') + '"' for w in re.findall(r"[\w’'-]+", text))


def search(path: Path, text: str, limit: int = 20) -> list[Hit]:
    """Rules, glossary entries and Q&A matching every word of ``text``, best first."""
    query = fts_query(text)
    if not query:
        return []
    con = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT kind, number, title, snippet(search, 3, '[', ']', '…', 16), source_id FROM search "
            "WHERE search MATCH ? ORDER BY bm25(search, 1.0, 1.0, 4.0, 1.0), rowid LIMIT ?",
            (query, limit),
        ).fetchall()
    finally:
        con.close()
    return [Hit(*row) for row in rows]
