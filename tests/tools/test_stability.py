"""``make lineage-stability``: the rules followed again with every other release left out."""

from __future__ import annotations

import csv
import hashlib
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.job import run_job
from pipeline.run import Settings
from pipeline.tools import stability
from tests.conftest import RAW

pytestmark = pytest.mark.slow  # runs of the job with releases left out: make check, not make test

# Three neighbouring releases, saved under one name in three folders (so that a source's
# id depends on which of them a run reads): the even half is the whole chain, the odd
# half skips the middle one, and with it the step where 607.2p of 2021-02 was removed.
THREE = {"b/cr.txt": "cr-2021-02-15.txt", "a/cr.txt": "cr-2021-04-22.txt", "c/cr.txt": "cr-2021-07-23.txt"}


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    raw = tmp_path_factory.mktemp("three") / "raw"
    for name, release in THREE.items():
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(RAW / release, raw / name)
    out = raw.parent / "out"
    run_job(raw, out, Settings(jobs=2), full=True)
    return raw, out


def test_a_thinned_chain_is_compared_rule_by_rule_and_nothing_of_the_users_changes(three: tuple[Path, Path]) -> None:
    raw, out = three
    with (out / "sources.csv").open(encoding="utf-8", newline="") as fh:
        ids = {r["path"]: r["source_id"] for r in csv.DictReader(fh)}
    # The oldest release is read as "b/cr.txt" here, but as "cr" by a run of the odd half.
    assert ids == {"a/cr.txt": "cr", "b/cr.txt": "b/cr.txt", "c/cr.txt": "c/cr.txt"}
    before = (_tree(raw), _tree(out))
    text = stability.report(raw, out)
    assert (_tree(raw), _tree(out)) == before
    odd, even = text.split("\neven releases only")
    # The even half of three releases is the whole chain: the same run, the same numbers.
    assert even.startswith(" (3 of 3): 0 of ") and "\n" not in even
    # 607.2p (linked abilities of a planeswalker and its emblem) was removed in 2021-04;
    # across the step that skips that release it reads as kept.
    assert odd.splitlines()[1:] == ["  b/cr.txt 607.2p: ended in the full chain, 607.2p thinned (1 rows)"]
    counted = re.match(r"odd releases only \(2 of 3\): 1 of (\d+) rules \(0\.\d\d%\) .* in 1 lineages$",
                       odd.splitlines()[0])
    assert counted, odd
    # Every rule of both releases of the odd half is compared, under the full run's ids.
    with (out / "renumber_map.csv").open(encoding="utf-8", newline="") as fh:
        rules = sum(1 for r in csv.DictReader(fh) if r["source_id"] in ("b/cr.txt", "c/cr.txt")
                    and r["number_as_written"] and not r["title"] and r["method"] != "xref")
    assert int(counted[1]) == rules > 4000


def test_thinning_refuses_a_dataset_its_raw_folder_did_not_make(three: tuple[Path, Path], tmp_path: Path) -> None:
    raw, out = three
    runner = CliRunner()
    result = runner.invoke(main, ["lineage-stability", str(tmp_path), str(out)])
    assert result.exit_code == 1
    assert f"{tmp_path} lacks the raw files of 3 of {out}'s releases" in result.output
    result = runner.invoke(main, ["lineage-stability", str(out), str(raw)])  # the two folders swapped
    assert result.exit_code == 1 and "holds no published dataset" in result.output
    edited = tmp_path / "raw"
    shutil.copytree(raw, edited)
    with (edited / "a/cr.txt").open("ab") as fh:
        fh.write(b"\n")
    result = runner.invoke(main, ["lineage-stability", str(edited), str(out)])
    assert result.exit_code == 1 and f"{out} was not made from {edited} as it is now" in result.output


def test_thinning_needs_three_releases(tmp_path: Path) -> None:
    small = tmp_path / "raw"
    small.mkdir()
    shutil.copy(RAW / "cr-2021-02-15.txt", small / "cr-2021-02-15.txt")
    run_job(small, tmp_path / "out", Settings(jobs=1), full=True)
    result = CliRunner().invoke(main, ["lineage-stability", str(small), str(tmp_path / "out")])
    assert result.exit_code == 1 and "has 1 official release: thinning needs three or more" in result.output


def test_ctrl_c_exits_130_and_leaves_no_thinned_run_behind(three: tuple[Path, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    raw, out = three
    before = (_tree(raw), _tree(out))
    folders: list[Path] = []

    def interrupted(thin_raw: Path, *args: object, **kwargs: object) -> None:
        folders.append(thin_raw.parent)
        assert any(thin_raw.rglob("*.txt"))  # the thinned run's links are made
        raise KeyboardInterrupt

    monkeypatch.setattr(stability, "run_job", interrupted)
    result = CliRunner().invoke(main, ["lineage-stability", str(raw), str(out)])
    assert result.exit_code == 130, result.output
    assert "interrupted: nothing more was written" in result.output
    assert folders and not folders[0].exists()
    assert (_tree(raw), _tree(out)) == before
