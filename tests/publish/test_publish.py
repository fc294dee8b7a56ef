"""Publishing: validated, self-describing, deterministic, atomic, incremental, one run at a time."""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from click.testing import CliRunner
from frictionless import Package, validate
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pipeline.cli import main
from pipeline.errors import InvalidOutput
from pipeline.publish import emit
from pipeline.publish import folder as publish
from pipeline.publish.csv import Quoted, cell, cells, write_csv
from pipeline.publish.datapackage import rules_schema, validate_rules_json
from pipeline.publish.rows import COLUMNS
from pipeline.publish.tables import TABLES
from pipeline.records import Source
from pipeline.run import Corpus
from tests.conftest import RAW, ROOT, Bundled, examples

METADATA = {"run.json", "changes.md"}  # describe the run itself, so they differ run to run


def _digests(out: Path) -> dict[str, str]:
    """Every file under ``out`` (the Parquet copies included) by relative path."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def _ingest(raw: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "1", *extra])
    return result.exit_code, result.output


@pytest.mark.slow  # the full dataset's rules.json read and validated
def test_rules_json_validates_against_the_shipped_schema(bundled: Bundled) -> None:
    """The published rules.json, as written, against the schema shipped beside it.
    jsonschema-rs validates the whole document (0.1 s; jsonschema's reference
    validator took 23 s on it, walking 900,000 nodes in Python): the two judge
    documents alike (the property test below), and the shipped schema is the one
    that test holds them to."""
    _, out = bundled
    schema = json.loads((out / "rules.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema == rules_schema()
    validator = jsonschema_rs.Draft202012Validator(schema)
    errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}"
              for e in validator.iter_errors(json.loads((out / "rules.json").read_text("utf-8")))]
    assert errors == []


RuleDoc = tuple[dict[str, Any], dict[str, Any]]
"""A rules.json document cut to one rule, and that rule (in the document)."""


def _one_rule_doc(out: Path) -> RuleDoc:
    """The bundled rules.json cut to its first section and first rule, and that rule."""
    doc = json.loads((out / "rules.json").read_text("utf-8"))
    section = dict(doc["sections"][0], rules=[dict(doc["sections"][0]["rules"][0])])
    return dict(doc, sections=[section]), section["rules"][0]


@pytest.fixture(scope="module")
def rules_json_doc(bundled: Bundled) -> RuleDoc:
    return _one_rule_doc(bundled[1])


def test_the_runs_validator_refuses_a_wrong_number_and_names_where(bundled: Bundled) -> None:
    """The run's own check (jsonschema-rs) on the real document: it passes as written,
    and a number the grammar does not allow stops the run, with the path to it."""
    _, out = bundled
    validate_rules_json(json.loads((out / "rules.json").read_text("utf-8")))
    doc, rule = _one_rule_doc(out)
    rule["number"] = "702.4Aa"
    with pytest.raises(InvalidOutput, match=r"at sections/0/rules/0/number: .*702\.4Aa"):
        validate_rules_json(doc)
    del rule["number"]
    with pytest.raises(InvalidOutput, match=r'at sections/0/rules/0: "number" is a required property'):
        validate_rules_json(doc)


@settings(max_examples=examples(300), deadline=None)
@given(number=st.text(alphabet="0123456789.abzA ", max_size=10), line=st.integers(-2, 3))
@example(number="702.42aa", line=1)
@example(number="408.f", line=1)
@example(number="12", line=1)
@example(number="702.", line=1)
def test_the_runs_validator_agrees_with_draft_2020_12(rules_json_doc: RuleDoc, number: str, line: int) -> None:
    """jsonschema-rs, which the run uses, and jsonschema's reference validator,
    which the other tests use, judge the same documents alike."""
    doc, rule = rules_json_doc
    rule["number"] = number
    rule["variants"] = [dict(rule["variants"][0], line_start=line)]
    reference = not list(Draft202012Validator(rules_schema()).iter_errors(doc))
    try:
        validate_rules_json(doc)
        ours = True
    except InvalidOutput:
        ours = False
    assert ours == reference

@pytest.mark.slow  # frictionless reads the full dataset: about a minute
def test_datapackage_validates_with_frictionless(bundled: Bundled) -> None:
    """Every CSV with its keys, and the Parquet copies of the small tables (Frictionless
    reads Parquet row by row: all of them take minutes, so the tests check the big ones
    with pyarrow, in test_api.py)."""
    _, out = bundled
    descriptor = json.loads((out / "datapackage.json").read_text("utf-8"))
    resources = descriptor["resources"]
    assert [r["name"] for r in resources] == [*COLUMNS, *(f"{t}-parquet" for t in COLUMNS)]
    csvs = dict(descriptor, resources=[r for r in resources if r["format"] == "csv"])
    report = Package.from_descriptor(csvs, basepath=str(out)).validate()
    assert report.valid, report.flatten(["type", "note"])[:5]
    small = [r for r in resources if r["name"] in ("sources-parquet", "sections-parquet", "qa-parquet")]
    report = Package.from_descriptor(dict(descriptor, resources=small), basepath=str(out)).validate()
    assert report.valid, report.flatten(["type", "note"])[:5]
    assert report.stats["tasks"] == 3


# sources.csv and the two tables that refer to it and to nothing else outside the three:
# the whole package is validated once, above; here only the key broken on purpose.
_KEYED_TO_SOURCES = ("sources", "lineages", "keywords")


@pytest.mark.slow  # frictionless reads three of the bundled tables
def test_frictionless_catches_a_broken_foreign_key(bundled: Bundled, tmp_path: Path) -> None:
    _, out = bundled
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in _KEYED_TO_SOURCES:
        shutil.copy(out / f"{name}.csv", broken)
    lines = (broken / "sources.csv").read_text("utf-8").splitlines(keepends=True)
    (broken / "sources.csv").write_text("".join(lines[:-1]), encoding="utf-8")  # drop the reference's row
    descriptor = json.loads((out / "datapackage.json").read_text("utf-8"))
    descriptor["resources"] = [r for r in descriptor["resources"] if r["name"] in _KEYED_TO_SOURCES]
    for resource in descriptor["resources"]:
        resource.pop("hash"), resource.pop("bytes")
    (broken / "datapackage.json").write_text(json.dumps(descriptor), encoding="utf-8")
    report = validate(broken / "datapackage.json")
    assert not report.valid
    assert "foreign-key" in {e[0] for e in report.flatten(["type"])}
    # the rows that named the dropped release, in both tables that refer to sources
    assert [(task.name, bool(task.errors)) for task in report.tasks] == [
        ("sources", False), ("lineages", True), ("keywords", True)]


def test_run_json_reports_inputs_stages_and_outputs(bundled: Bundled) -> None:
    corpus, out = bundled
    report = json.loads((out / "run.json").read_text("utf-8"))
    assert report["status"] == "ok" and report["exit_code"] == 0
    bundled_files = len(list(RAW.iterdir()))  # 5 seeds and 72 official releases
    assert bundled_files == 77
    assert len(report["inputs"]) == bundled_files
    assert all(len(i["sha256"]) == 64 for i in report["inputs"])
    stages = report["stages"]
    assert stages["sources_parsed"] == bundled_files
    assert stages["noise_by_kind"]["epigraph"] == 20
    assert stages["rules_mapped"] + stages["rules_unmapped"] == stages["elements_by_kind"]["rule"]
    outputs = {o["file"]: o for o in report["outputs"]}
    assert outputs["qa.csv"]["rows"] == 69
    assert outputs["elements.csv"]["sha256"] == hashlib.sha256((out / "elements.csv").read_bytes()).hexdigest()


@pytest.mark.slow  # the full dataset rewritten by its libraries
def test_files_hold_what_their_libraries_would_write(bundled: Bundled) -> None:
    """The writer builds CSV lines itself and writes rules.json a section at a time (for
    speed): each CSV is what the csv module writes for its rows, rules.json is what
    json.dumps writes, and the database, loaded from the same rows, holds each CSV's rows."""
    _, out = bundled
    with closing(sqlite3.connect(out / "rules.sqlite")) as con:
        for table in TABLES:
            text = (out / f"{table.name}.csv").read_bytes().decode("utf-8")
            rows = list(csv.reader(io.StringIO(text, newline="")))
            again = io.StringIO(newline="")
            csv.writer(again, lineterminator="\n").writerows(rows)
            assert again.getvalue() == text, table.name
            stored = con.execute(f'SELECT * FROM "{table.name}" ORDER BY rowid')
            assert [["" if v is None else str(v) for v in row] for row in stored] == rows[1:], table.name
    text = (out / "rules.json").read_bytes().decode("utf-8")
    assert json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":")) + "\n" == text


def test_search_finds_umbra_armor_and_dandan(bundled: Bundled) -> None:
    _, out = bundled
    result = CliRunner().invoke(main, ["search", "Umbra armor", "--out", str(out)])
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith(("702.89a", "glossary: Umbra Armor"))
    assert "702.89a" in result.output
    result = CliRunner().invoke(main, ["search", "Dandân", "--out", str(out)])
    assert "[Dandân]" in result.output
    assert "206.3a" in result.output  # the rule of the reference that quotes the card


@pytest.mark.slow  # two ingests in processes
def test_two_runs_are_byte_identical(small_raw: Path, tmp_path: Path) -> None:
    # Separate processes with different hash seeds: no set or dict order may leak out.
    for name, seed in (("a", "1"), ("b", "2")):
        subprocess.run(
            [sys.executable, "-m", "pipeline", "ingest", "--raw", str(small_raw), "--out", str(tmp_path / name),
             "--full", "-q"], cwd=ROOT, check=True, env={**os.environ, "PYTHONHASHSEED": seed},
        )
    a, b = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert {k: v for k, v in a.items() if k not in METADATA} == {k: v for k, v in b.items() if k not in METADATA}
    assert "rules.sqlite" in a and "datapackage.json" in a


@pytest.mark.slow  # three ingests over a copy of the session's small folder
def test_unchanged_rerun_parses_nothing(published: Path, small_raw: Path) -> None:
    out = published  # small_raw as its first run published it
    first = _digests(out)
    code, output = _ingest(small_raw, out)
    assert code == 0 and output.startswith("unchanged")
    report = json.loads((out / "run.json").read_text("utf-8"))
    assert (report["run"], report["stages"]["sources_parsed"]) == ("unchanged", 0)
    assert {k: v for k, v in _digests(out).items() if k not in METADATA} == {
        k: v for k, v in first.items() if k not in METADATA
    }
    # changes.md still tells what the last publishing run changed, as run.json's outputs say.
    assert _digests(out)["changes.md"] == first["changes.md"]
    listed = {o["file"]: o for o in report["outputs"]}
    assert listed["changes.md"]["sha256"] == hashlib.sha256((out / "changes.md").read_bytes()).hexdigest()
    shutil.copy(RAW / "004_b7cb264e5db48bfb.txt", small_raw / "new.txt")
    assert _ingest(small_raw, out)[0] == 0
    report = json.loads((out / "run.json").read_text("utf-8"))
    assert (report["stages"]["sources_parsed"], report["stages"]["sources_cached"]) == (1, 4)
    assert report["run"] == "incremental"  # it had said "full"
    assert "## Sources added (1)\n\n- new" in (out / "changes.md").read_text("utf-8")
    assert _ingest(small_raw, out, "--full")[0] == 0
    report = json.loads((out / "run.json").read_text("utf-8"))
    assert (report["run"], report["stages"]["sources_parsed"]) == ("full", 5)
    # started_at had been the time the report was written, at the end.
    assert report["started_at"] <= report["finished_at"]
    started = datetime.fromisoformat(report["started_at"])
    # Whole seconds on the wall clock against a monotonic duration: a second of slack.
    assert (datetime.fromisoformat(report["finished_at"]) - started).total_seconds() >= int(
        report["duration_seconds"]) - 1


def test_second_concurrent_run_is_refused(small_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with publish.lock(out):
        code, output = _ingest(small_raw, out)
    assert code == 75
    assert "is being written by pid" in output
    assert not out.exists()


@pytest.mark.slow  # an ingest over a copy of the session's small folder
def test_failed_write_leaves_out_unchanged(published: Path, small_raw: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = published  # small_raw published
    before = _digests(out)
    real = write_csv  # what emit calls

    def full_disk(path: Path, *rest: Any) -> tuple[int, str]:
        if path.name == "xrefs.csv":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, *rest)

    monkeypatch.setattr(emit, "write_csv", full_disk)
    code, output = _ingest(small_raw, out, "--full")
    assert code == 1
    assert "No space left on device" in output and "nothing published" in output
    assert "Traceback" not in output
    assert _digests(out) == before
    assert not list(tmp_path.glob(".out.staging-*"))


@pytest.mark.slow  # ingests over a copy of the session's small folder, one killed
def test_killed_run_leaves_out_unchanged(published: Path, small_raw: Path, tmp_path: Path) -> None:
    out = published  # small_raw published
    before = _digests(out)
    shutil.copy(RAW / "004_b7cb264e5db48bfb.txt", small_raw / "new.txt")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "ingest", "--raw", str(small_raw), "--out", str(out), "--jobs", "1",
         "-q"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.staging-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _digests(out) == before
    # The next run cleans up after the killed one and publishes.
    assert _ingest(small_raw, out)[0] == 0
    assert not list(tmp_path.glob(".out.staging-*"))
    assert "new" in (out / "sources.csv").read_text("utf-8")


@pytest.mark.slow  # an ingest, beside a copy of the session's small folder
def test_jobs_do_not_change_the_output(published: Path, small_raw: Path, tmp_path: Path) -> None:
    # published: small_raw's first run, every source read (a full run) in one process (--jobs 1)
    assert json.loads((published / "run.json").read_text("utf-8"))["run"] == "full"
    result = CliRunner().invoke(main, ["ingest", "--raw", str(small_raw), "--out", str(tmp_path / "two"),
                                       "--jobs", "2", "--full"])
    assert result.exit_code == 0
    one, two = _digests(published), _digests(tmp_path / "two")
    assert {k: v for k, v in one.items() if k not in METADATA} == {k: v for k, v in two.items() if k not in METADATA}


@pytest.mark.slow  # an ingest and frictionless
def test_reference_that_uses_a_number_twice(tmp_path: Path) -> None:
    """September 2024 numbers both Offspring and Impending 702.175: the run still
    publishes valid keys, the first rule keeping the number."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "cr-2024-09-20.txt", raw)
    assert _ingest(raw, tmp_path / "out")[0] == 0
    report = validate(tmp_path / "out" / "datapackage.json")
    assert report.valid, report.flatten(["type", "note"])[:3]
    rules = (tmp_path / "out" / "rules.csv").read_text("utf-8")
    assert "\n702.175a,702.175,\"Offspring represents two abilities." in rules


@pytest.mark.slow  # a job run per release
@pytest.mark.parametrize("version", sorted(p.name for p in RAW.glob("cr-*.txt")))
def test_each_release_alone_publishes(version: str, tmp_path: Path) -> None:
    """Any release can be the reference, numbering glitches and all (1999 has 408.f)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / version, raw)
    code, output = _ingest(raw, tmp_path / "out")
    assert code == 0, output
    assert json.loads((tmp_path / "out" / "run.json").read_text("utf-8"))["reference"] == version[:-4]


_CELL_VALUES = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=False), st.booleans(),
    st.text(alphabet=st.sampled_from('ab ,"\n\r’é'), max_size=6),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.one_of(
    st.lists(_CELL_VALUES, min_size=1, max_size=8),
    st.lists(st.text(alphabet=st.sampled_from('ab ,"\n’'), max_size=6), min_size=1, max_size=8),
    st.lists(st.integers(), min_size=1, max_size=8),
), min_size=1, max_size=3), st.integers(min_value=1, max_value=4))
@example([["a\r", "b"], ["a\n"], ['"'], ["a,b", "a,b", "c"], [1, 2], [1.5, None], [True, 0], ["a", None]], 1)
def test_cells_of_a_column_are_those_of_each_value(columns: list[list[object]], limit: int) -> None:
    """The writer's column-at-a-time cells, with a memo small enough to be emptied
    on the way, are ``cell`` of each value."""
    quoted = Quoted(limit)
    for values in columns:
        assert list(cells(tuple(values), quoted)) == [cell(v) for v in values]
        assert len(quoted) <= limit


def _published_rules(out: Path, reference: str, rows: list[tuple[str, str, str]], sha: str = "aa") -> None:
    """A published folder as far as ``job.changes`` reads it: sources, rules and run.json."""
    out.mkdir()
    (out / "sources.csv").write_text(f"source_id,sha256,status\n{reference},{sha},ok\n", encoding="utf-8")
    with (out / "rules.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["number", "lineage_id", "text"])
        writer.writerows(rows)
    (out / "run.json").write_text(json.dumps({"reference": reference}), encoding="utf-8")


def _rules_rows(rows: list[tuple[str, str, str]]) -> list[tuple[object, ...]]:
    """Rows of the rules table (as ``emit.write`` gives them to the job) from (number, lineage_id, text)."""
    return [(number, number.split(".")[0], text, 1, "", lineage) for number, lineage, text in rows]


def test_changes_tell_a_re_traced_lineage_from_an_added_and_a_removed_rule(tmp_path: Path) -> None:
    """A run of new code on the same releases may follow a rule back another
    way (a new lineage_id): the rule was neither added nor removed nor moved."""
    from pipeline.job import changes

    ref = "cr-2026-08-07"
    old = tmp_path / "old"
    _published_rules(old, ref, [("500.5", "cr-1999:300.4", "As a step ends ..."),
                                ("500.5a", "cr-1999:300.3", "Effects that last until end of combat ..."),
                                ("702.1", "cr-1999:502.1", "Flying.")])
    new = _rules_rows([("500.5", "cr-1999:300.3", "As a step ends ..."),
                       ("500.5a", "cr-2026-01-16:500.5a", "Effects that last until end of combat ..."),
                       ("702.1", "cr-1999:502.1", "Flying.")])
    corpus = Corpus(sources=[Source(ref, f"{ref}.txt", "aa", 0)], elements=[], reference=ref)
    text = changes(old, new, corpus)
    assert "## Rules whose lineage was re-traced (the same rule, a new lineage_id) (2)\n\n- 500.5\n- 500.5a" in text
    assert "Rules added" not in text and "Rules removed" not in text and "Rules moved" not in text
    # A new reference release: rules are matched by lineage (500.5's went to 500.5a), and a
    # number that is both added and removed is one rule followed back another way (702.1).
    corpus.sources[0] = replace(corpus.sources[0], sha256="bb")
    new = _rules_rows([("500.5", "cr-1999:300.4", "As a step ends ..."),
                       ("500.5a", "cr-1999:300.3", "Effects that last until end of combat ..."),
                       ("702.1", "cr-2009-07-11:702.1", "Flying.")])
    text = changes(old, new, corpus)
    assert "## Sources changed (1)" in text and "re-traced (the same rule, a new lineage_id) (1)\n\n- 702.1" in text
    assert "Rules added" not in text and "Rules removed" not in text


def test_a_signal_during_the_staging_folders_removal_waits_until_it_is_gone(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A group-wide SIGTERM or Ctrl-C reaches the job twice; the second, coming
    while the staging folder is removed, must wait until it is gone. It must wait
    too when the job has another thread (the database's row sender): the kernel
    gives a signal to any thread that does not block it, and Python runs the
    handler in the main thread all the same, so blocking it in the main thread
    alone did not hold it."""
    out = tmp_path / "out"
    removing = shutil.rmtree

    def rmtree(path: Path, ignore_errors: bool = False) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, as the removal starts
        for _ in range(100_000):  # Python code runs on: a signal not held is raised here
            pass
        removing(path, ignore_errors=ignore_errors)

    other = threading.Event()
    sender = threading.Thread(target=other.wait, daemon=True)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt), publish.staging(out) as staging:
            (staging / "rules.csv").write_text("number\n", encoding="utf-8")
            monkeypatch.setattr(shutil, "rmtree", rmtree)  # the module publish.folder calls
            raise RuntimeError("a failed run")
    finally:
        other.set()
    assert not staging.exists()


def _copied_from_csv(csv_path: Path, table_name: str, target: Path) -> None:
    """The Parquet file as it was made before the writer took rows: read back from
    the CSV by Arrow, a block at a time, row groups of at least ``ROW_GROUP`` rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import csv as arrow_csv

    from pipeline.publish import parquet
    from pipeline.publish.tables import BY_NAME

    table = BY_NAME[table_name]
    schema = parquet.schema(table)
    types = {c: {"integer": pa.int64(), "number": pa.float64()}.get(table.type_of(c), pa.string())
             for c in table.columns}
    reader = arrow_csv.open_csv(csv_path, parse_options=arrow_csv.ParseOptions(newlines_in_values=True),
                                convert_options=arrow_csv.ConvertOptions(
                                    column_types=types, null_values=[""], strings_can_be_null=True,
                                    quoted_strings_can_be_null=True))
    with pq.ParquetWriter(target, schema) as writer:
        pending: list[Any] = []
        for batch in reader:
            pending.append(batch.cast(schema))
            if sum(b.num_rows for b in pending) >= parquet.ROW_GROUP:
                group = pa.Table.from_batches(pending, schema=schema)
                writer.write_table(group, row_group_size=group.num_rows)
                pending = []
        if pending:
            group = pa.Table.from_batches(pending, schema=schema)
            writer.write_table(group, row_group_size=group.num_rows)


def test_parquet_from_rows_is_byte_for_byte_the_copy_of_the_csv(tmp_path: Path) -> None:
    """The Parquet writer, given the rows and where each one's CSV line ends, writes
    the very bytes that reading the CSV back with Arrow made: the same nulls (an
    empty string, ``None``), types, record batches and row groups, across blocks of
    the CSV, row groups, a long line and text that is not ASCII."""
    from pipeline.publish import parquet
    from pipeline.publish.csv import write_csv
    from pipeline.publish.tables import BY_NAME

    words = ["", "a", "a,b", 'say "hi"', "line\nbreak", "cr\rhere", "Dandân’s", None, " spaced "]
    rows = [(f"src{i % 7}", words[i % 9], words[(i * 5) % 9] or "", "702.1", "lineage", "text",
             [97.5, 100, None, 0.1][i % 4], words[(i * 2) % 9]) for i in range(90_000)]
    rows[40_000] = ("big", "x" * 300_000, "", "", "", "", 1.0, "é" * 200_000)  # Arrow read no line over a block
    for name, table_rows in (("renumber_map", rows),
                             ("qa", [(f"q{i}", "100", "Q?" * (i % 50), "", "s", i, i + 1 if i % 3 else None, "", "1")
                                     for i in range(50_000)])):
        writer = parquet.Writer(tmp_path, BY_NAME[name])
        write_csv(tmp_path / f"{name}.csv", COLUMNS[name], table_rows, writer.write)
        assert writer.close() == len(table_rows)
        _copied_from_csv(tmp_path / f"{name}.csv", name, tmp_path / f"{name}.copied.parquet")
        assert writer.path.read_bytes() == (tmp_path / f"{name}.copied.parquet").read_bytes(), name
        assert writer.sha256 == hashlib.sha256(writer.path.read_bytes()).hexdigest()


def test_a_failed_parquet_write_leaves_no_file(tmp_path: Path) -> None:
    """A Parquet file whose rows fail part way (a value that is no number) is removed:
    a writer closed early would leave a readable, partial table."""
    from pipeline.publish import parquet
    from pipeline.publish.tables import BY_NAME

    writer = parquet.Writer(tmp_path, BY_NAME["qa"])
    good = [("q", "100", "Q?", "A.", "s", 1, 2, "", "1")] * 40_000
    writer.write(good, [100 * (i + 1) for i in range(len(good))])
    with pytest.raises(ValueError, match="not a number"):
        writer.write([("q", "100", "Q?", "A.", "s", "not a number", 2, "", "1")], [5_000_000])
        writer.close()
    assert not writer.path.exists()
