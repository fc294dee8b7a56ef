"""The Parquet writer: ``out/parquet/<table>.parquet``, from the same rows as the CSV.

Each file holds the contract's types: strings, 64-bit integers, doubles and
dates (``date32``), all nullable, an empty or missing value null (as the CSV's empty cell). The
pandas metadata stored with it makes ``pd.read_parquet`` give the same dtypes
as ``pipeline.load``.

Row groups and the record batches within them are cut where they were when
these files were copied from the CSVs by Arrow's CSV reader, so that the files
stay byte for byte what they were: a batch is the rows whose lines end in one
``BLOCK`` of the CSV file (Arrow read it a block at a time), and a row group
closes at the end of the batch that brings it to ``ROW_GROUP`` rows. That is
why ``write`` is told where each row's line ends in the CSV.
"""

from __future__ import annotations

import io
import json
from bisect import bisect_right
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pipeline.publish.sink import HashingFile
from pipeline.publish.tables import Table

FOLDER = "parquet"
# Rows of a row group, at least (all but the last).
ROW_GROUP = 32_768
# Bytes of the CSV whose rows make one record batch: Arrow's CSV reader's default block.
BLOCK = 1 << 20

Row = tuple[Any, ...]

# Arrow type and pandas' names for it (pandas_type, numpy_type) of each contract type:
# what ``pa.Schema.from_pandas`` gives for string, Int64 and Float64 columns.
_TYPES = {"string": ("large_string", "object", "string"), "integer": ("int64", "int64", "Int64"),
          "number": ("float64", "float64", "Float64"), "date": ("date32", "date", "date32[day][pyarrow]")}


def path_of(out: Path, table: Table) -> Path:
    return out / FOLDER / f"{table.name}.parquet"


def schema(table: Table) -> Any:
    """The Arrow schema of a table's file, with the pandas metadata that
    ``pa.Schema.from_pandas`` gives an empty frame of the ``pipeline.load`` dtypes
    (built here because importing pandas costs a run more than writing most
    tables; a test holds the two equal)."""
    import pyarrow as pa

    types = {c: _TYPES[table.type_of(c)] for c in table.columns}
    pandas = {
        "index_columns": [], "column_indexes": [],
        "columns": [{"name": c, "field_name": c, "pandas_type": types[c][1], "numpy_type": types[c][2],
                     "metadata": None} for c in table.columns],
        "attributes": {}, "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": version("pandas"),
    }
    return pa.schema([(c, getattr(pa, types[c][0])()) for c in table.columns],
                     metadata={b"pandas": json.dumps(pandas).encode()})


class Writer:
    """One table's Parquet file, written from its rows as they come (``write``),
    a row group at a time: never the whole table in memory. Each row group is
    encoded and compressed in a thread (Arrow lets go of the GIL meanwhile) while
    the next rows are made. ``close`` finishes the file and returns its rows
    (and sets ``sha256``, hashed as it was written); ``abort`` leaves no file (a
    file closed early would be a readable, partial table)."""

    def __init__(self, out: Path, table: Table) -> None:
        import pyarrow.parquet as pq

        self.path = path_of(out, table)
        self.path.parent.mkdir(exist_ok=True)
        self.rows = 0
        self.sha256 = ""
        self._schema = schema(table)
        self._kinds = [table.type_of(c) for c in table.columns]
        self._sink = HashingFile(self.path)
        self._buffered = io.BufferedWriter(self._sink, 1 << 20)
        self._file = pq.ParquetWriter(self._buffered, self._schema)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet")
        self._writing: Future[None] | None = None
        self._block = 0  # the CSV block the rows of ``_columns`` end in
        # The rows of the batch being gathered: of each column, its pieces (values, or Arrow text arrays).
        self._columns: list[list[Any]] = [[] for _ in table.columns]
        self._gathered = 0  # rows in them
        self._batches: list[Any] = []  # the row group being gathered

    def write(self, rows: list[Row], ends: Sequence[int], texts: Sequence[Any | None] = ()) -> None:
        """More rows, and the byte offset in the CSV file where each one's line ends."""
        if rows:
            self.write_columns(list(zip(*rows, strict=True)), ends, texts)

    def write_columns(self, columns: Sequence[Sequence[Any]], ends: Sequence[int],
                      texts: Sequence[Any | None] = ()) -> None:
        """``write`` for rows given as columns (each the values of the same rows);
        ``texts``, where given, each column of text as an Arrow array (``None``
        for another), copied as it is rather than made again."""
        size, start = len(ends), 0
        arrays = [None if text is None or kind != "string" else text
                  for kind, text in zip(self._kinds, texts or [None] * len(columns), strict=True)]
        while start < size:
            # Rows whose line ends in the block ``_block`` (its newline, at end - 1).
            stop = bisect_right(ends, (self._block + 1) * BLOCK, lo=start)
            whole = start == 0 and stop == size
            for kept, column, array in zip(self._columns, columns, arrays, strict=True):
                if array is not None:
                    kept.append(array if whole else array.slice(start, stop - start))
                else:
                    kept.append(column if whole else column[start:stop])
            self._gathered += stop - start
            if stop < size:
                self._end_batch()
                self._block = (ends[stop] - 1) // BLOCK
            start = stop

    def close(self) -> int:
        """Write what is left, finish the file, and return its rows."""
        try:
            self._end_batch()
            self._end_group()
            self._wait()
            self._pool.shutdown()
            self._file.close()
            self._buffered.close()
            self.sha256 = self._sink.digest.hexdigest()
        except BaseException:
            self.abort()
            raise
        finally:
            _release()
        return self.rows

    def abort(self) -> None:
        """Stop, and remove the file."""
        self._pool.shutdown(cancel_futures=True)
        try:
            self._file.close()
            self._buffered.close()
        finally:
            self.path.unlink(missing_ok=True)
            _release()

    def _end_batch(self) -> None:
        if self._gathered:
            self._batches.append(self._batch(self._columns))
            self._columns = [[] for _ in self._columns]
            self._gathered = 0
            if sum(b.num_rows for b in self._batches) >= ROW_GROUP:
                self._end_group()

    def _end_group(self) -> None:
        import pyarrow as pa

        if self._batches:
            group = pa.Table.from_batches(self._batches, schema=self._schema)
            self._batches = []
            self._wait()
            self._writing = self._pool.submit(self._file.write_table, group, row_group_size=group.num_rows)
            self.rows += group.num_rows

    def _wait(self) -> None:
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.result()

    def _batch(self, columns: list[list[Any]]) -> Any:
        import pyarrow as pa

        return pa.RecordBatch.from_arrays(
            [_array(kind, _joined(pieces), field.type)
             for kind, pieces, field in zip(self._kinds, columns, self._schema, strict=True)],
            schema=self._schema,
        )


def _joined(pieces: list[Any]) -> Any:
    """A column's pieces of a batch as one: an Arrow text array when they all
    are, else their values in one list."""
    import pyarrow as pa

    if all(isinstance(piece, pa.Array) for piece in pieces):
        return pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
    values: list[Any] = []
    for piece in pieces:
        values.extend(piece.to_pylist() if isinstance(piece, pa.Array) else piece)
    return values


def _array(kind: str, values: Sequence[Any] | Any, type_: Any) -> Any:
    """A column's values (or, of a text column, an Arrow text array of them) as
    Arrow reads them from its CSV cells: an empty cell null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.Array):  # a column of text, made by the CSV writer
        return empty_as_null(values)
    if kind == "date":  # ISO text, as the CSV has it: Arrow parses it
        text = pa.array(values, type=pa.string())
        return pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text).cast(type_)
    try:
        array = pa.array(values, type=type_)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # an empty string for a number, or a number for a string
        array = pa.array([_value(kind, v) for v in values], type=type_)
    if kind == "string":
        return empty_as_null(array)
    return array


def empty_as_null(array: Any) -> Any:
    """A string array with its empty strings null: the same offsets and bytes
    under a validity bitmap that leaves them out (no copy of the text, as
    ``pc.if_else`` made).

    >>> import pyarrow as pa
    >>> empty_as_null(pa.array(["a", "", None, "b"], type=pa.large_string())).to_pylist()
    ['a', None, None, 'b']
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    valid = pc.fill_null(pc.not_equal(array, ""), False)
    if valid.false_count == array.null_count:  # no empty string
        return array
    if array.offset:  # a slice: its bitmap would have to start where it does
        return pc.if_else(valid, array, pa.scalar(None, array.type))
    return pa.Array.from_buffers(array.type, len(array), [valid.buffers()[1], *array.buffers()[1:]],
                                 offset=array.offset)


def _value(kind: str, value: Any) -> Any:
    """One value as its CSV cell reads back: ``None`` for an empty one."""
    if value is None or value == "":
        return None
    return str(value) if kind == "string" else int(value) if kind == "integer" else float(value)


def _release() -> None:
    """Arrow's allocator keeps what it freed; the run needs it back."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
