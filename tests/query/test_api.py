"""The Python API (``pipeline.load``), the Parquet copies, and the contract shipped in docs/."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import pipeline
from pipeline.publish import parquet
from pipeline.publish.tables import BY_NAME, TABLES
from tests.conftest import ROOT, Bundled

DTYPES = {"string": "string", "integer": "Int64", "number": "Float64", "date": "date32[day][pyarrow]"}


@pytest.fixture(scope="session")
def loaded(bundled: Bundled) -> pipeline.Tables:
    return pipeline.load(bundled[1])


def test_import_pipeline_stays_light() -> None:
    code = "import sys, pipeline; print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_numbers_stay_strings(loaded: pipeline.Tables, bundled: Bundled) -> None:
    sections, rules = loaded.sections, loaded.rules
    # pd.read_csv's guess reads numbers as floats: 702.2 and 702.20 become one value.
    assert pd.read_csv(bundled[1] / "sections.csv").number.nunique() == 394
    assert sections.number.nunique() == len(sections) == 418
    titles = dict(zip(sections.number, sections.title, strict=True))
    assert (titles["702.2"], titles["702.20"], titles["702.10"], titles["702.100"]) == (
        "Deathtouch", "Vigilance", "Haste", "Evolve")
    section_of = dict(zip(rules.number, rules.section, strict=True))
    assert (section_of["702.1"], section_of["702.10a"], section_of["702.100a"]) == ("702", "702.10", "702.100")
    assert "702.1" not in titles  # 702.1 is a rule of section 702, not a section
    assert loaded.renumber_map.number_as_written.str.fullmatch(r"\d+\.\d+0").sum() > 100  # trailing zeros kept


def test_every_table_is_loaded_typed_by_the_datapackage(loaded: pipeline.Tables, bundled: Bundled) -> None:
    _, out = bundled
    assert list(loaded) == [t.name for t in TABLES]
    report = json.loads((out / "run.json").read_text("utf-8"))
    rows = {o["file"]: o["rows"] for o in report["outputs"]}
    for table in TABLES:
        frame = loaded[table.name]
        assert frame is getattr(loaded, table.name)
        assert list(frame.columns) == list(table.columns)
        assert {c: str(t) for c, t in frame.dtypes.items()} == {c: DTYPES[table.type_of(c)] for c in table.columns}
        assert len(frame) == rows[f"{table.name}.csv"] == rows[f"parquet/{table.name}.parquet"]
    # Empty cells are missing values, not empty strings; integers are integers.
    elements = loaded.elements
    assert int(elements.duplicate_of.notna().sum()) == report["stages"]["duplicates"] > len(elements) // 2
    assert not (elements.duplicate_of == "").any()
    assert elements.line_start.notna().all() and int(elements.line_end.max()) > 1000
    # Entwine, 502.32a in October 2004, is 702.42a now; the score is a float.
    row = loaded.renumber_map.set_index(["source_id", "number_as_written"]).loc[("cr-2004-10-01", "502.32a")]
    assert row.canonical_number == "702.42a" and isinstance(row.score, float) and 0 < row.score <= 100
    assert loaded.sources.set_index("source_id").loc["cr-2006-10-01", "encoding"] == "mac_roman"
    with pytest.raises(AttributeError, match="no table 'lineage'"):
        loaded.lineage  # noqa: B018
    assert "sections: 418 rows" in repr(loaded)


@pytest.mark.slow  # every table of the full dataset written back
def test_loaded_frames_write_back_the_same_csv(loaded: pipeline.Tables, bundled: Bundled) -> None:
    """Nothing is lost or changed on the way in: each frame writes the published bytes."""
    _, out = bundled
    for name, frame in loaded.items():
        assert frame.to_csv(index=False, lineterminator="\n") == (out / f"{name}.csv").read_text("utf-8"), name


def test_parquet_round_trip_equals_the_csv(loaded: pipeline.Tables, bundled: Bundled) -> None:
    _, out = bundled
    for table in TABLES:
        back = pd.read_parquet(out / "parquet" / f"{table.name}.parquet")
        pd.testing.assert_frame_equal(back, loaded[table.name], check_exact=True)


def test_parquet_copy_is_streamed_in_row_groups(bundled: Bundled) -> None:
    """The biggest table is copied a block at a time: row groups of at least
    ``ROW_GROUP`` rows (the last may be smaller), never the whole table at once."""
    import pyarrow.parquet as pq

    _, out = bundled
    meta = pq.ParquetFile(out / "parquet" / "elements.parquet").metadata
    sizes = [meta.row_group(k).num_rows for k in range(meta.num_row_groups)]
    assert len(sizes) > 1 and sum(sizes) == len(pd.read_csv(out / "elements.csv", dtype=str))
    assert all(size >= parquet.ROW_GROUP for size in sizes[:-1])


def test_parquet_schema_is_the_one_pandas_gives_the_loaded_dtypes() -> None:
    """The Parquet schema is built without pandas (importing it costs a run more than
    most copies); it is the one ``pa.Schema.from_pandas`` gives, metadata included."""
    dtypes = {"string": pd.StringDtype(), "integer": pd.Int64Dtype(), "number": pd.Float64Dtype(),
              "date": pd.ArrowDtype(pa.date32())}
    for table in TABLES:
        empty = pd.DataFrame({c: pd.Series([], dtype=dtypes[table.type_of(c)]) for c in table.columns})
        expected = pa.Schema.from_pandas(empty, preserve_index=False)
        assert parquet.schema(table).equals(expected, check_metadata=True), table.name


def test_datapackage_lists_parquet_and_describes_every_field(bundled: Bundled) -> None:
    _, out = bundled
    descriptor = json.loads((out / "datapackage.json").read_text("utf-8"))
    assert "docs/CONTRACT.md" in descriptor["description"]
    by_name = {r["name"]: r for r in descriptor["resources"]}
    for table in TABLES:
        csv, parquet = by_name[table.name], by_name[f"{table.name}-parquet"]
        assert parquet["path"] == f"parquet/{table.name}.parquet" and parquet["format"] == "parquet"
        assert parquet["hash"] == "sha256:" + hashlib.sha256((out / parquet["path"]).read_bytes()).hexdigest()
        assert parquet["schema"]["fields"] == csv["schema"]["fields"]
        for field in csv["schema"]["fields"]:
            assert len(field["description"]) > 10, (table.name, field["name"])
    fields = {f["name"]: f["description"] for f in by_name["renumber_map"]["schema"]["fields"]}
    assert fields["method"].startswith("How the number was found: same (already canonical)")
    assert BY_NAME["rules"].meaning("text") != BY_NAME["elements"].meaning("text")


@pytest.mark.slow  # the full dataset copied and loaded again
def test_missing_or_damaged_out_is_a_clear_error(bundled: Bundled, tmp_path: Path) -> None:
    _, out = bundled
    with pytest.raises(pipeline.DatasetError, match="nowhere: no such folder"):
        pipeline.load(tmp_path / "nowhere")
    # A table's file for its folder: it had advised `ingest --out out/sources.csv`.
    with pytest.raises(pipeline.DatasetError, match=r"sources\.csv is a file: give the published folder it is in"):
        pipeline.load(out / "sources.csv")
    with pytest.raises(KeyError, match="no table 'sectoins' in .*; tables: sources, elements, sections"):
        pipeline.load(out, verify=False)["sectoins"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(pipeline.DatasetError, match="datapackage.json not found: .* is not a published dataset "
                                                    r"\(run `python -m pipeline ingest --out "):
        pipeline.load(empty)
    # A folder of inputs: not advised as a place to publish into (ingest refuses it).
    with pytest.raises(pipeline.DatasetError, match=r"is not a published dataset \(give the folder `python -m "
                                                    r"pipeline ingest --out` published, such as out\)"):
        pipeline.load(ROOT / "raw")
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("elements.csv", "*.sqlite", "parquet"))
    with pytest.raises(pipeline.DatasetError, match=r"elements\.csv: missing, though datapackage\.json lists it"):
        pipeline.load(copy)
    text = (out / "elements.csv").read_text("utf-8")
    (copy / "elements.csv").write_text(text.replace("702.40a,702.42a", "702.40a,702.4Xa", 1), encoding="utf-8")
    with pytest.raises(pipeline.DatasetError, match=r"elements\.csv: does not match its sha256"):
        pipeline.load(copy)
    at = text.index("\ncr-2004-10-01:L1,") + 1
    line = text.count("\n", 0, at) + 1
    row = text[at:text.index("\n", at)]
    fields = row.split(",", 3)
    bad = ",".join([*fields[:2], "x" + fields[2], fields[3]])  # line_start no longer an integer
    (copy / "elements.csv").write_text(text.replace(row, bad, 1), encoding="utf-8")
    with pytest.raises(pipeline.DatasetError, match=rf"elements\.csv: damaged: line {line}: column line_start: "
                                                    r"'x1' is not an integer"):
        pipeline.load(copy, verify=False)
    (copy / "elements.csv").write_text(text.replace(row, row.replace(",", ";", 3), 1), encoding="utf-8")
    n = len(BY_NAME["elements"].columns)
    with pytest.raises(pipeline.DatasetError, match=rf"damaged: line {line}: {n - 3} fields, {n} expected"):
        pipeline.load(copy, verify=False)
    # A byte that is not UTF-8 (a hand edit in Latin-1), found on its line.
    (copy / "elements.csv").write_bytes(text.replace(row, row.replace(",", ",\udcf6", 1), 1)
                                        .encode("utf-8", "surrogateescape"))
    with pytest.raises(pipeline.DatasetError, match=rf"damaged: line {line}: not UTF-8: byte 0xf6 at column "):
        pipeline.load(copy, verify=False)
    (copy / "datapackage.json").write_text('{"resources": [', encoding="utf-8")
    with pytest.raises(pipeline.DatasetError, match=r"datapackage\.json: damaged, not JSON: .* at line 1"):
        pipeline.load(copy)


# --- the contract in docs/ and the tables the pipeline writes ----------------------------

CONTRACT = (ROOT / "docs" / "CONTRACT.md").read_text("utf-8")

# Columns the pipeline writes that docs/CONTRACT.md (a copy of the shared contract,
# which the lead keeps) does not name yet; the contract allows added columns, and
# each of these turns into a failure the day the contract names it.
NOT_YET_IN_CONTRACT = {
    "sources.encoding_evidence", "sources.flags",
    *(f"sources.lines_{k}" for k in ("chapter", "section", "rule", "example", "glossary", "qa", "prose",
                                     "front_matter", "noise")),
    "qa.section_as_written", "xrefs.target", "glossary.element_id", "glossary.line_start", "rules.lineage_id",
}


def _contract_block(name: str) -> str:
    """The part of the contract that defines ``name.csv``: its heading's section or its bullet."""
    head = re.search(rf"^## [^\n]*`{name}\.csv`[^\n]*\n(.*?)(?=^## )", CONTRACT, re.M | re.S)
    if head:
        return head.group(0)
    bullet = re.search(rf"^- `{name}\.csv`(.*?)(?=^- `|^## |\Z)", CONTRACT, re.M | re.S)
    assert bullet, f"docs/CONTRACT.md does not define {name}.csv"
    block = bullet.group(0)
    if "of the ledger" in block:  # noise.csv: rows of elements.csv, with its columns
        block += _contract_block("elements")
    return block


@pytest.mark.parametrize(
    "column",
    [pytest.param(f"{t.name}.{c}", marks=[pytest.mark.xfail(
        strict=True, reason="the pipeline writes it; docs/CONTRACT.md does not name it yet")]
        if f"{t.name}.{c}" in NOT_YET_IN_CONTRACT else []) for t in TABLES for c in t.columns],
)
def test_contract_names_every_column_the_pipeline_writes(column: str) -> None:
    table, name = column.split(".")
    assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", _contract_block(table))


@pytest.mark.xfail("lineages" not in BY_NAME, strict=True, reason="lineages.csv is being added on main")
def test_every_table_of_the_contract_is_written() -> None:
    named = set(re.findall(r"`(\w+)\.csv`", CONTRACT))
    assert named == set(BY_NAME)


def test_readme_points_at_the_contract_in_docs() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "docs/CONTRACT.md" in readme
    assert "CONTRACT.md" not in readme.replace("docs/CONTRACT.md", "")


def test_the_readme_shows_real_rows_and_counts(bundled: Bundled, loaded: pipeline.Tables) -> None:
    """The rows and counts the README quotes are those the bundled data publishes
    (its renumber_map example had lost a column and a method, and its counts
    were two rounds old)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    block = readme.split("A few real rows:", 1)[1].split("```", 2)[1]
    for part in re.split(r"^# ", block, flags=re.M)[1:]:
        name, *rows = [line for line in part.splitlines() if line.strip()]
        published = (bundled[1] / name.strip()).read_text("utf-8").splitlines()
        for row in rows:
            pieces = [p for p in re.split(r"\.\.\.|…", row) if p]
            found = [line for line in published if _in_order(pieces, line)]
            assert found, f"{name}: no published row reads {row!r}"
    shown = re.search(r"^(Tables\('out'; .*?), \.\.\.\)$", readme, re.M)
    assert shown and repr(loaded).replace(f"{loaded.out}", "out").startswith(shown.group(1))


def _in_order(pieces: list[str], line: str) -> bool:
    at = 0
    for k, piece in enumerate(pieces):
        found = line.find(piece, at) if k else (0 if line.startswith(piece) else -1)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def test_dates_load_as_dates(loaded: pipeline.Tables) -> None:
    """``effective_date`` is a date in every table that has it (it came back as text),
    missing where a source states none; ``tables.DATE`` says which columns are dates."""
    import datetime

    sources = loaded["sources"].set_index("source_id")
    assert str(sources["effective_date"].dtype) == "date32[day][pyarrow]"
    assert sources.loc["cr-2004-10-01", "effective_date"] == datetime.date(2004, 10, 1)
    assert pd.isna(sources.loc["000_eb8496d4591d3274", "effective_date"])
    history = loaded["rule_history"]
    assert history["effective_date"].dropna().min() == datetime.date(1999, 4, 23)
    assert [t.name for t in TABLES if "date" in map(t.type_of, t.columns)] == ["sources", "rule_history", "keywords"]
