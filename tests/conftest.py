"""Shared fixtures: one ingest of the bundled data for the whole test session."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline import emit
from pipeline.run import Corpus, Settings, build

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "raw"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Path]:
    out = tmp_path_factory.mktemp("out")
    corpus = build(RAW, Settings(jobs=2))
    emit.write(corpus, out)
    return corpus, out


@pytest.fixture(scope="session")
def table(bundled: tuple[Corpus, Path]):  # type: ignore[no-untyped-def]
    _, out = bundled

    def read(name: str) -> pd.DataFrame:
        return pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)

    return read
