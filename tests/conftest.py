"""Shared fixtures: the bundled data ingested once for the whole test session, a small
published folder made once and copied for each test that changes it, and the
hypothesis profiles.

``make test`` leaves out the tests marked ``slow`` (every release alone, the
million-line file, frictionless over the full dataset, the browser, the generated
lineages, stability, the wheel) and uses the quick ``default`` hypothesis profile;
``make check`` runs every test with the thorough ``ci`` profile
(``HYPOTHESIS_PROFILE=ci``). Both run in two pytest-xdist workers (``-n 2 --dist
loadfile --no-loadscope-reorder``: a file's tests in one worker, so a module's fixtures are
made once; the files handed out in the order of ``LONGEST_FIRST``, the longest first). The session's
costly folders (the bundled data published, its site, the small ones) are made once
for the whole session all the same: the first worker to ask makes it, the other
waits for it and reads it (``made_once``)."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd
import pytest
from click.testing import CliRunner
from filelock import FileLock
from hypothesis import settings

from pipeline.cli import main
from pipeline.job import run_job
from pipeline.run import Corpus, Settings

if TYPE_CHECKING:
    from pipeline.site.build import SiteResult

# The thorough profile: every example a test asks for, the same ones every time, so a
# failure in CI is reproducible here. The quick one tries a tenth of them, at random.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("default")
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
settings.load_profile(PROFILE)

# Started in the background by a shell (`nohup make check &`), pytest finds Ctrl-C
# ignored, and so would every process it starts: the tests of what a Ctrl-C does
# need it taken as a user's terminal gives it (three failed so in a fresh clone).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def examples(thorough: int) -> int:
    """How many examples a property test tries: ``thorough`` under the ``ci`` profile
    (``make check``), a tenth of them (at least 2) under the quick one (``make test``)."""
    return thorough if PROFILE == "ci" else max(2, thorough // 10)


ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
DATA = Path(__file__).resolve().parent / "data"
# Two releases and two dumps: a quick folder for the publishing and safety tests.
SMALL = ["000_eb8496d4591d3274.txt", "003_cae9f8b12e336c00.txt", "cr-2024-09-20.txt", "cr-2026-08-07.txt"]
# One release and one dump: quicker still, for the tests that damage outputs.
LIGHT = ["cr-2026-08-07.txt", "000_eb8496d4591d3274.txt"]

Bundled = tuple[Corpus, Path]
"""The bundled data's corpus and the folder the job published it in (never to be changed)."""
Table = Callable[[str], pd.DataFrame]
"""Reads one published table of the bundled data by name, every cell a string."""


T = TypeVar("T")

# The files whose tests take longest in ``make check``, longest first: they run first, so
# that the two workers end together (a file's tests run in one worker, and a long file
# handed out last ran on alone: 16 minutes where the tests took 12 minutes of each core).
LONGEST_FIRST: list[str] = [
    "tests/publish/test_publish.py",
    "tests/test_safety.py",  # second: mostly its own small folders, while the first makes the bundled
    "tests/ingest/test_bad_input.py",
    "tests/site/test_site_browser.py",
    "tests/ingest/test_properties.py",
    "tests/lineage/test_lineage_generated.py",
    "tests/site/test_site.py",
    "tests/lineage/test_lineage.py",
    "tests/lineage/test_history.py",
    "tests/ingest/test_structure.py",
    "tests/test_bundled.py",
    "tests/test_wheel.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of ``LONGEST_FIRST``'s files first, in its order; the rest as collected.
    pytest-xdist hands the files out in this order (``--no-loadscope-reorder``; it would
    order them by their number of tests)."""
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(ROOT).as_posix(), len(rank)))


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """``make(folder)`` on a new folder ``name``, once for the whole session: what it
    returns (paths into the folder, never to be changed). Under pytest-xdist the first
    worker to ask makes it, holding a file lock in the folder the workers of the session
    share, and leaves the value there pickled; the others wait for the lock and read it
    (the documented pattern: ``getbasetemp().parent`` and ``filelock``)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return make(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent
    value = shared / f"{name}.pickle"
    with FileLock(shared / f"{name}.lock"):
        if value.is_file():
            with value.open("rb") as f:
                made: T = pickle.load(f)
            return made
        made = make(tmp_path_factory.mktemp(name))  # in this worker's own folder, under the shared one
        _write_pickle(value, made)
        return made


def _write_pickle(path: Path, value: object) -> None:
    """``value`` pickled into ``path``, whole or not at all."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)


class _PickledCorpus(Corpus):
    """The bundled run's corpus in an xdist worker that did not make it: read from the
    pickle the worker that made it left, when a test first reads a field (two tests
    do: the worker that reads none never holds it)."""

    def __init__(self, path: Path) -> None:  # no field: each is read on first use
        self.__dict__["_pickle"] = path

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "_pickle" not in self.__dict__:
            raise AttributeError(name)
        with self.__dict__.pop("_pickle").open("rb") as f:
            self.__dict__.update(vars(pickle.load(f)))
        return getattr(self, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return _PickledCorpus, (self.__dict__["_pickle"],)


@pytest.fixture(scope="session")
def bundled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bundled:
    """The bundled data built once, and published by the real job into a temp folder.
    Every source is read anew (``full``); when a test of the session asks for
    ``bundled_cache``, the run keeps what it parsed and aligned in a cache for it."""
    wanted = any("bundled_cache" in getattr(item, "fixturenames", ()) for item in request.session.items)
    xdist = os.environ.get("PYTEST_XDIST_WORKER") is not None
    corpus: list[Corpus] = []  # the maker's own corpus, when this worker makes it

    def make(folder: Path) -> tuple[Corpus, Path]:
        out = folder / "out"
        result = run_job(RAW, out, Settings(jobs=2), full=True, cache_dir=_cache_of(out) if wanted else None)
        assert result.corpus is not None
        corpus.append(result.corpus)
        if not xdist:
            return result.corpus, out
        _write_pickle(folder / "corpus.pickle", result.corpus)
        return _PickledCorpus(folder / "corpus.pickle"), out

    made, out = made_once(tmp_path_factory, "published", make)
    return (corpus[0] if corpus else made), out


def _cache_of(out: Path) -> Path:
    """Where the command line keeps the cache of a run into ``out`` by default."""
    return out.parent / ".cache" / out.name


@pytest.fixture(scope="session")
def bundled_cache(bundled: Bundled) -> Path:
    """The cache of the ``bundled`` run, for a test that runs the job on the bundled data
    again: each source's parse and each step between two releases, as that run made them
    (writing it costs the run a few per cent). Never to be changed: copy it (a run prunes
    its cache)."""
    cache = _cache_of(bundled[1])
    assert any(cache.glob("*.pickle")), cache
    return cache


@pytest.fixture(scope="session")
def table(bundled: Bundled) -> Table:
    """Each table is parsed once a session (elements.csv takes a second or more); every
    caller gets its own copy, free to change."""
    _, out = bundled
    read: dict[str, pd.DataFrame] = {}

    def copy_of(name: str) -> pd.DataFrame:
        if name not in read:
            read[name] = pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)
        return read[name].copy()

    return copy_of


@pytest.fixture(scope="session")
def site(bundled: Bundled, tmp_path_factory: pytest.TempPathFactory) -> SiteResult:
    """The static site built once from the bundled data's published folder."""
    from pipeline.site.build import build_site

    _, out = bundled
    return made_once(tmp_path_factory, "site", lambda folder: build_site(out, folder / "site"))


def copy_raw(names: list[str], raw: Path) -> Path:
    """The bundled files ``names`` copied into a new folder ``raw``."""
    raw.mkdir(parents=True)
    for name in names:
        shutil.copy(RAW / name, raw / name)
    return raw


@pytest.fixture
def small_raw(tmp_path: Path) -> Path:
    """A copy of the ``SMALL`` raw files, the test's own to change."""
    return copy_raw(SMALL, tmp_path / "raw")


def _publish_once(names: list[str], root: Path, raw_name: str, out_name: str) -> Path:
    """``names`` ingested by the command line (one worker) from ``root/raw_name`` into
    ``root/out_name``, its parse cache in the default place, ``root/.cache/out_name``."""
    raw = copy_raw(names, root / raw_name)
    out = root / out_name
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return root


def _copy_published(made: Path, out_name: str, tmp_path: Path) -> Path:
    """A test's own copy of a folder published once: the folder and its default cache
    (``copytree`` keeps the files' times, so the copy is as intact as the original)."""
    shutil.copytree(made / out_name, tmp_path / out_name)
    shutil.copytree(made / ".cache" / out_name, tmp_path / ".cache" / out_name)
    lock = made / f"{out_name}.lock"  # left beside the folder by the run, as a real run leaves it
    if lock.exists():
        shutil.copy2(lock, tmp_path / lock.name)
    return tmp_path / out_name


@pytest.fixture(scope="session")
def _small_published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_once(tmp_path_factory, "small", lambda root: _publish_once(SMALL, root, "raw", "out"))


@pytest.fixture
def published(_small_published: Path, small_raw: Path, tmp_path: Path) -> Path:
    """``small_raw`` as published in ``tmp_path/out`` (cache in ``tmp_path/.cache/out``):
    the test's own copy of a folder ingested once per session."""
    return _copy_published(_small_published, "out", tmp_path)


@pytest.fixture(scope="session")
def _light_published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_once(tmp_path_factory, "light", lambda root: _publish_once(LIGHT, root, "light-raw", "light"))


@pytest.fixture
def light(_light_published: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(raw, out): one release and one dump, published (quicker than ``published``);
    the test's own copy of a folder ingested once per session."""
    raw = copy_raw(LIGHT, tmp_path / "light-raw")
    return raw, _copy_published(_light_published, "light", tmp_path)
