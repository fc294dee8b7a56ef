"""Structure from content: every bundled release gives the same rules with its
blank lines removed, doubled, added anywhere, or with other line endings."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.ingest.assemble import assemble, is_term
from pipeline.ingest.checks import source_checks
from pipeline.ingest.decode import decode
from pipeline.ingest.describe import effective_date, source_format
from pipeline.ingest.layout import layout
from pipeline.ingest.parse import Line, parse
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Element
from tests.conftest import RAW, examples

VERSIONS = sorted(RAW.glob("cr-*.txt"))
_KINDS = ("chapter", "section", "rule", "example", "glossary")


def _what_it_says(elements: list[Element]) -> list[tuple[str, str, str, str]]:
    """The rules, sections, examples and glossary of a source, without line numbers."""
    return [(el.kind, el.number_as_written, el.term, el.body) for el in elements if el.kind in _KINDS]


def _read(text: str) -> tuple[list[tuple[str, str, str, str]], str, str, list[str]]:
    lines = parse(text)
    elements = assemble("s", lines)
    failed = [str(c) for c in source_checks(lines, elements) if not c.passed]
    return _what_it_says(elements), source_format(elements), effective_date(elements), failed


# Each release's decoded text, and what ``_read`` makes of it.
Originals = dict[str, tuple[str, tuple[list[tuple[str, str, str, str]], str, str, list[str]]]]


@pytest.fixture(scope="module")
def originals() -> Originals:
    out = {}
    for path in VERSIONS:
        text = decode(path.read_bytes()).text
        out[path.stem] = (text, _read(text))
    return out


def _no_blank_lines(text: str) -> str:
    return "\n".join(ln for ln in text.split("\n") if ln.strip(" \t\f\v"))


def _blank_after_every_line(text: str) -> str:
    return "\n\n".join(text.split("\n"))


def _blank_lines_doubled(text: str) -> str:
    return "\n".join(ln + "\n" if not ln.strip() else ln for ln in text.split("\n"))


def _no_blank_before_contents(text: str) -> str:
    """The 2018 damage: the introduction runs straight into ``Contents``."""
    return text.replace("\n\nContents\n", "\nContents\n", 1)


@pytest.mark.parametrize("variant", [_no_blank_lines, _blank_after_every_line, _blank_lines_doubled,
                                     _no_blank_before_contents], ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("version", [p.stem for p in VERSIONS])
def test_blank_lines_change_nothing(version: str, variant: Callable[[str], str], originals: Originals) -> None:
    text, expected = originals[version]
    changed = variant(text)
    assert changed != text or variant is _no_blank_before_contents
    assert _read(changed) == expected


@pytest.mark.parametrize("version", [p.stem for p in VERSIONS])
def test_every_release_is_read_whole(version: str, originals: Originals) -> None:
    _, (said, fmt, date, failed) = originals[version]
    assert (fmt, date, failed) == ("cr_document", version.removeprefix("cr-"), [])
    kinds = {kind for kind, *_ in said}
    assert kinds >= {"chapter", "section", "rule", "glossary"}


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["CRLF", "CR"])
@pytest.mark.parametrize("version", ["cr-1999-11-01", "cr-2003-10-01", "cr-2024-09-20"])
def test_line_endings_change_nothing(version: str, newline: str, tmp_path: Path, originals: Originals) -> None:
    """Through the whole first stage (decode, parse, assemble, checks), from bytes on disk."""
    text, (said, fmt, date, _) = originals[version]
    (tmp_path / f"{version}.txt").write_bytes(text.replace("\n", newline).encode("utf-8"))
    src, elements, _ = read_source(tmp_path / f"{version}.txt", tmp_path, Settings(jobs=1))
    assert (src.status, src.format, src.effective_date) == ("ok", fmt, date)
    assert _what_it_says(elements) == said


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from([p.stem for p in VERSIONS]), seed=st.integers(0, 2**32 - 1),
       drop=st.floats(0, 1), add=st.floats(0, 0.5))
def test_any_blank_lines_removed_or_added(originals: Originals, version: str, seed: int, drop: float,
                                          add: float) -> None:
    """Blank lines removed at random, and added at random between any two lines."""
    text, expected = originals[version]
    rng = random.Random(seed)
    out = []
    for line in text.split("\n"):
        if not line.strip() and rng.random() < drop:
            continue
        out.append(line)
        if rng.random() < add:
            out.extend([""] * rng.randint(1, 3))
    assert _read("\n".join(out)) == expected


def test_contents_found_without_a_contents_heading(originals: Originals) -> None:
    """A run of numbered headings whose entries come again is a table of contents."""
    text, expected = originals["cr-2024-09-20"]
    assert "\nContents\n" in text
    assert _read(text.replace("\nContents\n", "\n", 1)) == expected


def test_regions_of_a_release_without_blank_lines(originals: Originals) -> None:
    text, _ = originals["cr-2026-08-07"]
    lines = parse(_no_blank_lines(text))
    shape = layout(lines)
    by_text = {ln.text.strip(): region for ln, region in zip(lines, shape.regions, strict=True)}
    assert shape.is_cr
    first = {region: next(ln.text for ln, r in zip(lines, shape.regions, strict=True) if r == region)
             for region in ("front", "toc", "body", "glossary", "credits")}
    assert first == {"front": "Magic: The Gathering Comprehensive Rules", "toc": "Contents",
                     "body": "1. Game Concepts", "glossary": "Glossary", "credits": "Credits"}
    assert by_text["100.1. These Magic rules apply to any Magic game with two or more players, including "
                   "two-player games and multiplayer games."] == "body"


@pytest.mark.parametrize(("text", "term"), [
    ("Abandon", True), ("“As though”", True), ("Team vs. Team Variant", True),
    ("Remove from the Game, Removed, Removed-from-the-Game Zone (Obsolete)", True),
    ("Speed is a value that a player can have. See rule 702.179, “Start Your Engines!”", False),
    ("     Arabian Nights(r) [symbol]", False), ("skipped", False),
])
def test_glossary_terms(text: str, term: bool) -> None:
    (line,) = parse(text)
    assert is_term(line) is term


def test_1999_glossary_entries_all_have_text(originals: Originals) -> None:
    """Numbered senses ("2. A counter is ...") and the expansion-symbol list belong
    to their entries (they were 34 entries without text)."""
    _, (said, *_) = originals["cr-1999-11-01"]
    glossary = {term: body for kind, _, term, body in said if kind == "glossary"}
    assert len(glossary) == 188
    assert [t for t, body in glossary.items() if not body] == []
    assert "\n2. A counter is a marker placed on a permanent" in glossary["Counter"]
    assert "Arabian Nights(r) [symbol]" in glossary["Expansion Symbol"]
    assert "Unglued(tm) [symbol]" in glossary["Expansion Symbol"]
    assert glossary["Untap"].startswith("1. To untap a tapped card is to rotate it back")


def test_rules_of_dashes_round_the_1999_glossary_are_noise(originals: Originals) -> None:
    """cr-1999-04-23 frames "Glossary" and "Index" with lines of dashes. The one
    under "Glossary" was read as the first term (with "Ability" as its text), and
    the one over "Index" as the end of the entry "Zone". An indented rule of
    dashes underlining the expansion-symbol table stays in its entry."""
    text, (said, *_) = originals["cr-1999-04-23"]
    glossary = {term: body for kind, _, term, body in said if kind == "glossary"}
    assert [t for t in glossary if not any(ch.isalnum() for ch in t)] == []
    assert next(iter(glossary)) == "Ability"
    assert glossary["Ability"].startswith('"Ability" and "effect" are often confused with one another.')
    assert glossary["Zone"] == 'A zone is any place that Magic cards can be during a game. See rule 217, "Zones."'
    assert "Expansion and Editions\n----------------------\nArabian Nights" in glossary["Expansion Symbol"]
    elements = assemble("s", parse(text))
    banners = {el.line_start for el in elements if el.kind == "noise" and el.noise_kind == "banner"}
    assert {1956, 1958, 3122} <= banners


def test_entries_printed_without_a_blank_line_between_them() -> None:
    """2020 and 2021 releases print "Concede" (or "Affinity") right after the entry
    before it; it is an entry of its own."""
    text = ("Glossary\nCompanion\nA keyword ability that allows a player to choose one creature card from "
            "outside the game. See rule 702.139, “Companion.”\nConcede\nTo quit the game.\n")
    elements = assemble("s", [*parse("Comprehensive Rules\n100.1 A rule.\n"),
                              *(Line(ln.kind, ln.lineno + 2, ln.text) for ln in parse(text))])
    assert [(el.term, el.body) for el in elements if el.kind == "glossary"] == [
        ("Companion", "A keyword ability that allows a player to choose one creature card from outside the game. "
                      "See rule 702.139, “Companion.”"),
        ("Concede", "To quit the game."),
    ]


def test_a_section_left_blank_is_a_section_not_a_rule(originals: Originals) -> None:
    """2008-2009 keep 211 empty so that the numbers after it stay: "211. [This
    section has been intentionally left blank ...]" is too long for a title, but
    a section all the same, with no rule in it."""
    text, _ = originals["cr-2008-02-01"]
    lines = parse(text)
    elements = assemble("cr-2008-02-01", lines, layout(lines))
    blank = [el for el in elements if el.number_as_written == "211"]
    assert [(el.kind, el.body) for el in blank] == [
        ("section", "[This section has been intentionally left blank to preserve the ordering of other rules.]")]
    after = [el for el in elements if el.number_as_written == "212"]
    assert [el.kind for el in after] == ["section"]
    assert not [el for el in elements if el.kind == "rule" and el.number_as_written.startswith("211")]


def test_a_title_whose_symbol_a_code_page_lost_is_still_a_title(originals: Originals) -> None:
    """Saved in cp1252, 2026's "702.186. ∞ (Infinity)" reads "702.186. ? (Infinity)":
    still the section's title, not a rule (the "?" is no end of a sentence)."""
    text, _ = originals["cr-2026-08-07"]
    saved = text.encode("cp1252", errors="replace").decode("cp1252")
    lines = parse(saved)
    infinity = [el for el in assemble("cp1252", lines, layout(lines)) if el.number_as_written == "702.186"]
    assert [(el.kind, el.body) for el in infinity] == [("section", "? (Infinity)")]
