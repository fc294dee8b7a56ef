"""Renumbering: every source mapped to the reference numbering, and each rule's history."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from pipeline.cli import main
from pipeline.corpus.dedupe import dedupe
from pipeline.lineage.align import RefIndex, prefetch
from pipeline.lineage.thresholds import SHORTLIST
from pipeline.records import Element
from pipeline.text import match_text
from tests.conftest import RAW, Bundled, Table
from tests.test_bundled import GLOSSARY_ERRATA

VERSIONS = sorted(p.stem for p in RAW.glob("cr-*.txt"))
REFERENCE = "cr-2026-08-07"
_SEE_RULE = re.compile(r"\brule ([57]0[12]\.\d+), [\"“](.+?)[.,]?[\"”]")


def _keywords(glossary: pd.DataFrame, source_id: str) -> dict[str, str]:
    """keyword (case-folded) -> section number, as the glossary of ``source_id`` names them."""
    rows = glossary[glossary.source_id == source_id]
    return {m.group(2).casefold(): m.group(1) for text in rows.text for m in _SEE_RULE.finditer(text)}


# Keywords folded into another section of the reference (checked by hand).
MERGED = {"bands with other": "702.22"}  # now 702.22b, a special form of Banding


def _reference_sections(elements: pd.DataFrame) -> dict[str, str]:
    """Title (case-folded) -> number of the reference's keyword sections."""
    rows = elements[(elements.source_id == REFERENCE) & (elements.kind == "section")]
    return {t.casefold(): n for t, n in zip(rows.text, rows.canonical_number, strict=True) if "." in n}


def _renamed(glossary: pd.DataFrame) -> dict[str, str]:
    """Obsolete keyword -> reference section, from the reference glossary ("Totem Armor (Obsolete)")."""
    rows = glossary[(glossary.source_id == REFERENCE) & glossary.term.str.endswith("(Obsolete)")]
    out = {}
    for term, text in zip(rows.term, rows.text, strict=True):
        m = re.search(r"See rule (\d{3}\.\d+)", text)
        if m:
            out[term.removesuffix("(Obsolete)").strip().casefold()] = m.group(1)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_glossary_keywords_map_to_the_reference_section(version: str, table: Table) -> None:
    glossary = table("glossary")
    elements = table("elements")
    reference = _reference_sections(elements) | _renamed(glossary) | MERGED
    rmap = table("renumber_map")
    rows = rmap[rmap.source_id == version]
    mapped = {
        n.replace(" ", "").rstrip("."): c for n, c in zip(rows.number_as_written, rows.canonical_number, strict=True)
    }
    # A number the release writes for two sections (2024-09's 702.175, Offspring and
    # Impending) maps to neither in renumber_map: each section's own, in elements.
    sections = elements[(elements.source_id == version) & (elements.kind == "section")]
    for number, reason in zip(rows.number_as_written, rows.reason, strict=True):
        if reason.startswith("written for"):
            mapped.pop(number.replace(" ", "").rstrip("."))
            for title, now in zip(sections[sections.number_as_written == number].text,
                                  sections[sections.number_as_written == number].canonical_number, strict=True):
                mapped[f"{number} {title.casefold()}"] = now
    named = _keywords(glossary, version)
    for (v, keyword), _ in GLOSSARY_ERRATA.items():
        if v == version:  # the release's glossary gives a wrong number; use the section's own
            titled = rows[rows.title.str.casefold() == keyword]
            named[keyword] = titled.number_as_written.iloc[0].rstrip(".")
    wrong = {}
    for keyword, number in named.items():
        expected = reference.get(keyword, "")
        got = mapped.get(number, mapped.get(f"{number} {keyword}", "<missing>"))
        if got != expected:
            wrong[keyword] = (number, got, expected)
    assert wrong == {}


def test_removed_keyword_is_unmapped_with_its_reason(table: Table) -> None:
    rmap = table("renumber_map")
    row = rmap[(rmap.source_id == "cr-2007-05-01") & (rmap.title == "Imprint")].iloc[0]
    assert (row.canonical_number, row.method) == ("", "unmapped")
    assert "ability word" in row.reason


# Rules of the seeds that no longer exist in the reference (checked by hand
# against cr-2026-08-07): they must stay unmapped, everything else must map.
REMOVED = {
    ("002_92f1751b72fc2fc6", "502.34"),   # Imprint: an ability word since 2009
    ("002_92f1751b72fc2fc6", "502.34a"),
    ("002_92f1751b72fc2fc6", "502.34b"),
    ("002_92f1751b72fc2fc6", "502.31b"),  # affinity reduces only generic mana: dropped
    ("002_92f1751b72fc2fc6", "502.36b"),  # multiple instances of scry: dropped when scry became an action
    ("004_b7cb264e5db48bfb", "701.24b"),  # proliferate: the player chose one kind of counter; dropped 2018
}


def test_seed_rules_map_and_their_wording_matches(table: Table, capsys: pytest.CaptureFixture[str]) -> None:
    elements = table("elements")
    seeds = elements[elements.source_id.str.match(r"^00\d_") & elements.kind.isin(["rule", "section"])]
    unmapped = {(s, n) for s, n, c in zip(seeds.source_id, seeds.number_as_written, seeds.canonical_number,
                                           strict=True) if not c}
    assert unmapped == REMOVED
    ref = elements[(elements.source_id == REFERENCE) & (elements.kind == "rule")].set_index("canonical_number")
    rules = seeds[(seeds.kind == "rule") & (seeds.canonical_number != "")]
    scores = sorted(
        (fuzz.WRatio(text, ref.loc[c, "text"]), s, n, c)
        for s, n, c, text in zip(rules.source_id, rules.number_as_written, rules.canonical_number, rules.text,
                                 strict=True)
    )
    with capsys.disabled():
        print("\nweakest seed matches:", *(f"{s}:{n}->{c} {x:.0f}" for x, s, n, c in scores[:5]), sep="\n  ")
    assert scores[0][0] >= 60


EXPECTED_MOVES = {
    "702.42a": ["502.32a", "702.39a", "702.40a", "702.41a", "702.42a"],  # Entwine
    "702.47a": ["502.40a", "702.44a", "702.45a", "702.46a", "702.47a"],  # Splice
    "702.89a": ["702.86a", "702.87a", "702.88a", "702.89a"],             # Totem armor, now Umbra armor
}


@pytest.mark.parametrize("number", sorted(EXPECTED_MOVES))
def test_history_shows_every_renumbering(number: str, table: Table) -> None:
    history = table("rule_history")
    rows = history[(history.canonical_number == number) & history.source_id.isin(VERSIONS)]
    numbers = list(dict.fromkeys(rows.number_as_written))
    assert numbers == EXPECTED_MOVES[number]
    changes = dict(zip(rows.source_id, rows.change, strict=True))
    assert [changes[v] for v in rows.source_id if changes[v] == "added"] == ["added"]
    dates = rows.effective_date.tolist()
    assert dates == sorted(dates)


def test_umbra_armor_renaming_is_an_edit(table: Table) -> None:
    history = table("rule_history")
    row = history[(history.canonical_number == "702.89a") & (history.source_id == "cr-2024-07-30")].iloc[0]
    assert row.change == "edited"  # the first release that says "Umbra armor"


def test_renumbered_cross_reference_alone_is_no_edit(table: Table) -> None:
    history = table("rule_history")
    rows = history[history.canonical_number == "702.42b"].set_index("source_id")
    # 2011 -> 2013: same wording, same number.
    assert rows.loc["cr-2013-05-01", "change"] == "unchanged"


def test_paragraph_under_the_wrong_heading_maps_to_its_own_rule(table: Table) -> None:
    e = table("elements").set_index("element_id")
    assert e.loc["003_cae9f8b12e336c00:L21", "parent_id"] == "003_cae9f8b12e336c00:L11"  # under "Double Strike"
    assert e.loc["003_cae9f8b12e336c00:L23", "canonical_number"] == "702.7b"  # First Strike's rule
    assert e.loc["003_cae9f8b12e336c00:L15", "canonical_number"] == "702.4b"  # Double Strike's own


def test_qa_sections_are_canonical(table: Table) -> None:
    qa = table("qa").set_index("qa_id")
    assert qa.loc["000_eb8496d4591d3274:L4", ["section", "section_as_written"]].tolist() == ["702.42", "702.40"]


def test_xref_ranges_expand_and_map(table: Table) -> None:
    x = table("xrefs")
    rows = x[x.element_id == "000_eb8496d4591d3274:L1"]
    assert rows[["target_as_written", "target", "target_canonical"]].values.tolist() == [
        ["700.2", "700.2", "700.2"],
        ["601.2b", "601.2b", "601.2b"],
        ["601.2e-g", "601.2e", "601.2f"],
        ["601.2e-g", "601.2f", "601.2g"],
        ["601.2e-g", "601.2g", "601.2h"],
    ]


def test_trace_prints_each_version_and_a_word_diff(bundled: Bundled) -> None:
    _, out = bundled
    result = CliRunner().invoke(main, ["trace", "702.89a", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Rule 702.89a: lineage cr-2010-06-18:702.86a, 52 versions, now 702.89a"
    assert any("cr-2021-04-22" in ln and "702.89a" in ln and "moved" in ln for ln in lines)
    assert "[-Totem-] {+Umbra+} armor is a static ability" in result.output


def test_trace_unknown_number(bundled: Bundled) -> None:
    _, out = bundled
    result = CliRunner().invoke(main, ["trace", "999.9z", "--out", str(out)])
    assert result.exit_code == 1
    assert "no rule 999.9z in any source" in result.output


def _el(sid: str, line: int, text: str, number: str = "702.1a", kind: str = "rule") -> Element:
    return Element(sid, line, line, kind, text, text=text, number_as_written=number)


def test_dedupe_folds_quote_style_and_spacing_but_not_numbers() -> None:
    a = _el("a", 1, "“Entwine [cost]” means  “You may choose all modes.”")
    b = _el("b", 5, '"Entwine [cost]" means "You may choose all modes."')
    c = _el("c", 9, '"Entwine [cost]" means "You may choose all modes."', number="702.2a")
    out = list(dedupe([a, b, c]))
    assert [e.duplicate_of for e in out] == ["", "a:L1", ""]


def test_every_numbered_chapter_has_a_renumber_map_row(table: Table) -> None:
    """One row per (source, number as written), chapters included: mapped by title
    (1999's chapter 3, Turn Structure, is chapter 5 today), or unmapped with why."""
    els = table("elements")
    chapters = els[(els.kind == "chapter") & (els.number_as_written != "")]
    rmap = table("renumber_map").set_index(["source_id", "number_as_written"])
    rows = rmap.loc[list(zip(chapters.source_id, chapters.number_as_written, strict=True))]
    assert len(rows) == len(chapters) and (rows.canonical_number.values == chapters.canonical_number.values).all()
    assert tuple(rmap.loc[("cr-1999-04-23", "3"), ["title", "canonical_number", "method"]]) == (
        "Turn Structure", "5", "title")
    old = rmap.loc[("cr-1999-04-23", "5")]
    assert (old.method, old.canonical_number) == ("unmapped", "") and "Additional Combat Rules" in old.reason


# Texts of few letters, so that many pairs score 50 or more; rules drawn from a few
# wordings, so that many tie.
_WORDING = st.text(alphabet="ab c", min_size=6, max_size=40)
_RULES = st.lists(_WORDING, max_size=8).flatmap(
    lambda wordings: st.lists(st.sampled_from(wordings), max_size=30) if wordings else st.just([]))


@given(rules=_RULES, texts=st.lists(_WORDING, max_size=40))
def test_shortlists_are_what_comparing_every_rule_finds(rules: list[str], texts: list[str]) -> None:
    """prefetch compares a text only to the rules of lengths that can score 50 and sorts
    only each row's best: the shortlists are those of every rule compared and sorted."""
    ref = RefIndex({}, {}, {}, {}, {}, [str(i) for i in range(len(rules))], rules, {})
    prefetch([match_text(t) for t in texts], ref)
    assert ref.shortlists.keys() == {key for t in texts if len(key := match_text(t)) >= 12}
    for key, shortlist in ref.shortlists.items():
        row = process.cdist([key], rules, scorer=fuzz.ratio, score_cutoff=50, dtype=np.float32)[0] \
            if rules else np.zeros(0, dtype=np.float32)
        best = np.argsort(-row, kind="stable")[:SHORTLIST]
        assert shortlist == [int(i) for i in best if row[i] > 0]
