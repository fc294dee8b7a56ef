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

from pipeline.dataset import read_csv
from pipeline.tables import Table

FOLDER = "parquet"

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
    """Write the Parquet copy of ``table`` from its CSV in ``out``; returns its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [(c, table.type_of(c)) for c in table.columns]
    data = read_csv(out / f"{table.name}.csv", fields).cast(schema(table))
    path = path_of(out, table)
    path.parent.mkdir(exist_ok=True)
    pq.write_table(data, path)
    rows = int(data.num_rows)
    del data
    pa.default_memory_pool().release_unused()  # Arrow's allocator keeps what it freed; the run needs it back
    return rows

