"""The command line through click's CliRunner: exit codes, output, files written."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline import errors
from pipeline.cli import ProgressBar, main
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


TOOLS = [["bench"], ["lineage-report"], ["lineage-stability"], ["tidy"], ["vocabulary"]]


@pytest.mark.parametrize("command", [[], *TOOLS, ["ingest"], ["resolve"], ["diff"], ["site"]])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_takes_h_and_help(command: list[str], flag: str) -> None:
    result = CliRunner().invoke(main, [*command, flag])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: main {' '.join(command)}".rstrip())


def test_the_command_list_names_every_command_with_a_whole_summary() -> None:
    text = CliRunner().invoke(main, ["-h"]).output
    listed = dict(line.split(None, 1) for line in text.split("Commands:\n")[1].splitlines())
    assert set(listed) == {"bench", "diff", "ingest", "lineage-report", "lineage-stability", "resolve", "search",
                           "site", "tidy", "trace", "vocabulary"}  # bench-job and bench-refs are hidden
    for name, summary in listed.items():
        assert summary.endswith(".") and not summary.endswith("..."), (name, summary)
        assert summary.count("(") == summary.count(")"), (name, summary)


def _exit_codes(help_text: str) -> dict[int, str]:
    """The codes an ``Exit codes: ...`` paragraph documents, with the words after each."""
    text = " ".join(help_text.split()).split("Exit codes: ")[1].split(". Only ")[0]
    return {int(code): words for code, words in re.findall(r"(?:^|; )(\d+) (.*?)(?=; \d+ |$)", text)}


@pytest.mark.parametrize("command", [[], ["ingest"]])
def test_the_exit_codes_in_the_help_are_those_errors_defines(command: list[str]) -> None:
    documented = _exit_codes(CliRunner().invoke(main, [*command, "--help"]).output)
    assert set(documented) == {int(code) for code in errors.ExitCode}
    assert documented[errors.Busy.exit_code].startswith("another run is writing")
    assert documented[errors.Shrinking.exit_code].startswith("refused, the dataset would shrink")
    assert documented[errors.ForeignOutput.exit_code].startswith("refused, --out holds files")


ERRORS = [cls for cls in vars(errors).values()
          if isinstance(cls, type) and issubclass(cls, errors.PipelineError) and cls is not errors.ParseError]


@pytest.mark.parametrize("error", ERRORS, ids=lambda cls: cls.__name__)
def test_a_library_error_exits_with_the_code_its_class_names(error: type[errors.PipelineError],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.tools import tidy

    def refuse(*args: object) -> list[str]:
        raise error("out/x.csv: what went wrong")

    monkeypatch.setattr(tidy, "tidy", refuse)
    result = CliRunner().invoke(main, ["tidy"])
    assert result.exit_code == error.exit_code
    assert result.output.startswith("Error: ") and "out/x.csv: what went wrong" in result.output
    assert len(result.output.splitlines()) == 1


def test_tidy_keeps_a_folder_the_pipeline_did_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.docx").write_bytes(b"mine")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["tidy", "out"])
    assert result.exit_code == 0, result.output
    assert result.output == f"kept {tmp_path / 'out'}: the pipeline did not write it (no .rules-pipeline)\n"
    assert (tmp_path / "out" / "report.docx").read_bytes() == b"mine"


def test_lineage_report_of_a_folder_with_no_dataset(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lineage-report", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {tmp_path / 'nowhere'} holds no published dataset")


def test_bench_refuses_a_corpus_that_is_not_a_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["bench", "--corpus", str(tmp_path / "a.txt")])
    assert result.exit_code == errors.ExitCode.USAGE == 2
    assert result.output == f"Error: {tmp_path / 'a.txt'}: not a folder (--corpus takes a folder of releases)\n"


def test_a_bar_cut_short_ends_its_line_and_shows_the_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a progress bar: the bar had hidden the cursor and
    left the line open, so the shell's cursor stayed hidden and "Error:" was
    printed on the bar's line."""
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("TERM", "xterm")
    bar = ProgressBar(True)
    with pytest.raises(KeyboardInterrupt), bar:
        bar("parse", 3, 10)
        raise KeyboardInterrupt
    shown = screen.getvalue()
    assert "\033[?25l" in shown and shown.endswith("\033[?25h\n"), repr(shown[-40:])


@pytest.mark.slow  # an ingest on a terminal, interrupted
def test_ctrl_c_on_a_terminal_leaves_the_cursor_shown_and_error_on_its_own_line(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    for path in sorted(RAW.glob("cr-20*.txt"))[-8:]:
        shutil.copy(path, raw / path.name)
    main_end, child_end = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "ingest", "--raw", str(raw), "--out", str(tmp_path / "out"), "--jobs", "1"],
        stdin=child_end, stdout=child_end, stderr=child_end, start_new_session=True,
        env={**os.environ, "TERM": "xterm"}, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(child_end)
    seen = b""
    deadline = time.monotonic() + 120
    while b"\033[?25l" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([main_end], [], [], 1)
        if ready:
            seen += os.read(main_end, 65536)
    assert b"\033[?25l" in seen, "no progress bar was drawn"
    os.killpg(proc.pid, signal.SIGINT)
    while True:
        try:
            chunk = os.read(main_end, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(main_end)
    assert proc.wait(timeout=120) == 130
    text = seen.decode("utf-8", "replace").replace("\r\n", "\n")
    assert text.rfind("\033[?25h") > text.rfind("\033[?25l")
    assert "\nError: interrupted" in text


def test_tidy_removes_a_killed_runs_staging_folder_and_its_marker(tmp_path: Path) -> None:
    """A run killed while publishing leaves ``.out.staging-<pid>`` and the marker beside
    it; ``make clean`` removed the folder and had left the marker for good."""
    out = tmp_path / "out"
    staging = tmp_path / ".out.staging-999999999"
    staging.mkdir()
    (staging / "rules.csv").write_text("number\n", encoding="utf-8")
    marker = tmp_path / ".out.staging-999999999.marker"
    marker.write_text("rules-pipeline staging folder of process 999999999, started at - (clock ticks after boot):\n",
                      encoding="utf-8")
    kept = tmp_path / ".out.staging-notes.marker.txt"  # a user's file of a like name
    kept.write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(main, ["tidy", str(out)])
    assert result.exit_code == 0, result.output
    assert not staging.exists() and not marker.exists() and kept.read_text(encoding="utf-8") == "mine"
