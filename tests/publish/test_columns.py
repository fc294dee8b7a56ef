"""The ledger handed to the writers as columns (``rows.Ledger``, ``csv.InColumns``,
``parquet.Writer.write_columns``) is the ledger as rows, taken apart: the same cells,
the same CSV bytes, the same Parquet bytes, on the bundled run's elements."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.publish import parquet
from pipeline.publish.csv import CHUNK, InColumns, write_csv
from pipeline.publish.rows import COLUMNS, Ledger, element_columns, element_row
from pipeline.publish.tables import BY_NAME
from tests.conftest import Bundled


def test_ledger_columns_are_its_rows_taken_apart(bundled: Bundled) -> None:
    corpus, _ = bundled
    ledger = Ledger(corpus.elements)
    rows = iter(ledger)
    pieces = 0
    for columns in ledger.columns(CHUNK):
        assert len(columns) == len(COLUMNS["elements"])
        assert list(zip(*columns, strict=True)) == list(islice(rows, len(columns[0])))
        pieces += 1
    assert next(rows, None) is None
    assert pieces == -(-len(corpus.elements) // CHUNK)
    flagged = next(el for el in corpus.elements if len(el.flags) > 1 and el.parent_line)
    assert list(zip(*element_columns([flagged]), strict=True)) == [element_row(flagged)]


def test_columns_write_the_bytes_rows_write(bundled: Bundled, tmp_path: Path) -> None:
    """CSV and Parquet from the ledger's columns, and from its rows: byte for byte the
    same files (a third of the ledger, past a row group)."""
    corpus, _ = bundled
    els = corpus.elements[: max(len(corpus.elements) // 3, parquet.ROW_GROUP + 1)]
    made = {}
    for how in ("rows", "columns"):
        folder = tmp_path / how
        folder.mkdir()
        writer = parquet.Writer(folder, BY_NAME["elements"])
        if how == "rows":
            csv = write_csv(folder / "elements.csv", COLUMNS["elements"], Ledger(els), writer.write)
        else:
            csv = write_csv(folder / "elements.csv", COLUMNS["elements"], InColumns(Ledger(els).columns(CHUNK)),
                            writer.write_columns)
        assert writer.close() == len(els)
        made[how] = (csv, writer.sha256, (folder / "elements.csv").read_bytes(), writer.path.read_bytes())
    assert made["rows"] == made["columns"]


def test_empty_strings_become_nulls_as_if_else_made_them(bundled: Bundled) -> None:
    corpus, _ = bundled
    for name in ("number_as_written", "text", "duplicate_of", "flags"):
        at = COLUMNS["elements"].index(name)
        values = [element_row(el)[at] for el in corpus.elements[:50_000]]
        array = pa.array(values, type=pa.large_string())
        made = parquet.empty_as_null(array)
        assert made.equals(pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.large_string()), array))
        assert made.null_count == values.count("")
    assert any(v == "" for v in values) and any(v for v in values)
