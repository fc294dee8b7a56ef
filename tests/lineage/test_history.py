"""The history a run maps its dumps through when raw/ lacks the releases (issue 42, point 1):
the one the package ships, an earlier published dataset's (``--history``), or, stale
(a newer release in raw/), its releases joining raw/'s chain."""

from __future__ import annotations

import csv
import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.errors import DatasetError
from pipeline.job import run_job
from pipeline.lineage import history as histories
from pipeline.publish import meta as self_description
from pipeline.records import Source
from pipeline.run import Settings, build
from tests.conftest import RAW, Bundled, copy_raw

DUMPS = sorted(p.name for p in RAW.glob("00*.txt"))  # the five bundled scraped dumps, no release


def _rows(out: Path, name: str) -> list[dict[str, str]]:
    with (out / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _number(out: Path, source: str, written: str) -> str:
    (found,) = {r["canonical_number"] for r in _rows(out, "elements")
                if r["source_id"] == source and r["number_as_written"] == written and r["kind"] in ("rule", "section")}
    return found


def test_the_package_ships_a_compact_history() -> None:
    data = histories.shipped_bytes()
    assert 1_000_000 < len(data) < 4_000_000  # 2.8 MB on 2026-12-07: 72 releases, 3,093 lineages
    history = histories.shipped()
    assert history is not None and history.name == "shipped cr-2026-08-07"
    assert history.newest == ("cr-2026-08-07", "2026-08-07")
    assert len(history.doc["releases"]) == 72 and len(history.doc["lineages"]) == 3093


@pytest.mark.slow  # the history's 72 releases made into elements, 130,583 rules folded for attaching: 9 s
def test_two_dumps_alone_map_through_the_shipped_history(tmp_path: Path) -> None:
    raw = copy_raw(["000_eb8496d4591d3274.txt", "002_92f1751b72fc2fc6.txt"], tmp_path / "raw")
    corpus = build(raw, Settings(jobs=1), history=histories.shipped())
    assert corpus.reference == "cr-2026-08-07" and corpus.history_used == "shipped cr-2026-08-07"
    now = {(el.source_id, el.number_as_written): el.canonical_number for el in corpus.elements if el.kind == "rule"}
    assert now["000_eb8496d4591d3274", "702.40a"] == "702.42a"
    assert {s.source_id: s.numbering_like for s in corpus.sources} == {
        "000_eb8496d4591d3274": "cr-2012-02-01", "002_92f1751b72fc2fc6": "cr-2006-10-01"}
    sections = {m.number_as_written: m for m in corpus.mappings if m.source_id == "002_92f1751b72fc2fc6"}
    assert sections["502.32"].canonical_number == "702.42"
    # The history's releases lend their numbering; none of their elements or rows is the run's.
    assert {el.source_id for el in corpus.elements} == {s.source_id for s in corpus.sources}
    assert {m.source_id for m in corpus.mappings} <= {s.source_id for s in corpus.sources}
    assert {r["source_id"] for r in corpus.history} <= {s.source_id for s in corpus.sources}
    assert sum(el.kind == "rule" for el in corpus.reference_elements) == 2891  # the rows of rules.csv
    assert len(corpus.lineages) == 3093
    # The reference is dated though it is no source (rules.json's and rules.sqlite's meta had it empty).
    assert corpus.reference_date == "2026-08-07"
    assert self_description.of(corpus.sources, corpus.reference, corpus.reference_date).generated_at.startswith(
        "2026-08-07")


def test_a_history_is_used_whole_without_a_release_and_lends_releases_to_a_newer_one() -> None:
    lent = histories.History("h", {"releases": [{"id": "cr-2003-10-01", "date": "2003-10-01"},
                                                {"id": "cr-2026-08-07", "date": "2026-08-07"}]})

    def release(date: str) -> Source:
        return Source(f"cr-{date}", f"cr-{date}.txt", "", 0, format="cr_document", effective_date=date)

    assert histories.to_use([], lent) == (lent, True)
    assert histories.to_use([release("2027-01-15")], lent) == (lent, False)
    assert histories.to_use([release("2003-10-01"), release("2027-01-15")], lent) == (lent, False)
    # Newer, but holding every release of the history: it has nothing to lend (and is not read).
    every = [release("2003-10-01"), release("2026-08-07"), release("2027-01-15")]
    assert histories.to_use(every, lent) == (None, False)
    assert histories.to_use([release("2026-08-07")], lent) == (None, False)
    assert histories.to_use([release("1999-04-23")], lent) == (None, False)
    assert histories.to_use([], None) == (None, False)
    assert lent.apart_from({"000_x"}) is lent
    apart = lent.apart_from({"cr-2003-10-01"})
    assert [r["id"] for r in apart.doc["releases"]] == ["history/cr-2003-10-01", "cr-2026-08-07"]
    assert apart.newest == lent.newest == ("cr-2026-08-07", "2026-08-07")


def test_without_a_history_dumps_alone_stay_unmapped(tmp_path: Path) -> None:
    raw = copy_raw(["000_eb8496d4591d3274.txt"], tmp_path / "raw")
    corpus = build(raw, Settings(jobs=1), history=None)
    assert corpus.reference == "" and corpus.history_used == ""
    assert not any(el.canonical_number for el in corpus.elements if el.kind == "rule")


def test_a_release_in_raw_not_newer_than_the_history_leaves_it_unused(tmp_path: Path) -> None:
    raw = copy_raw(["cr-1999-04-23.txt", "000_eb8496d4591d3274.txt"], tmp_path / "raw")
    corpus = build(raw, Settings(jobs=1), history=histories.shipped())
    assert corpus.reference == "cr-1999-04-23" and corpus.history_used == ""
    assert not corpus.reference_elements and not corpus.lent_mappings


def test_a_history_that_is_not_one_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="bad.gz: not a history"):
        histories.load(b"not gzip", "bad.gz")
    with pytest.raises(DatasetError, match="format 99"):
        histories.load(gzip.compress(json.dumps({"format": 99}).encode()), "old.gz")
    folder = tmp_path / "published"
    folder.mkdir()
    (folder / "sources.csv").write_text("source_id,numbering_like,effective_date,era,sha256\n"
                                        "000_x,cr-2012-02-01,,2018-2021,ab\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"sources\.csv: no official release"):
        histories.published(folder)
    with pytest.raises(DatasetError, match=r"nowhere[/\\]sources\.csv: not found"):
        histories.published(tmp_path / "nowhere")


@pytest.fixture(scope="module")
def dumps_alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The five bundled dumps alone, published by the real job (the shipped history)."""
    root = tmp_path_factory.mktemp("dumps")
    raw = copy_raw(DUMPS, root / "raw")
    result = run_job(raw, root / "out", Settings(jobs=1))
    assert result.status == "published"
    return root / "out"


@pytest.mark.slow  # a job run on the five dumps, compared with the bundled data's
def test_dumps_alone_get_the_numbers_they_get_beside_every_release(dumps_alone: Path, bundled: Bundled) -> None:
    _, full = bundled
    report = json.loads((dumps_alone / "run.json").read_text("utf-8"))
    assert report["reference"] == "cr-2026-08-07" and report["history"] == "shipped cr-2026-08-07"
    assert json.loads((full / "run.json").read_text("utf-8"))["history"] == ""
    assert _number(dumps_alone, "000_eb8496d4591d3274", "702.40a") == "702.42a"
    assert _number(dumps_alone, "002_92f1751b72fc2fc6", "502.32") == "702.42"
    ids = {r["source_id"] for r in _rows(dumps_alone, "sources")}
    assert ids == {name.removesuffix(".txt") for name in DUMPS}
    for name in ("elements", "renumber_map", "rule_history", "qa", "sources"):
        theirs = [r for r in _rows(full, name) if r["source_id"] in ids]
        assert _rows(dumps_alone, name) == theirs, name
    theirs = [r for r in _rows(full, "xrefs") if r["element_id"].split(":L")[0] in ids]
    assert _rows(dumps_alone, "xrefs") == theirs
    assert _rows(dumps_alone, "lineages") == _rows(full, "lineages")
    # The reference's rules and sections; their sources and variants are the run's own.
    keep = ("number", "section", "text", "lineage_id")
    assert [[r[k] for k in keep] for r in _rows(dumps_alone, "rules")] == \
        [[r[k] for k in keep] for r in _rows(full, "rules")]
    assert [r["number"] for r in _rows(dumps_alone, "sections")] == [r["number"] for r in _rows(full, "sections")]
    mine, theirs = (json.loads((out / "rules.json").read_text("utf-8")) for out in (dumps_alone, full))
    variants = [[v for r in s["rules"] for v in r["variants"] if v["source_id"] in ids] for s in theirs["sections"]]
    assert [[v for r in s["rules"] for v in r["variants"]] for s in mine["sections"]] == variants
    examples = [[r["examples"] for r in s["rules"]] for s in theirs["sections"]]
    assert [[r["examples"] for r in s["rules"]] for s in mine["sections"]] == examples
    assert sum(map(len, variants)) == 260 and sum(len(e) for s in examples for e in s) == 277


@pytest.mark.slow  # reads the bundled dataset as a history, then a job run on two dumps
def test_history_maps_through_an_earlier_published_dataset(bundled: Bundled, tmp_path: Path) -> None:
    _, full = bundled
    raw = copy_raw(["000_eb8496d4591d3274.txt", "002_92f1751b72fc2fc6.txt"], tmp_path / "raw")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "1",
                                       "--history", str(full)])
    assert result.exit_code == 0, result.output
    assert f"history {full}" in result.output
    assert json.loads((out / "run.json").read_text("utf-8"))["history"] == str(full)
    assert _number(out, "000_eb8496d4591d3274", "702.40a") == "702.42a"
    assert _number(out, "002_92f1751b72fc2fc6", "502.32") == "702.42"
    # A folder with no release of its own cannot be a history: a clear error, nothing published.
    again = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(tmp_path / "o2"),
                                      "--history", str(out)])
    assert again.exit_code != 0 and "no official release" in again.output
    assert not (tmp_path / "o2" / "run.json").exists()


@pytest.mark.slow  # the 72 releases of the history chained again with a newer one
def test_a_stale_history_lends_its_releases_to_a_newer_raw(tmp_path: Path, bundled: Bundled,
                                                           bundled_cache: Path) -> None:
    """The history's steps are the bundled run's (the same releases: the same step
    keys), read from a copy of its cache; the step to the newer release is aligned."""
    _, full = bundled
    raw = tmp_path / "raw"
    copy_raw(["002_92f1751b72fc2fc6.txt"], raw)
    text = (RAW / "cr-2026-08-07.txt").read_bytes().decode("utf-8-sig")
    newer, count = re.subn(r"August 7, 2026", "January 15, 2027", text)
    assert count >= 1
    (raw / "cr-2027-01-15.txt").write_text(newer, encoding="utf-8")
    cache = tmp_path / "cache"
    shutil.copytree(bundled_cache, cache)
    result = run_job(raw, tmp_path / "out", Settings(jobs=2), cache_dir=cache)
    assert result.corpus is not None
    assert result.report["reference"] == "cr-2027-01-15"
    assert result.report["history"] == "shipped cr-2026-08-07"
    out = tmp_path / "out"
    # The 2004 excerpt still maps through the old releases raw/ lacks.
    assert {r["source_id"]: r["numbering_like"] for r in _rows(out, "sources")}["002_92f1751b72fc2fc6"] == \
        "cr-2006-10-01"
    assert _number(out, "002_92f1751b72fc2fc6", "502.32") == "702.42"
    mine = [r["canonical_number"] for r in _rows(out, "elements") if r["source_id"] == "002_92f1751b72fc2fc6"]
    theirs = [r["canonical_number"] for r in _rows(full, "elements") if r["source_id"] == "002_92f1751b72fc2fc6"]
    assert mine == theirs
    assert len(_rows(out, "rules")) == 2891


@pytest.mark.slow  # frictionless over a dataset with the reference's 2,891 rules and 3,093 lineages
def test_a_dataset_mapped_through_the_history_validates_with_frictionless(dumps_alone: Path) -> None:
    """lineages.csv names the history's releases (first_source, last_source, ended_in),
    which are no rows of sources.csv (one row per raw file): such a dataset's
    datapackage.json declares no foreign keys for them, and says why."""
    from frictionless import Package

    descriptor = json.loads((dumps_alone / "datapackage.json").read_text("utf-8"))
    lineages = next(r for r in descriptor["resources"] if r["name"] == "lineages")
    assert [k["fields"] for k in lineages["schema"]["foreignKeys"]] == ["split_from", "merged_into"]
    assert "mapped through the history shipped cr-2026-08-07" in descriptor["description"]
    descriptor["resources"] = [r for r in descriptor["resources"] if r["format"] == "csv"]
    report = Package.from_descriptor(descriptor, basepath=str(dumps_alone)).validate()
    assert report.valid, report.flatten(["type", "note"])[:3]


@pytest.mark.slow  # a job run on a dump, compared with the five dumps' run
def test_a_dump_named_as_a_release_of_the_history_keeps_its_own_rows(dumps_alone: Path, tmp_path: Path) -> None:
    """A cut copy of cr-2017-08-25 saved under that name is no release: the history's
    release of that name is lent as history/cr-2017-08-25, and the copy's rows are the
    ones it has under any other name."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "001_a2791e0f90a089aa.txt", raw / "cr-2017-08-25.txt")
    result = run_job(raw, tmp_path / "out", Settings(jobs=1))
    assert result.corpus is not None and result.corpus.reference == "cr-2026-08-07"
    (source,) = _rows(tmp_path / "out", "sources")
    assert (source["source_id"], source["numbering_like"]) == ("cr-2017-08-25", "history/cr-2017-08-25")

    def own(out: Path, name: str, sid: str) -> list[list[str]]:
        return [[v for k, v in r.items() if k not in ("source_id", "element_id", "parent_id", "duplicate_of")]
                for r in _rows(out, name) if r["source_id"] == sid]

    for name in ("elements", "renumber_map", "rule_history"):
        assert own(tmp_path / "out", name, "cr-2017-08-25") == own(dumps_alone, name, "001_a2791e0f90a089aa"), name


@pytest.mark.slow  # a job run on the five dumps (shared), then resolve
def test_resolve_on_a_dataset_mapped_through_the_history_tells_the_moves(dumps_alone: Path) -> None:
    """rule_history.csv of a run on dumps alone holds the dumps' rows only (the
    history's releases, where 702.40a moved, are not in the dataset): the citation is
    compared with the rule as it stands now (it answered 'same')."""
    result = CliRunner().invoke(main, ["resolve", "702.40a", "--source", "000_eb8496d4591d3274",
                                       "--out", str(dumps_alone)])
    assert result.exit_code in (0, 3), result.output
    assert result.output.strip() == "702.40a (000_eb8496d4591d3274) -> 702.42a: moved+edited", result.output
    result = CliRunner().invoke(main, ["resolve", "502.32", "--source", "002_92f1751b72fc2fc6",
                                       "--out", str(dumps_alone)])
    assert result.output.strip() == "502.32 (002_92f1751b72fc2fc6) -> 702.42: moved", result.output


@pytest.mark.slow  # a job run on the five dumps (shared), then the site
def test_the_site_of_a_dataset_mapped_through_the_history(dumps_alone: Path, tmp_path: Path) -> None:
    """lineages.csv of a run on dumps alone lists the history's lineages too, which no
    row of the dataset is in: they get no page (the site refused the dataset)."""
    from pipeline.site.build import build_site
    from tests.site.sitecheck import broken_links

    build_site(dumps_alone, tmp_path / "site")
    pages = {p.name for p in (tmp_path / "site" / "lineage").iterdir()}
    assert len(pages) == len({r["lineage_id"] for r in _rows(dumps_alone, "rule_history")})
    broken, checked = broken_links(tmp_path / "site")
    assert not broken and checked > 1000, broken[:3]
