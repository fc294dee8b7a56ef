"""The package as a user installs it: a wheel built from the checkout, installed in a fresh
virtual environment, run from a folder outside the checkout (a wheel that left the grammar
behind had failed there with FileNotFoundError, while every test of the checkout passed)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import RAW, ROOT

# Building, a virtual environment and an ingest: half a minute or more.
pytestmark = pytest.mark.slow

# A release and two dumps, the smallest there are: a quick ingest that still publishes rules.
FILES = ["cr-1999-04-23.txt", "000_eb8496d4591d3274.txt", "002_92f1751b72fc2fc6.txt"]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _build_wheel(tmp_path: Path) -> Path:
    """``pip wheel`` on a copy of what a clone holds (setuptools builds in its source
    folder, and the checkout is not the test's to write in)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("pipeline", "grammars"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp_path / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", wheels, cwd=src)
    (wheel,) = wheels.glob("rules_pipeline-*.whl")
    return wheel


def test_the_wheel_ingests_a_folder_from_outside_the_checkout(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    assert {"pipeline/grammars/dump.lark", "pipeline/cli.py", "pipeline/data/vocabulary.txt",
            "pipeline/data/history.json.gz"} <= names

    # A fresh environment, without the system's packages: the wheel goes in alone (no
    # network here), and its dependencies come from the project's environment through a
    # .pth file, which puts them after the environment's own site-packages, so that
    # `pipeline` can only be the wheel's. The project's pip installs it there (``--python``):
    # a pip of the environment's own (``ensurepip``) cost 7 s of CPU and is not what is tested.
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", "-q", wheel, cwd=tmp_path)
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp_path).stdout.strip())
    (site / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")

    work = tmp_path / "elsewhere"  # outside the checkout: nothing can be found relative to it
    raw = work / "dumps"
    raw.mkdir(parents=True)
    for name in FILES:
        shutil.copy(RAW / name, raw / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    where = _run(python, "-c", "import pipeline; print(pipeline.__file__)", cwd=work, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    assert not Path(where).is_relative_to(ROOT)

    done = _run(python, "-m", "pipeline", "ingest", "--raw", "dumps", "--out", "published", "--jobs", "1", "-q",
                cwd=work, env=env)
    assert "Traceback" not in done.stderr
    with (work / "published" / "rules.csv").open(encoding="utf-8", newline="") as fh:
        rules = {row["number"]: row for row in csv.DictReader(fh)}
    first_strike = "First strike is a static ability that modifies the rules for the combat damage step."
    assert rules["502.2a"]["text"] == first_strike
    assert rules["502.2b"]["sources"] == "002_92f1751b72fc2fc6;cr-1999-04-23"
    assert (work / "published" / "rules.sqlite").is_file()

    # The dumps alone: mapped through the history the wheel ships (issue 42, point 1).
    for name in FILES[:1]:
        (raw / name).unlink()
    done = _run(python, "-m", "pipeline", "ingest", "--raw", "dumps", "--out", "alone", "--jobs", "1",
                cwd=work, env=env)
    assert "reference cr-2026-08-07 (history shipped cr-2026-08-07)" in done.stdout
    report = json.loads((work / "alone" / "run.json").read_text("utf-8"))
    assert (report["reference"], report["history"]) == ("cr-2026-08-07", "shipped cr-2026-08-07")
    with (work / "alone" / "elements.csv").open(encoding="utf-8", newline="") as fh:
        now = {(row["source_id"], row["number_as_written"]): row["canonical_number"] for row in csv.DictReader(fh)
               if row["kind"] in ("rule", "section")}
    assert now["000_eb8496d4591d3274", "702.40a"] == "702.42a"
    assert now["002_92f1751b72fc2fc6", "502.32"] == "702.42"
