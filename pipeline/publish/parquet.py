"""Parquet copies of every table: ``out/parquet/<table>.parquet``.

Each copy is read back from the CSV just written (so the two cannot differ;
Arrow's CSV reader does it in bulk, outside the GIL, faster than converting
the rows from Python) with the contract's types: strings, 64-bit integers and
doubles, all nullable, an empty cell null. The pandas metadata stored with it
makes ``pd.read_parquet`` give the same dtypes as ``pipeline.load``.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pipeline.publish.tables import Table
from pipeline.query.dataset import read_csv_batches

FOLDER = "parquet"
# Rows of a row group (Arrow reads the CSV in blocks of a few thousand rows).
ROW_GROUP = 32_768

# Arrow type and pandas' names for it (pandas_type, numpy_type) of each contract type:
# what ``pa.Schema.from_pandas`` gives for string, Int64 and Float64 columns.
_TYPES = {"string": ("large_string", "object", "string"), "integer": ("int64", "int64", "Int64"),
          "number": ("float64", "float64", "Float64")}


def path_of(out: Path, table: Table) -> Path:
    return out / FOLDER / f"{table.name}.parquet"


def schema(table: Table) -> Any:
    """The Arrow schema of a table's copy, with the pandas metadata that
    ``pa.Schema.from_pandas`` gives an empty frame of the ``pipeline.load`` dtypes
    (built here because importing pandas costs a run more than the whole copy of
    most tables; a test holds the two equal)."""
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


def copy(out: Path, table: Table) -> int:
    """Write the Parquet copy of ``table`` from its CSV in ``out``, a block at a
    time (never the whole table in memory); returns its rows. A copy that fails
    leaves no file: a streamed writer closed early would leave a readable,
    partial table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [(c, table.type_of(c)) for c in table.columns]
    target = schema(table)
    path = path_of(out, table)
    path.parent.mkdir(exist_ok=True)
    rows = 0
    try:
        with pq.ParquetWriter(path, target) as writer:
            pending: list[Any] = []
            for batch in read_csv_batches(out / f"{table.name}.csv", fields):
                pending.append(batch.cast(target))
                if sum(b.num_rows for b in pending) >= ROW_GROUP:
                    rows += _write_group(writer, pending, target)
            rows += _write_group(writer, pending, target)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        pa.default_memory_pool().release_unused()  # Arrow's allocator keeps what it freed; the run needs it back
    return rows


def _write_group(writer: Any, batches: list[Any], target: Any) -> int:
    """Write ``batches`` as one row group (at least ``ROW_GROUP`` rows but the last), and empty the list."""
    import pyarrow as pa

    if not batches:
        return 0
    group = pa.Table.from_batches(batches, schema=target)
    writer.write_table(group, row_group_size=group.num_rows)
    batches.clear()
    return int(group.num_rows)
