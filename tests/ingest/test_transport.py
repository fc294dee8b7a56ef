"""How stage one's results travel from the workers to the job (``read._Sent``,
``read._Shared``): each wording a worker sent before goes as its index, and the
job makes the same elements as reading in its own process does, whatever order
the results arrive in."""

from __future__ import annotations

import pickle
import random
import shutil
from pathlib import Path

import pytest

from pipeline.cache import SourceCache
from pipeline.ingest import read
from pipeline.ingest.read import Settings, discover, read_all, source_ids

RAW = Path(__file__).resolve().parents[2] / "raw"
# Three releases that share most of their wording and two scraped excerpts.
NAMES = ("cr-2009-07-11.txt", "cr-2009-09-04.txt", "cr-2010-02-01.txt", "000_eb8496d4591d3274.txt",
         "004_b7cb264e5db48bfb.txt")


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("raw")
    for name in NAMES:
        shutil.copy(RAW / name, folder / name)
    return folder


def _args(raw: Path) -> list[tuple[Path, str]]:
    paths = discover(raw)
    return list(zip(paths, source_ids(paths, raw), strict=True))


def test_sent_wordings_go_once_per_worker(raw: Path) -> None:
    sender = read._Sent()
    packed = [read._read_packed(p, raw, Settings(jobs=1), None, sid) for p, sid in _args(raw)]
    sent = []
    for result in packed:
        assert result is not None and not isinstance(result[0], bytes)
        sent.append(pickle.loads(sender.pack("pool-1", result[0])))
    starts = [start for _, start, *_ in sent]
    fresh = [len(new) for _, _, new, *_ in sent]
    # Each result's first index is what the worker had sent before it.
    assert starts == [sum(fresh[:i]) for i in range(len(sent))]
    # The first release goes whole; the next repeats most of its wording (and
    # numbers), and sends under a tenth of its three columns' strings anew.
    elements = [len(columns[0]) for *_, columns in sent]
    names = [p.name for p, _ in _args(raw)]
    first, second = names.index("cr-2009-07-11.txt"), names.index("cr-2009-09-04.txt")
    assert second == first + 1
    assert fresh[first] > elements[first] and fresh[second] < 0.1 * 3 * elements[second]
    # A new pool starts afresh (a forked worker inherits its parent's table).
    again = pickle.loads(sender.pack("pool-2", packed[1][0]))  # type: ignore[index]
    assert again[1] == 0 and len(again[2]) > fresh[1]


def test_results_in_any_order_make_the_same_elements(raw: Path) -> None:
    args = _args(raw)
    alone = [read.read_source(p, raw, Settings(jobs=1), None, sid) for p, sid in args]
    sender = read._Sent()
    blobs = []
    for k, (p, sid) in enumerate(args):
        result = read._read_packed(p, raw, Settings(jobs=1), None, sid)
        assert result is not None and not isinstance(result[0], bytes)
        blobs.append((k, (sender.pack("pool", result[0]), result[1])))
    random.Random(7).shuffle(blobs)
    shared = read._Shared()
    got = {}
    for k, blob in blobs:
        for task, result in shared.receive(k, blob):
            got[task] = result
    assert not shared._waiting
    assert [got[k][:2] for k in range(len(args))] == [result[:2] for result in alone]
    assert all(type(el) is type(alone[0][1][0]) for _, els, _ in got.values() for el in els)
    # One string object per wording across sources.
    texts = {}
    for _, els, _ in got.values():
        for el in els:
            assert texts.setdefault(el.text_raw, el.text_raw) is el.text_raw


def test_workers_read_what_one_process_reads(raw: Path, tmp_path: Path) -> None:
    paths = discover(raw)
    one = read_all(paths, raw, Settings(jobs=1), None, None)
    two = read_all(paths, raw, Settings(jobs=2), None, None)
    assert [r[:2] for r in two] == [r[:2] for r in one]
    # Through a cache: the workers write each entry whole, and a second run reads them back.
    cache = SourceCache(tmp_path / "cache")
    first = read_all(paths, raw, Settings(jobs=2), cache, None)
    again = read_all(paths, raw, Settings(jobs=2), cache, None)
    assert [r[:2] for r in first] == [r[:2] for r in again] == [r[:2] for r in one]
    assert all(seconds is None for _, _, seconds in again)
    assert all(seconds is not None for _, _, seconds in first)
