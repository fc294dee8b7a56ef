"""The site tests' small published folder (two releases and a dump, by the real job) and
its site, each made once a session: the quick tests build and read these, the slow ones
the full dataset's (``site`` in tests/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.job import run_job
from pipeline.run import Settings
from pipeline.site.build import SiteResult, build_site
from tests.conftest import RAW

SMALL_SITE = ("cr-2003-10-01.txt", "cr-2004-10-01.txt", "002_92f1751b72fc2fc6.txt")


@pytest.fixture(scope="session")
def small_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two releases and a dump, published by the real job: quick to build a site from."""
    raw = tmp_path_factory.mktemp("small-site") / "raw"
    raw.mkdir()
    for name in SMALL_SITE:
        shutil.copy(RAW / name, raw)
    out = raw.parent / "out"
    run_job(raw, out, Settings(jobs=1), full=True)
    return out


@pytest.fixture(scope="session")
def small_site(small_out: Path, tmp_path_factory: pytest.TempPathFactory) -> SiteResult:
    """The site of ``small_out``, built once (never to be changed)."""
    return build_site(small_out, tmp_path_factory.mktemp("small-site-built") / "site")
