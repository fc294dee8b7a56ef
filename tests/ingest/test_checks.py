"""Self-checks: the bundled data passes them all; a misread or damaged release fails
them, is published as ``suspect`` with its reasons, and the run exits 3."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.ingest.checks import release_checks, rule_order
from pipeline.ingest.decode import decode
from pipeline.records import Check, Element, Source
from tests.conftest import RAW, Bundled, Table


def test_bundled_sources_pass_every_check(table: Table, bundled: Bundled) -> None:
    sources = table("sources").set_index("source_id")
    assert set(sources.status) == {"ok"}
    for sid, checks in sources.checks.items():
        names = [part.split("=")[0] for part in checks.split("; ")]
        assert "numbered_lines" in names and "rule_order" in names, sid
        assert "=FAIL" not in checks, (sid, checks)
    releases = sources[sources.format == "cr_document"]
    assert all("rule_count=ok" in c and "glossary_text=ok" in c for c in releases.checks)
    assert "glossary_text=ok (739 of 739 entries have text)" in str(sources.at["cr-2026-08-07", "checks"])
    assert "numbered_lines=ok (3318 rule, section and chapter elements from 3318 numbered lines)" in str(
        sources.at["cr-2026-08-07", "checks"])
    _, out = bundled
    report = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (report["status"], report["exit_code"], report["problems"]) == ("ok", 0, [])
    assert report["stages"]["sources_suspect"] == 0
    by_id = {i["source_id"]: i for i in report["inputs"]}
    assert by_id["cr-1999-11-01"]["checks"]["glossary_text"] == {
        "passed": True, "detail": "188 of 188 entries have text"}
    package = json.loads((out / "datapackage.json").read_text(encoding="utf-8"))
    (resource,) = [r for r in package["resources"] if r["name"] == "sources"]
    assert {"name": "checks", "type": "string"} in [
        {k: f[k] for k in ("name", "type")} for f in resource["schema"]["fields"]]


def _lines(path: Path) -> list[str]:
    return decode(path.read_bytes()).text.split("\n")


@pytest.mark.slow  # two ingests of cut releases
def test_misread_and_cut_releases_are_suspect(tmp_path: Path) -> None:
    """A release whose rules end up as glossary entries (a stray "Glossary" heading
    after its first rules: the class of misread that once lost whole releases),
    and a release cut in half, next to good ones."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("cr-2019-05-03", "cr-2021-04-22", "cr-2024-09-20", "cr-2026-08-07"):
        shutil.copy(RAW / f"{name}.txt", raw)
    lines = _lines(RAW / "cr-2021-04-22.txt")
    first_rule = next(i for i, ln in enumerate(lines) if ln.startswith("100.2."))
    misread = lines[:first_rule] + ["Glossary"] + lines[first_rule:]
    (raw / "cr-2021-04-22__misread.txt").write_text("\n".join(misread), encoding="utf-8")
    glossary = next(i for i, ln in enumerate(lines) if ln == "Glossary" and i > first_rule)
    cut = lines[: first_rule + (glossary - first_rule) // 2] + lines[glossary:]
    (raw / "cr-2021-04-22__cut.txt").write_text("\n".join(cut), encoding="utf-8")

    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "2", "-q"])
    assert result.exit_code == 3, result.output
    problems = result.output.strip().splitlines()
    # The cut copy's contents also promise 42 sections its body no longer has.
    assert problems == [
        "suspect: cr-2021-04-22__cut.txt: numbered_lines: 1329 rule, section and chapter elements from 1371 "
        "numbered lines",
        "suspect: cr-2021-04-22__cut.txt: rule_count: 1217 rules; around it: cr-2021-04-22 2327, "
        "cr-2024-09-20 2774",
        "suspect: cr-2021-04-22__misread.txt: numbered_lines: 5 rule, section and chapter elements from 2663 "
        "numbered lines",
        "suspect: cr-2021-04-22__misread.txt: rule_count: 3 rules; around it: cr-2021-04-22 2327, "
        "cr-2024-09-20 2774",
    ]
    sources = pd.read_csv(out / "sources.csv", dtype=str, keep_default_na=False).set_index("source_id")
    # Both were read and published, suspect: the failed checks are under suspect, not
    # error (kept for quarantined files).
    assert sources.status.to_dict() == {
        "cr-2019-05-03": "ok", "cr-2021-04-22": "ok", "cr-2021-04-22__cut": "suspect",
        "cr-2021-04-22__misread": "suspect", "cr-2024-09-20": "ok", "cr-2026-08-07": "ok",
    }
    assert set(sources.error) == {""}
    assert sources.suspect.astype(bool).to_dict() == {
        "cr-2019-05-03": False, "cr-2021-04-22": False, "cr-2021-04-22__cut": True,
        "cr-2021-04-22__misread": True, "cr-2024-09-20": False, "cr-2026-08-07": False,
    }
    assert sources.loc["cr-2021-04-22__cut", "suspect"] == (
        "cr-2021-04-22__cut.txt: numbered_lines: 1329 rule, section and chapter elements from 1371 numbered lines; "
        "rule_count: 1217 rules; around it: cr-2021-04-22 2327, cr-2024-09-20 2774")
    assert "numbered_lines=FAIL" in str(sources.at["cr-2021-04-22__misread", "checks"])
    report = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (report["status"], report["exit_code"], report["problems"]) == ("suspect", 3, problems)
    # The reference stays the newest release that passed its checks; the suspect ones
    # are still published, marked.
    assert report["reference"] == "cr-2026-08-07"
    elements = pd.read_csv(out / "elements.csv", dtype=str, keep_default_na=False)
    mine = elements[elements.source_id == "cr-2021-04-22__misread"]
    covered = {n for a, b in zip(mine.line_start, mine.line_end, strict=True) for n in range(int(a), int(b) + 1)}
    assert {n for n, ln in enumerate(misread, 1) if ln.strip()} <= covered
    # An unchanged re-run says the same.
    again = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "2", "-q"])
    assert (again.exit_code, again.output.strip().splitlines()) == (3, problems)


def _release(sid: str, date: str) -> Source:
    return Source(sid, f"{sid}.txt", "0" * 64, 1, format="cr_document", effective_date=date)


@pytest.mark.parametrize(("counts", "failing"), [
    ([100, 105, 0, 110, 120], ["r2"]),  # a release with no rules
    ([100, 105, 60, 110, 120], ["r2"]),  # a release missing 45% of its rules
    ([100, 105, 230, 110, 120], ["r2"]),  # a release read twice over (its contents as rules)
    ([100, 130, 131, 180, 185], []),  # growth, however fast, is fine
    ([100, 95, 100], []),  # within the tolerance
    ([1000, 10], ["r1"]),  # two releases: the one with fewer rules is suspect
])
def test_rule_count_against_neighbours(counts: list[int], failing: list[str]) -> None:
    releases = [(_release(f"r{i}", f"20{10 + i}-01-01"), n) for i, n in enumerate(counts)]
    found = release_checks(releases)
    assert sorted(sid for sid, c in found.items() if not c.passed) == failing
    assert found["r0"].detail.startswith(f"{counts[0]} rules; around it: ")


def test_rule_count_needs_dates_and_company() -> None:
    assert release_checks([(_release("a", "2020-01-01"), 5)]) == {}
    assert release_checks([(_release("a", ""), 5), (_release("b", ""), 500)]) == {}


def _rules(*numbers: str) -> list[Element]:
    out = [Element("s", 1, 1, "section", "702.42. Entwine", number_as_written="702.42")]
    out += [Element("s", i, i, "rule", n, number_as_written=n, parent_line=1) for i, n in enumerate(numbers, 2)]
    return out


@pytest.mark.parametrize(("numbers", "passed", "detail"), [
    (("702.42a", "702.42b", "702.42c"), True, "0 of 3 rules out of order"),
    (("408.2d", "408.2e", "408.f", "408.g"), True, "0 of 4 rules out of order"),  # 1999's lost digit
    (("704.5z", "704.5aa"), True, "0 of 2 rules out of order"),
    (("702.42b", "702.42a", "702.42d", "702.42c", "702.42f", "702.42e"), False,
     "3 of 6 rules out of order: 702.42a after 702.42b, 702.42c after 702.42d, 702.42e after 702.42f"),
])
def test_rule_order(numbers: tuple[str, ...], passed: bool, detail: str) -> None:
    assert rule_order(_rules(*numbers)) == Check("rule_order", passed, detail)
