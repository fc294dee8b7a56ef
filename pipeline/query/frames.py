"""The published tables as typed DataFrames, for users: ``pipeline.load``.

``load`` reads every table that ``datapackage.json`` lists as a DataFrame typed
by it, so numbers and ids stay strings (``702.10`` is not ``702.1``), integers
are nullable integers and an empty cell is missing; each CSV is checked against
its sha256 first. pandas and pyarrow are imported on first use: ``import
pipeline`` stays light. The commands read the same folder through
``pipeline.query.dataset`` (its CSV records and its database), never through
DataFrames.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import DatasetError

# The fields of elements.csv can be as long as a whole front matter (every reader
# of a published folder imports this module, ``pipeline.query.dataset`` too).
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

if TYPE_CHECKING:
    import pandas as pd

DESCRIPTOR = "datapackage.json"


class Tables(Mapping[str, "pd.DataFrame"]):
    """The published tables by name, also as attributes: ``tables["rules"]``, ``tables.rules``."""

    def __init__(self, frames: dict[str, pd.DataFrame], out: Path) -> None:
        self._frames = frames
        self.out = out

    def __getitem__(self, name: str) -> pd.DataFrame:
        try:
            return self._frames[name]
        except KeyError:
            raise KeyError(f"no table {name!r} in {self.out}; tables: {', '.join(self._frames)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._frames)

    def __len__(self) -> int:
        return len(self._frames)

    def __getattr__(self, name: str) -> pd.DataFrame:
        frames = self.__dict__.get("_frames", {})
        if name in frames:
            return frames[name]  # type: ignore[no-any-return]
        raise AttributeError(f"no table {name!r} in {self.__dict__.get('out')}; tables: {', '.join(frames)}")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._frames]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}: {len(frame)} rows" for name, frame in self._frames.items())
        return f"Tables({str(self.out)!r}; {sizes})"



def descriptor(out: Path) -> dict[str, Any]:
    """The parsed ``datapackage.json`` of ``out``; DatasetError when there is none or it is damaged."""
    if out.is_file():
        raise DatasetError(f"{out} is a file: give the published folder it is in ({out.parent})")
    if not out.is_dir():
        raise DatasetError(f"{out}: no such folder; publish it with `python -m pipeline ingest --out {out}`")
    import json

    path = out / DESCRIPTOR
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        # A folder of other files (raw/, say) is no place to publish into: ingest refuses it.
        hint = (f"run `python -m pipeline ingest --out {out}`" if not any(out.iterdir())
                else "give the folder `python -m pipeline ingest --out` published, such as out")
        raise DatasetError(f"{path} not found: {out} is not a published dataset ({hint})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: damaged, not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resources"), list):
        raise DatasetError(f"{path}: damaged: no list of resources")
    return doc


def fields_of(resource: dict[str, Any], where: Path) -> list[tuple[str, str]]:
    """(name, Frictionless type) of each field of a resource."""
    try:
        return [(f["name"], f.get("type", "string")) for f in resource["schema"]["fields"]]
    except (KeyError, TypeError):
        raise DatasetError(f"{where}: damaged: resource {resource.get('name')!r} has no schema fields") from None


def check_hash(path: Path, resource: dict[str, Any]) -> None:
    """DatasetError unless ``path`` has the sha256 that ``resource`` states."""
    import hashlib  # here: every command loads this module, few hash a file

    expected = str(resource.get("hash", "")).removeprefix("sha256:")
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if expected and digest.hexdigest() != expected:
        raise DatasetError(f"{path}: does not match its sha256 in {DESCRIPTOR}: changed or damaged since it "
                           "was published")


def verify(out: Path, names: Collection[str] | None = None) -> None:
    """Each CSV that ``datapackage.json`` lists (of ``names`` only, when given)
    against its sha256; DatasetError naming the first that differs."""
    for resource in descriptor(out)["resources"]:
        path = out / str(resource.get("path", ""))
        if resource.get("format", "csv") == "csv" and (names is None or path.name in names) and path.is_file():
            check_hash(path, resource)


def arrow_types(fields: list[tuple[str, str]], where: Path) -> dict[str, Any]:
    """The Arrow type of each field: strings, 64-bit integers, doubles, dates (all nullable)."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(), "date": pa.date32()}
    unknown = sorted({t for _, t in fields} - set(kinds))
    if unknown:
        raise DatasetError(f"{where}: field type {unknown[0]!r} is not one this pipeline publishes")
    return {name: kinds[type_] for name, type_ in fields}


def read_csv(path: Path, fields: list[tuple[str, str]]) -> Any:
    """A published CSV as an Arrow table with exactly these typed columns, empty cells null."""
    from pyarrow import csv

    with _reading(path, fields) as (parse, convert):
        return csv.read_csv(path, parse_options=parse, convert_options=convert)


def read_csv_batches(path: Path, fields: list[tuple[str, str]]) -> Iterator[Any]:
    """``read_csv`` a block at a time: Arrow record batches, so that a large
    table is never held whole."""
    from pyarrow import csv

    with _reading(path, fields) as (parse, convert):
        reader = csv.open_csv(path, parse_options=parse, convert_options=convert)
        yield from reader


@contextmanager
def _reading(path: Path, fields: list[tuple[str, str]]) -> Iterator[tuple[Any, Any]]:
    """How a published CSV is read (its header checked against ``fields``), and
    its failures as ``DatasetError`` naming the file and, where it can, the line."""
    import pyarrow as pa
    from pyarrow import csv

    types = arrow_types(fields, path)
    try:
        with path.open("rb") as fh:
            header = fh.readline().decode("utf-8").rstrip("\n").split(",")
        if header != [name for name, _ in fields]:
            raise DatasetError(f"{path}: line 1: columns {header} differ from {DESCRIPTOR}'s "
                               f"{[name for name, _ in fields]}")
        yield (
            csv.ParseOptions(newlines_in_values=True),
            csv.ConvertOptions(
                column_types=types, null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True,
            ),
        )
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be read: {exc}") from None
    except pa.ArrowInvalid as exc:
        raise DatasetError(f"{path}: damaged: {_locate(path, fields) or exc}") from None


def _locate(path: Path, fields: list[tuple[str, str]]) -> str:
    """Where a CSV that Arrow rejected goes wrong, as ``line N: ...`` (Arrow does not say)."""
    import csv

    convert = {"integer": int, "number": float}
    article = {"integer": "an integer", "number": "a number"}
    with path.open("rb") as raw:  # text that is not UTF-8 stops Arrow too
        for n, line in enumerate(raw, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"line {n}: not UTF-8: byte {line[exc.start]:#04x} at column {exc.start + 1}"
    start = 2
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        rows = iter(reader)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                break
            except csv.Error as exc:  # an unbalanced quote runs the field on to the end of the file
                return f"line {start}: {exc}"
            if len(row) != len(fields):
                return f"line {start}: {len(row)} fields, {len(fields)} expected"
            for (name, type_), value in zip(fields, row, strict=True):
                if value and type_ in convert:
                    try:
                        convert[type_](value)
                    except ValueError:
                        return f"line {start}: column {name}: {value!r} is not {article[type_]}"
            start = reader.line_num + 1
    return ""


def to_frame(table: Any) -> pd.DataFrame:
    """An Arrow table as a DataFrame with pandas' nullable dtypes: string, Int64, Float64, date32[pyarrow]."""
    import pandas as pd
    import pyarrow as pa

    mapping = {pa.string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype(), pa.float64(): pd.Float64Dtype(),
               pa.date32(): pd.ArrowDtype(pa.date32())}
    frame: pd.DataFrame = table.to_pandas(types_mapper=mapping.get)
    return frame


def load(out: Path | str = "out", *, verify: bool = True) -> Tables:
    """Every table that ``out/datapackage.json`` lists, as DataFrames typed by it.

    Columns are pandas ``string``, ``Int64``, ``Float64`` or, for a date
    (``effective_date``), ``date32[day][pyarrow]`` (``datetime.date`` values);
    empty cells are missing (``<NA>``). With ``verify`` each CSV is first checked against its
    sha256. Raises DatasetError naming the file when the folder is missing,
    incomplete or damaged.
    """
    out = Path(out)
    doc = descriptor(out)
    frames: dict[str, pd.DataFrame] = {}
    for resource in doc["resources"]:
        if resource.get("format", "csv") != "csv":
            continue  # the Parquet copies: the same tables
        path = out / str(resource.get("path", ""))
        if not path.is_file():
            raise DatasetError(f"{path}: missing, though {DESCRIPTOR} lists it")
        fields = fields_of(resource, out / DESCRIPTOR)
        if verify:
            check_hash(path, resource)
        frames[str(resource["name"])] = to_frame(read_csv(path, fields))
    if not frames:
        raise DatasetError(f"{out / DESCRIPTOR}: lists no CSV table")
    return Tables(frames, out)
