"""The CSV writer makes its lines in Arrow (``csv._write``): the bytes are still
those of the csv module, cell by cell (``csv.cell``), and the line ends it hands
on (to the Parquet writer) are where each line's newline ends."""

from __future__ import annotations

import csv as stdlib_csv
import io
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.publish.csv import CHUNK, Columns, InColumns, cell, write_csv

# Text that needs quoting and text that does not, beyond ASCII, and the empty cell.
_TEXT = st.text(alphabet=st.sampled_from('ab ,"\n\r\té’—Dandân;:'), max_size=12)
_VALUE = st.one_of(_TEXT, st.none(), st.integers(-10**12, 10**12),
                   st.floats(allow_nan=False, allow_infinity=False))
_COLUMN_KIND = st.sampled_from(["text", "text_or_none", "int", "mixed"])


def _column(kind: str, n: int) -> st.SearchStrategy[list[Any]]:
    value = {"text": _TEXT, "text_or_none": st.one_of(_TEXT, st.none()),
             "int": st.one_of(st.integers(-10**6, 10**6), st.none()), "mixed": _VALUE}[kind]
    return st.lists(value, min_size=n, max_size=n)


@st.composite
def _tables(draw: st.DrawFn) -> list[list[Any]]:
    n = draw(st.integers(1, 40))
    kinds = draw(st.lists(_COLUMN_KIND, min_size=1, max_size=5))
    return [draw(_column(kind, n)) for kind in kinds]


def _expected(names: list[str], columns: list[list[Any]]) -> bytes:
    rows = list(zip(*columns, strict=True))
    return "".join(",".join(map(cell, row)) + "\n" for row in [tuple(names), *rows]).encode()


@settings(deadline=None)  # the first example imports Arrow's kernels; a loaded machine takes its time
@given(_tables())
def test_lines_are_the_cells_of_each_row(columns: list[list[Any]]) -> None:
    names = [f"c{k}" for k in range(len(columns))]
    seen: list[tuple[Any, list[int], list[Any]]] = []
    with tempfile.TemporaryDirectory() as folder:  # hypothesis runs the test many times in one tmp_path
        sink = Path(folder) / "t.csv"
        piece: Columns = [*columns]
        write_csv(sink, names, InColumns([piece]), lambda given, ends, texts: seen.append((given, ends, texts)))
        data = sink.read_bytes()
    assert data == _expected(names, columns)
    [(given_back, ends, texts)] = seen
    assert given_back is piece
    assert ends[-1] == len(data)
    assert all(data[end - 1:end] == b"\n" for end in ends)
    assert len(ends) == len(columns[0])
    for column, text in zip(columns, texts, strict=True):
        if text is not None:  # a column of text: the values themselves, as Arrow text
            assert text.type == pa.large_string() and text.to_pylist() == column


def test_the_csv_module_reads_back_what_was_written(tmp_path: Path) -> None:
    """Quotes, commas, both line breaks and text beyond ASCII, over more than one chunk."""
    words = ["", "a", "a,b", 'say "hi"', "line\nbreak", "cr\rhere", "Dandân’s", None, " spaced "]
    n = CHUNK + 7
    columns = [[words[i % 9] for i in range(n)], list(range(n)), [words[(i * 5) % 9] or "x" for i in range(n)]]
    rows = list(zip(*columns, strict=True))
    count, _ = write_csv(tmp_path / "t.csv", ["a", "b", "c"], rows)
    assert count == n
    text = (tmp_path / "t.csv").read_bytes().decode()
    read = list(stdlib_csv.reader(io.StringIO(text, newline="")))
    assert read[0] == ["a", "b", "c"]
    assert read[1:] == [["" if v is None else str(v) for v in row] for row in rows]
