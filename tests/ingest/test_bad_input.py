"""Bad input never crashes a run or loses data: each case alone, then all together."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Element, Source
from tests.conftest import RAW, ROOT, Table

BAD = ROOT / "tests" / "bad"
EXPECTED = json.loads((BAD / "expected.json").read_text(encoding="utf-8"))


def _check(name: str, src: Source, elements: list[Element], expected: dict[str, Any]) -> None:
    assert src.status == expected["status"], src.error
    if "error" in expected:
        assert src.error == expected["error"]
        return
    for field in ("format", "encoding"):
        if field in expected:
            assert getattr(src, field) == expected[field]
    assert set(expected.get("flags", [])) <= set(src.flags)
    kinds: dict[str, int] = {}
    for el in elements:
        kinds[el.kind] = kinds.get(el.kind, 0) + 1
    assert kinds == expected["kinds"]
    by_line = {el.line_start: el for el in elements}
    for line, text in expected.get("text", {}).items():
        el = by_line[int(line)]
        assert text in (el.body, el.text_raw), (el.body, el.text_raw)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bad_input(name: str) -> None:
    src, elements, _ = read_source(BAD / name, BAD, Settings(jobs=1))
    _check(name, src, elements, EXPECTED[name])


def _make_generated(root: Path) -> dict[str, str]:
    """The cases made at test time; returns expected quarantine errors by path ("" = ingested)."""
    (root / "huge-line.txt").write_bytes(b"702.1a " + b"x" * (20 * 1024 * 1024) + b"\n")
    (root / "million-lines.txt").write_text("".join(f"entry {i}\n" for i in range(1_000_000)), encoding="ascii")
    (root / "x.txt").mkdir()
    (root / "x.txt" / "inside.txt").write_text("702.1a A file inside a folder named x.txt.\n", encoding="utf-8")
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    os.mkfifo(root / "pipe.txt")
    (root / "locked.txt").write_text("702.1a Unreadable.\n", encoding="utf-8")
    (root / "locked.txt").chmod(0)
    return {
        "huge-line.txt": "huge-line.txt: line 1: 20971527 characters, over the limit of 1000000",
        "million-lines.txt": "",
        "x.txt/inside.txt": "",
        "loop-a": "loop-a: cannot read: Too many levels of symbolic links",
        "loop-b": "loop-b: cannot read: Too many levels of symbolic links",
        "pipe.txt": "pipe.txt: not a regular file (named pipe)",
        "locked.txt": "locked.txt: cannot read: Permission denied",
    }


@pytest.fixture
def unreadable_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads a mode-000 file anyway; make it fail as it does for everyone else."""
    if os.geteuid() != 0:
        return
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)


@pytest.mark.slow  # raw/ again (parses and steps from the bundled run's cache), with a million-line file
def test_whole_collection_with_the_bundled_data(tmp_path: Path, bundled_cache: Path, table: Table,
                                                unreadable_as_root: None) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw)
    shutil.copytree(BAD, raw / "bad", ignore=shutil.ignore_patterns("*.json", "*.md"))
    shutil.copy(BAD / "unknown-format.json", raw / "bad")
    generated = raw / "generated"
    generated.mkdir()
    made = _make_generated(generated)
    out = tmp_path / "out"
    # The cache of the bundled data's run, where this run looks for its own: the bundled
    # sources' parses and the steps between their releases come from it (they depend on
    # nothing else in raw/: a source's entry is keyed by its bytes, path and id, a step's
    # by its two releases). Every stage that reads all the sources at once runs again, on
    # the bundled data with the bad inputs among it, and the bad inputs are read anew.
    shutil.copytree(bundled_cache, tmp_path / ".cache" / "out")
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "2"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    sources = pd.read_csv(out / "sources.csv", dtype=str, keep_default_na=False).set_index("path")
    expected_errors = {f"generated/{k}": f"generated/{v}" if v else "" for k, v in made.items()}
    expected_errors |= {f"bad/{k}": ("bad/" + v["error"]) if "error" in v else "" for k, v in EXPECTED.items()}
    expected_errors |= {p.name: "" for p in RAW.iterdir()}
    assert sources.error.to_dict() == expected_errors
    quarantined = [ln for ln in result.output.splitlines() if ln.startswith("quarantined: ")]
    assert sorted(quarantined) == sorted(f"quarantined: {e}" for e in expected_errors.values() if e)
    # The bundled sources come out exactly as they do alone.
    elements = pd.read_csv(out / "elements.csv", dtype=str, keep_default_na=False)
    alone = table("elements")
    mine = elements[elements.source_id.isin(set(alone.source_id))].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, alone)
    million = elements[elements.source_id == "million-lines"]
    assert len(million) == 1_000_000


def test_size_limits_are_settings(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "long.txt").write_text("702.1a " + "x" * 500 + "\n", encoding="ascii")
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(tmp_path / "o"),
                                       "--max-line-chars", "100"])
    assert result.exit_code == 3
    assert "quarantined: long.txt: line 1: 507 characters, over the limit of 100" in result.output
