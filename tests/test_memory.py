"""How the job keeps its memory down at scale: one string per distinct wording,
and alignment workers that are not copies of the job (issue 14)."""

from __future__ import annotations

import gc
import os
import shutil
from concurrent.futures import Future
from pathlib import Path

from pipeline import clean, run, workers
from pipeline.run import Settings, read_source
from tests.conftest import RAW

# Two neighbouring releases: most of their rules are worded alike.
PAIR = ("cr-2026-04-17.txt", "cr-2026-08-07.txt")


def test_equal_wordings_of_different_sources_are_one_string(tmp_path: Path) -> None:
    for name in PAIR:
        shutil.copy(RAW / name, tmp_path / name)
    paths = run.discover(tmp_path)
    shared = run._read_all(paths, tmp_path, Settings(jobs=1), None, None)
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


def test_the_collector_runs_less_often_during_a_build_only(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shutil.copy(RAW / "000_eb8496d4591d3274.txt", tmp_path / "dump.txt")
    before = gc.get_threshold()
    during: list[tuple[int, int, int]] = []
    real_clean = clean.clean

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        during.append(gc.get_threshold())
        return real_clean(*args, **kwargs)

    monkeypatch.setattr(clean, "clean", spy)
    corpus = run.build(tmp_path, Settings(jobs=1))
    assert corpus.elements and during
    assert during[0] == (workers.COLLECT_EVERY, *before[1:])
    assert gc.get_threshold() == before


def test_a_workers_result_is_let_go_once_shared(tmp_path: Path) -> None:
    """Stage one is held once: the futures of the parser pool do not keep the
    workers' copies of the elements (strings of their own) until the pool closes."""
    names = ("cr-2025-09-19.txt", "cr-2026-01-16.txt", *PAIR)
    for name in names:
        shutil.copy(RAW / name, tmp_path / name)
    paths = run.discover(tmp_path)
    held: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        gc.collect()
        held.append(sum(1 for obj in gc.get_objects()
                        if isinstance(obj, Future) and obj.done() and obj._result is not None))

    results = run._read_all(paths, tmp_path, Settings(jobs=2), None, progress)
    assert len(results) == len(names) and all(els for _, els, _ in results)
    # Called once per parsed file. By the last call every result has been shared,
    # and no future still holds one (but the last one's, by enumerate's reused
    # tuple, until the loop ends); held, they were all here.
    assert len(held) == len(names)
    assert held[-1] <= 1, held
