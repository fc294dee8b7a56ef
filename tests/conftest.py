"""Shared fixtures: one ingest of the bundled data for the whole test session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import settings

from pipeline.job import run_job
from pipeline.run import Corpus, Settings

# CI runs the same examples every time: a failure there is reproducible here.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
DATA = Path(__file__).resolve().parent / "data"
# Two releases and two dumps: a quick folder for the publishing and safety tests.
SMALL = ["000_eb8496d4591d3274.txt", "003_cae9f8b12e336c00.txt", "cr-2024-09-20.txt", "cr-2026-08-07.txt"]


@pytest.fixture(scope="session")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Path]:
    """The bundled data built once, and published by the real job into a temp folder."""
    out = tmp_path_factory.mktemp("published") / "out"
    result = run_job(RAW, out, Settings(jobs=2), full=True)
    assert result.corpus is not None
    return result.corpus, out


@pytest.fixture(scope="session")
def table(bundled: tuple[Corpus, Path]):  # type: ignore[no-untyped-def]
    _, out = bundled

    def read(name: str) -> pd.DataFrame:
        return pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)

    return read


@pytest.fixture(scope="session")
def site(bundled: tuple[Corpus, Path], tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The static site built once from the bundled data's published folder."""
    from pipeline.site.build import build_site

    _, out = bundled
    return build_site(out, tmp_path_factory.mktemp("site") / "site")


@pytest.fixture
def small_raw(tmp_path: Path) -> Path:
    """A copy of the ``SMALL`` raw files, the test's own to change."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in SMALL:
        shutil.copy(RAW / name, raw / name)
    return raw
