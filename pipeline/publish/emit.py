"""Publish a built corpus into a folder: its rows (``rows``) handed to every writer.

Each table's rows are made once and go, ``csv.CHUNK`` at a time, to the CSV
writer, the Parquet writer and the database: a process of its own loads them
into ``rules.sqlite`` as they are written (``sqlite.Building``), and each
Parquet row group is compressed in a thread while the next rows are written.
Then ``rules.json`` is made from the corpus and the same rows, validated and
written, and the dataset card (``README.md``) and Datasette's ``metadata.json``
from the contract's descriptions. Nothing written is read back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline import workers
from pipeline.publish import card, datasette, parquet
from pipeline.publish import meta as self_description
from pipeline.publish import sqlite as database
from pipeline.publish.csv import CHUNK, Columns, InColumns, Row, Texts, chunks, transpose, write_csv
from pipeline.publish.datapackage import validate_rules_json
from pipeline.publish.json import write_json
from pipeline.publish.rows import CITED, COLUMNS, Built, Ledger, cited_rows, rules_json, tables
from pipeline.publish.tables import BY_NAME, TABLES

RULES_JSON = "rules.json"
DATABASE = "rules.sqlite"


@dataclass(frozen=True, slots=True)
class Written:
    """What ``write`` wrote: rows and sha256 of each file, by path relative to the
    folder; and the rows of the rules table, for ``changes.md``."""

    rows: dict[str, int]
    sha256: dict[str, str]
    rules: list[Row]


def write(corpus: Built, out: Path) -> Written:
    """Write every table (CSV and Parquet), ``rules.json`` and ``rules.sqlite`` into ``out``.

    The database is built in a second process meanwhile, from the rows as they
    are written."""
    with workers.fewer_collections():
        return _write(corpus, out)


def _write(corpus: Built, out: Path) -> Written:
    out.mkdir(parents=True, exist_ok=True)
    data = tables(corpus)
    rows: dict[str, int] = {}
    sha256: dict[str, str] = {}
    building: database.Building | None = None
    stamp = self_description.of(corpus.sources, corpus.reference, corpus.reference_date)
    try:
        building = database.build_aside(out / DATABASE, corpus.reference, stamp)
        for table in TABLES:  # in the order the database loads them
            for path, count, digest in _write_table(out, table.name, data[table.name], building):
                rows[path], sha256[path] = count, digest
            if table.name == "renumber_map":  # the database's index of it, derived here
                cited = cited_rows(data["renumber_map"])
                for start in range(0, len(cited), CHUNK):
                    building.feed(CITED, cited[start:start + CHUNK])
                building.written(CITED)
                del cited
        doc = rules_json(corpus, data, stamp)
        validate_rules_json(doc)
        rows[RULES_JSON] = sum(len(s["rules"]) for s in doc["sections"])
        sha256[RULES_JSON] = write_json(out / RULES_JSON, doc)
        del doc
        sha256[card.CARD] = card.write(out, stamp, rows)
        sha256[datasette.METADATA] = datasette.write(out, stamp)
        # Inside the try: a Ctrl-C while waiting for the database must stop its
        # process too, or it writes on into a staging folder being removed.
        sha256[DATABASE] = building.wait()
    except BaseException:
        # Whatever failed (a full disk, Ctrl-C, SIGTERM), the staging folder is
        # about to be removed: the database process is ended at once, not waited
        # for (a Ctrl-C during that wait had left it writing on), and the first
        # failure is the one reported.
        if building is not None:
            building.stop()
        raise
    return Written(rows, sha256, list(data["rules"]))


def _write_table(out: Path, name: str, rows: Iterable[Row],
                 building: database.Building) -> list[tuple[str, int, str]]:
    """Write a table's CSV and Parquet files, and send its rows to the database:
    each file's path relative to ``out``, rows and sha256. The rows go as columns
    (``CHUNK`` rows at a time), each taken apart once, for all three: the ledger's
    straight from its elements (``Ledger``), the other tables' from their rows."""
    copy = parquet.Writer(out, BY_NAME[name])
    try:
        def also(columns: Columns, ends: list[int], texts: Texts) -> None:
            building.feed_columns(name, columns)
            copy.write_columns(columns, ends, texts)

        pieces = rows.columns(CHUNK) if isinstance(rows, Ledger) else map(transpose, chunks(rows, CHUNK))
        file = f"{name}.csv"
        count, digest = write_csv(out / file, COLUMNS[name], InColumns(pieces), also)
        building.written(name)
        copied = copy.close()
    except BaseException:
        copy.abort()
        raise
    return [(file, count, digest),
            (copy.path.relative_to(out).as_posix(), copied, copy.sha256)]
