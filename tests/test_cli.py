"""The command line through click's CliRunner: exit codes, output, files written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.publish.tables import TABLES
from tests.conftest import RAW


@pytest.fixture
def small_raw(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    (raw / "faq").mkdir(parents=True)
    shutil.copy(RAW / "000_eb8496d4591d3274.txt", raw / "faq")
    shutil.copy(RAW / "002_92f1751b72fc2fc6.txt", raw)
    return raw


@pytest.mark.parametrize("command", [[], ["ingest"], ["vocabulary"], ["trace"], ["search"]])
def test_help(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output
    if command == ["ingest"]:
        text = " ".join(result.output.split())  # wherever the help text wraps
        assert "75 another run is" in text and "3 finished" in text and "130 interrupted" in text


def test_vocabulary_of_no_official_document_is_an_error(small_raw: Path, tmp_path: Path) -> None:
    """An empty list printed would replace the shipped one (``make vocabulary``)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for raw in (empty, small_raw):  # nothing, and dumps only
        result = CliRunner().invoke(main, ["vocabulary", str(raw)])
        assert result.exit_code == 1 and "no official Comprehensive Rules document" in result.output
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(RAW / "cr-1999-04-23.txt", one)
    result = CliRunner().invoke(main, ["vocabulary", str(one)])
    assert result.exit_code == 0 and "\nentwine " not in result.output and "\ntrample " in result.output


def test_ingest_reads_subfolders_and_writes_every_table(small_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "--raw", str(small_raw), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "2 sources (2 parsed, 0 quarantined, 0 suspect)" in result.output
    names = {p.name for p in out.iterdir()}
    assert names >= {
        "elements.csv", "sources.csv", "sections.csv", "rules.csv", "renumber_map.csv", "qa.csv",
        "xrefs.csv", "glossary.csv", "rule_history.csv", "noise.csv", "rules.json", "rules.sqlite",
        "datapackage.json", "rules.schema.json", "run.json", "changes.md", "parquet",
    }
    assert sorted(p.name for p in (out / "parquet").iterdir()) == sorted(f"{t.name}.parquet" for t in TABLES)
    sources = pd.read_csv(out / "sources.csv", dtype=str, keep_default_na=False)
    assert sources.path.tolist() == ["002_92f1751b72fc2fc6.txt", "faq/000_eb8496d4591d3274.txt"]
    qa = pd.read_csv(out / "qa.csv")
    assert len(qa) == 21


def test_missing_raw_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["ingest", "--raw", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "no such folder" in result.output


def test_quarantined_source_exits_3(small_raw: Path, tmp_path: Path) -> None:
    (small_raw / "huge.txt").write_bytes(b"x" * 5000)
    result = CliRunner().invoke(
        main, ["ingest", "--raw", str(small_raw), "--out", str(tmp_path / "o"), "--max-file-bytes", "4000"]
    )
    assert result.exit_code == 3
    assert "quarantined: huge.txt: file is 5000 bytes, over the limit of 4000" in result.output
    assert "Traceback" not in result.output
