"""Parquet copies of every table: ``out/parquet/<table>.parquet``.

Each copy is read back from the CSV just written (so the two cannot differ)
with the contract's types: strings, 64-bit integers and doubles, all
nullable, an empty cell null. The pandas metadata stored with it makes
``pd.read_parquet`` give the same dtypes as ``pipeline.load``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.dataset import read_csv
from pipeline.tables import TABLES, Table

FOLDER = "parquet"


def path_of(out: Path, table: Table) -> Path:
    return out / FOLDER / f"{table.name}.parquet"


def _pandas_schema(fields: list[tuple[str, str]]) -> Any:
    """The Arrow schema, with pandas metadata, of an empty frame of these dtypes."""
    import pandas as pd
    import pyarrow as pa

    dtypes = {"string": pd.StringDtype(), "integer": pd.Int64Dtype(), "number": pd.Float64Dtype()}
    empty = pd.DataFrame({name: pd.Series([], dtype=dtypes[type_]) for name, type_ in fields})
    return pa.Schema.from_pandas(empty, preserve_index=False)


def write(out: Path) -> dict[str, int]:
    """Write the Parquet copy of every table whose CSV is in ``out``; returns row
    counts by path relative to ``out``."""
    import pyarrow.parquet as pq

    (out / FOLDER).mkdir(exist_ok=True)
    counts = {}
    for table in TABLES:
        fields = [(c, table.type_of(c)) for c in table.columns]
        data = read_csv(out / f"{table.name}.csv", fields).cast(_pandas_schema(fields))
        path = path_of(out, table)
        pq.write_table(data, path)
        counts[path.relative_to(out).as_posix()] = data.num_rows
    return counts
