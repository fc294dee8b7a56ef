"""``make lineage-stability``: the rules followed again with every other release left out."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from pipeline import stability
from pipeline.job import run_job
from pipeline.run import Settings
from pipeline.trace import TraceError
from tests.conftest import RAW

# Three neighbouring releases: the even half is the whole chain, the odd half skips the middle one.
THREE = ["cr-2024-07-30.txt", "cr-2024-09-20.txt", "cr-2025-02-07.txt"]


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    raw = tmp_path_factory.mktemp("three") / "raw"
    raw.mkdir()
    for name in THREE:
        shutil.copy(RAW / name, raw / name)
    out = raw.parent / "out"
    run_job(raw, out, Settings(jobs=2), full=True)
    return raw, out


def test_a_thinned_chain_is_compared_rule_by_rule_and_nothing_of_the_users_changes(three) -> None:  # type: ignore[no-untyped-def]
    raw, out = three
    before = (_tree(raw), _tree(out))
    text = stability.report(raw, out)
    assert (_tree(raw), _tree(out)) == before
    odd, even = text.split("\neven releases only")
    # The even half of three releases is the whole chain: the same run, the same numbers.
    assert even.startswith(" (3 of 3): 0 of ") and "\n" not in even
    counted = re.match(r"odd releases only \(2 of 3\): (\d+) of (\d+) rules .* in (\d+) lineages", odd)
    assert counted, odd
    differ, common, groups = (int(n) for n in counted.groups())
    # Both of the odd half's releases are in the full chain: every rule of theirs is compared.
    rules = sum(1 for line in (out / "renumber_map.csv").read_text(encoding="utf-8").splitlines()[1:]
                if line.startswith(("cr-2024-07-30,", "cr-2025-02-07,")) and ",xref," not in line
                and line.split(",")[2] == "")
    assert common == rules > 5000
    listed = odd.splitlines()[1:]
    assert len(listed) == groups and differ == sum(int(re.search(r"\((\d+) rows\)$", s)[1]) for s in listed)


def test_thinning_needs_three_releases_and_their_raw_files(three, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    raw, out = three
    with pytest.raises(TraceError, match=f"{tmp_path} lacks the raw files of 3 of {out}'s releases"):
        stability.report(tmp_path, out)
    small = tmp_path / "small"
    small.mkdir()
    shutil.copy(RAW / THREE[0], small / THREE[0])
    run_job(small, tmp_path / "out", Settings(jobs=1), full=True)
    with pytest.raises(TraceError, match="has 1 official release: thinning needs three or more"):
        stability.report(small, tmp_path / "out")
