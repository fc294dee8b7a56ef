"""How the job keeps its memory down at scale: one string per distinct wording,
and alignment workers and a database process that are not copies of the job
(issue 14)."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import sqlite3
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from pipeline import run, workers
from pipeline.corpus import clean
from pipeline.ingest import read
from pipeline.ingest.read import Settings, read_source
from pipeline.publish import emit, meta
from pipeline.publish import sqlite as database
from pipeline.publish.rows import COLUMNS, tables
from tests.conftest import RAW

# Two neighbouring releases: most of their rules are worded alike.
PAIR = ("cr-2026-04-17.txt", "cr-2026-08-07.txt")


def test_equal_wordings_of_different_sources_are_one_string(tmp_path: Path) -> None:
    for name in PAIR:
        shutil.copy(RAW / name, tmp_path / name)
    paths = read.discover(tmp_path)
    shared = read.read_all(paths, tmp_path, Settings(jobs=1), None, None)
    alone = [read_source(p, tmp_path, Settings(jobs=1)) for p in paths]
    # The same elements, value for value ...
    assert [els for _, els, _ in shared] == [els for _, els, _ in alone]
    (_, older, _), (_, newer, _) = shared
    bodies = {el.body: el.body for el in older}
    repeated = [el.body for el in newer if el.body in bodies]
    assert len(repeated) > 0.9 * len(newer)
    # ... but a wording the newer release repeats is the older one's string object,
    # and so is a rule number.
    assert all(body is bodies[body] for body in repeated)
    numbers = {el.number_as_written: el.number_as_written for el in older if el.number_as_written}
    again = [el.number_as_written for el in newer if el.number_as_written in numbers]
    assert len(again) > 0.9 * len(numbers)
    assert all(number is numbers[number] for number in again)
    (_, plain_older, _), (_, plain_newer, _) = alone
    plain = {el.body: el.body for el in plain_older}
    assert not all(el.body is plain[el.body] for el in plain_newer if el.body in plain)


def test_fresh_workers_are_not_forked_from_the_job() -> None:
    with workers.pool(1) as executor:
        assert executor.submit(os.getppid).result() == os.getpid()
    with workers.pool(1, fresh=True) as executor:
        assert executor.submit(os.getppid).result() != os.getpid()


def test_the_collector_runs_less_often_during_a_build_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(RAW / "000_eb8496d4591d3274.txt", tmp_path / "dump.txt")
    before = gc.get_threshold()
    during: list[tuple[int, int, int]] = []
    real_clean = clean.clean

    def spy(*args: Any, **kwargs: Any) -> Any:
        during.append(gc.get_threshold())
        return real_clean(*args, **kwargs)

    monkeypatch.setattr(clean, "clean", spy)
    corpus = run.build(tmp_path, Settings(jobs=1))
    assert corpus.elements and during
    assert during[0] == (workers.COLLECT_EVERY, *before[1:])
    assert gc.get_threshold() == before


@pytest.mark.slow  # a build in workers
def test_a_workers_result_is_let_go_once_shared(tmp_path: Path) -> None:
    """Stage one is held once: the futures of the parser pool do not keep the
    workers' copies of the elements (strings of their own) until the pool closes."""
    names = ("cr-2025-09-19.txt", "cr-2026-01-16.txt", *PAIR)
    for name in names:
        shutil.copy(RAW / name, tmp_path / name)
    paths = read.discover(tmp_path)
    held: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        gc.collect()
        held.append(sum(1 for obj in gc.get_objects()
                        if isinstance(obj, Future) and obj.done() and not obj.cancelled()
                        and obj.exception() is None and obj.result() is not None))

    results = read.read_all(paths, tmp_path, Settings(jobs=2), None, progress)
    assert len(results) == len(names) and all(els for _, els, _ in results)
    # Called once per parsed file. By the last call every result has been shared,
    # and no future still holds one (but the last one's, by enumerate's reused
    # tuple, until the loop ends); held, they were all here.
    assert len(held) == len(names)
    assert held[-1] <= 1, held


def _contents(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table of a database (the full-text indexes too, not their shadow tables), row by row,
    with each value's SQLite type."""
    con = sqlite3.connect(path)
    try:
        names = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND (name NOT LIKE "
                                           "'search\\_%' ESCAPE '\\' AND name NOT LIKE '%\\_fts\\_%' ESCAPE '\\' "
                                           "OR name = 'search_in') ORDER BY name")]
        found = {}
        for name in names:
            cols = [c for _, c, *_ in con.execute(f'PRAGMA table_info("{name}")')]
            cells = ", ".join(f'typeof("{c}"), "{c}"' for c in cols)
            found[name] = con.execute(f'SELECT rowid, {cells} FROM "{name}" ORDER BY rowid').fetchall()
        return found
    finally:
        con.close()


def test_the_database_process_is_no_copy_of_the_job_and_is_sent_the_rows(tmp_path: Path) -> None:
    """``rules.sqlite`` is built by a process started from the small forkserver,
    sent the rows as the job writes them (a forked copy reading the job's rows
    copied the pages it touched: 475 MB of its own at 1x). Every table and the
    search index come out as they do when the rows are loaded in one process,
    value for value and type for type: a dump, a FAQ and a release, with Q&A,
    glossary, examples, cross-references, empty cells and numbers."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("000_eb8496d4591d3274.txt", "004_b7cb264e5db48bfb.txt", "cr-1999-04-23.txt"):
        shutil.copy(RAW / name, raw / name)
    corpus = run.build(raw, Settings(jobs=1))
    out = tmp_path / "out"
    emit.write(corpus, out)
    database.build(tables(corpus), tmp_path / "from-rows.sqlite", corpus.reference,
                   meta.of(corpus.sources, corpus.reference))
    written, direct = _contents(out / emit.DATABASE), _contents(tmp_path / "from-rows.sqlite")
    assert written.keys() == direct.keys()
    assert {"elements", "search", "search_in", "renumber_map", "keywords", "meta", "rules_fts", "glossary_fts"} <= \
        written.keys()
    for name, rows in direct.items():
        assert rows and written[name] == rows, name
    kinds = {kind for row in written["elements"] for kind in row[1::2]}
    assert {"integer", "text", "null"} <= kinds
    building = database.build_aside(tmp_path / "waiting.sqlite", corpus.reference)
    try:
        stat = Path(f"/proc/{building.pid}/stat").read_text()
        parent = int(stat[stat.rfind(")") + 2:].split()[1])
        assert parent != os.getpid()
    finally:
        building.stop()


def test_a_database_process_that_fails_is_reported_and_stops_taking_rows(tmp_path: Path) -> None:
    """The process cannot make its file (its folder is gone): the job's rows meet
    a closed pipe, and ``wait`` raises with the process's own reason instead of
    hanging or losing it."""
    building = database.build_aside(tmp_path / "gone" / "rules.sqlite", "")
    for _ in range(50):
        building.feed("sources", [("a",) * len(COLUMNS["sources"])] * 10_000)
    building.written("sources")
    with pytest.raises(OSError, match="unable to open database file"):
        building.wait()
    assert not building.alive()
    building.feed("elements", [("b",)])  # after the process: nothing is kept
    assert building.pending() == 0


def test_a_database_process_whose_job_went_before_its_rows_makes_nothing(tmp_path: Path) -> None:
    """A Ctrl-C while the process was being started can leave the job without
    it to stop: the job removes its staging folder and goes. The process, whose
    pipe then ends before any row came, makes no file and ends quietly (it had
    made an empty file, or failed to in the removed folder, and printed a
    traceback when it could not say so)."""
    path = tmp_path / "rules.sqlite"
    building = database.build_aside(path, "")
    # What the job's going does to the pipe: it ends, no row sent.
    assert building.close(timeout=30) == 0
    assert not path.exists()


def test_a_database_process_whose_job_went_after_its_rows_ends_quietly(tmp_path: Path) -> None:
    """The job went while the process built (its staging folder removed): the
    process fails, and finds nobody to tell; it ends without a traceback (exit 0)."""
    building = database.build_aside(tmp_path / "gone" / "rules.sqlite", "")
    building.hang_up()  # the job's end of the outcome pipe, as when it has gone
    building.feed("sources", [("a",) * len(COLUMNS["sources"])])
    building.written("sources")
    assert building.close(timeout=30) == 0


def test_a_ctrl_c_while_the_database_process_starts_is_taken_once_it_has() -> None:
    """Python's forkserver fails with a traceback of its own when a Ctrl-C cuts
    short the request for a process: it is held back until the request is done,
    then taken as before (KeyboardInterrupt), and the handler is what it was."""
    before = signal.getsignal(signal.SIGINT)
    done = []
    with pytest.raises(KeyboardInterrupt), workers.ctrl_c_held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        done.append("the block ran to its end")
    assert done == ["the block ran to its end"]
    assert signal.getsignal(signal.SIGINT) is before
