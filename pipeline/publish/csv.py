"""The CSV writer: rows, in the contract's column order, as the csv module writes them.

A table comes as rows, or as columns (``InColumns``: made so by its maker, no
row made in between). The bytes are those of the csv module (``QUOTE_MINIMAL``,
``\\n`` line ends), which writes the same as pandas' ``to_csv`` here, four times
faster (a test holds the two equal). They are made 10,000 rows at a time, in
Arrow: a column of text becomes an Arrow array once (the Parquet writer is
handed it too, and copies it as it is), is quoted where a cell needs it and
joined into lines by Arrow's kernels, and the file is written from the bytes of
the lines; a column of other values goes through ``cells`` (``str`` of each
value) first. A loop over cells in Python had taken a third of publishing.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.publish.sink import HashingFile

if TYPE_CHECKING:
    import pyarrow as pa

Row = tuple[Any, ...]
Columns = list[Sequence[Any]]  # a table's columns, each the values of the same rows in order
CHUNK = 10_000  # rows made into lines at a time, and handed on together
Texts = list["pa.Array | None"]  # each column's values as an Arrow text array, where they are all text
# also(rows, ends, texts): the rows just written, the byte offset of the end of
# each one's line, and those of their columns that are text, as Arrow arrays
# (``None`` for another column).
Also = Callable[[list[Row], list[int], Texts], None]
AlsoColumns = Callable[[Columns, list[int], Texts], None]  # the same, given columns


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Row] | InColumns,
              also: Also | AlsoColumns | None = None) -> tuple[int, str]:
    """Write a header and rows; returns the rows written and the file's sha256.
    ``also`` is given the rows too, ``CHUNK`` at a time, as they are written, with
    where each row's line ends in the file (the Parquet writer cuts its row groups
    where Arrow's CSV reader, reading this file in blocks, would cut them). Rows
    given as columns (``InColumns``) are given to ``also`` as those columns."""
    if isinstance(rows, InColumns):
        return _write(path, columns, ((piece, piece) for piece in rows.pieces), also)
    return _write(path, columns, ((transpose(chunk), chunk) for chunk in chunks(rows, CHUNK)), also)


class InColumns:
    """A table as its columns, ``CHUNK`` rows of each at a time (``pieces``, none
    empty), made so by its maker: no row is made of them to write them."""

    def __init__(self, pieces: Iterable[Columns]) -> None:
        self.pieces = pieces


def _write(path: Path, names: Sequence[str], pieces: Iterable[tuple[Columns, Any]],
           also: Callable[[Any, list[int], Texts], None] | None) -> tuple[int, str]:
    """Write a header, then each piece's columns as lines; ``also`` is given each
    piece's second half (its rows, or its columns), where each line ends and the
    text columns as Arrow arrays."""
    n = 0
    sink = HashingFile(path)
    quoted = Quoted()
    with io.BufferedWriter(sink, 1 << 20) as fh:
        offset = fh.write((",".join(map(cell, names)) + "\n").encode())
        for columns, given in pieces:
            texts = [_text(column) for column in columns]
            data, ends = _lines([_cells(column, text, quoted) for column, text in zip(columns, texts, strict=True)],
                                offset)
            fh.write(data)
            if also is not None:
                also(given, ends, texts)
            offset += len(data)
            n += len(ends)
    return n, sink.digest.hexdigest()


def _text(values: Sequence[Any]) -> pa.Array | None:
    """``values`` as an Arrow text array, when they are all text (or ``None``)."""
    import pyarrow as pa

    if values and isinstance(values[0], bytes):  # Arrow would take bytes for text; ``cell`` writes their repr
        return None
    try:
        return pa.array(values, type=pa.large_string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return None


def _cells(values: Sequence[Any], text: pa.Array | None, quoted: Quoted) -> pa.Array:
    """The cells of a column (``cell`` of each value), as an Arrow text array:
    made in Arrow from ``text``, the column as text, when there is one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if text is None:
        return pa.array(cells(values, quoted), type=pa.large_string())
    text = pc.fill_null(text, "")
    special = pc.match_substring_regex(text, _SPECIAL)
    if not pc.any(special).as_py():
        return text
    mark = pa.scalar('"', pa.large_string())
    wrapped = pc.binary_join_element_wise(mark, pc.replace_substring(text, '"', '""'), mark,
                                          pa.scalar("", pa.large_string()))
    return pc.if_else(special, wrapped, text)


_SPECIAL = '["\\n\\r,]'  # what makes ``cell`` quote a text


def _lines(columns: list[pa.Array], offset: int) -> tuple[memoryview, list[int]]:
    """The lines of rows of cells (Arrow text arrays), as bytes, and where each
    line ends in the file (its first byte at ``offset``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.large_string()
    line = pc.binary_join_element_wise(*columns, pa.scalar(",", text))
    line = pc.binary_join_element_wise(line, pa.scalar("", text), pa.scalar("\n", text))
    _, offsets_buffer, data = line.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[line.offset:line.offset + len(line) + 1]
    start = int(offsets[0])
    ends = (offsets[1:] + (offset - start)).tolist()
    return memoryview(data)[start:int(offsets[-1])], ends


def transpose(rows: Sequence[Row]) -> Columns:
    """The columns of ``rows`` (all of one length), made in C."""
    return list(zip(*rows, strict=True))


class Quoted(dict[str, str]):
    """Cells of text that needs quoting, by text, each made by ``cell`` once:
    releases repeat most wordings of the one before. Emptied when it reaches
    ``limit`` texts, so that its memory stays bounded on any history."""

    def __init__(self, limit: int = 1 << 17) -> None:
        super().__init__()
        self.limit = limit

    def __missing__(self, text: str) -> str:
        if len(self) >= self.limit:
            self.clear()
        made = self[text] = cell(text)
        return made


def cells(values: Sequence[Any], quoted: Quoted) -> Sequence[str]:
    """``[cell(v) for v in values]``, for one column of rows: text that needs no
    quoting (none of its cells holds a quote, comma or line break) is its own cell,
    numbers are ``str``; only a column of another mix goes a value at a time."""
    try:
        joined = "".join(values)
    except TypeError:  # not all text
        types = set(map(type, values))
        if str not in types and type(None) not in types:
            return list(map(str, values))
        return list(map(cell, values))
    if '"' in joined or "," in joined or "\n" in joined or "\r" in joined:
        return list(map(quoted.__getitem__, values))
    return values


def cell(value: Any) -> str:
    """A CSV cell: ``None`` is empty; a string is quoted (its quotes doubled) when it
    holds a comma, a quote or a line break (a carriage return too, which the csv
    module of Python 3.11 leaves bare, and readers take for the end of a line).

    >>> [cell(v) for v in (None, 97.0, 3, "a b", "a,b", 'a "b" c', "a\\nb")]
    ['', '97.0', '3', 'a b', '"a,b"', '"a ""b"" c"', '"a\\nb"']
    """
    if isinstance(value, str):
        if '"' in value:
            return '"' + value.replace('"', '""') + '"'
        return '"' + value + '"' if "," in value or "\n" in value or "\r" in value else value
    return "" if value is None else str(value)


def chunks(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """``rows`` in lists of ``size`` (the last one shorter), taken by ``islice`` in C."""
    it = iter(rows)
    while batch := list(islice(it, size)):
        yield batch
