"""Cleanup on the words the seeds glue together, and the game terms that must stay whole."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.corpus import clean
from pipeline.corpus.clean import Vocabulary, fix_and_explain, is_truncated
from pipeline.records import Element, Source
from tests.conftest import Table, examples

VOCAB = Vocabulary.build([])  # the shipped base vocabulary, built from the bundled CR releases


@pytest.mark.parametrize(
    ("glued", "split"),
    [
        ("abilitybased", "ability based"),
        ("aboutAuras", "about Auras"),
        ("blockedas", "blocked as"),
        ("precludethat", "preclude that"),
        ("typein", "type in"),
    ],
)
def test_glued_words_are_split(glued: str, split: str) -> None:
    text, flags = fix_and_explain(f"the {glued} rule", VOCAB)
    assert text == f"the {split} rule"
    assert flags == ["words_split"]


@pytest.mark.parametrize(
    "term", ["planeswalker", "deathtouch", "lifelink", "landwalk", "typecycling", "megamorph", "untap",
             "basically", "carefully", "noncreature", "reevaluated"],
)
def test_game_terms_and_real_words_stay_whole(term: str) -> None:
    assert fix_and_explain(f"a {term} here", VOCAB) == (f"a {term} here", [])


def test_an_article_glued_to_two_words() -> None:
    """Seed 001 writes "an activation cost of atypecyclingability"."""
    text, flags = fix_and_explain("an activation cost of atypecyclingability. Any", VOCAB)
    assert (text, flags) == ("an activation cost of a typecycling ability. Any", ["words_split"])


@pytest.mark.parametrize("word", ["anew", "atop", "another", "ahead", "apart", "aside", "typecycling"])
def test_words_that_start_like_an_article_stay_whole(word: str) -> None:
    assert fix_and_explain(f"put {word} here", VOCAB) == (f"put {word} here", [])


@pytest.mark.parametrize(("text", "fixed"), [
    ('protection and say"this effect doesn’t remove" either', 'protection and say "this effect doesn’t remove" either'),
    ('the word "flanking"means', 'the word "flanking" means'),
    ("say “this”and that", "say “this” and that"),
    ('an odd "quote count"s here"', 'an odd "quote count"s here"'),  # unbalanced: left alone
    ('"Entwine [cost]" means "You may choose."', '"Entwine [cost]" means "You may choose."'),
])
def test_a_lost_space_at_a_quote(text: str, fixed: str) -> None:
    assert fix_and_explain(text, VOCAB)[0] == fixed


def test_markup_and_spacing() -> None:
    assert fix_and_explain("the _Magic_   game", VOCAB) == ("the Magic game", ["markup_removed", "spaces_collapsed"])


def test_doubled_markup_is_dropped_and_the_published_texts_keep_none(table: Table) -> None:
    """cr-2010-10-01 italicises with two underscores ("the __Magic: The
    Gathering__ Tournament Rules", 100.6 and 112.6k); they were kept. A blank
    to fill in, "Wolf in ________ Clothing" (2022 on), is text."""
    assert fix_and_explain("the __Magic: The Gathering__ Tournament Rules", VOCAB) == (
        "the Magic: The Gathering Tournament Rules", ["markup_removed"])
    els = table("elements")
    marked = els[els.text.str.contains(r"(?<![\w_])__?[^_\s]", regex=True)]
    assert marked.empty, marked.element_id.tolist()
    rule = els[(els.source_id == "cr-2010-10-01") & (els.number_as_written == "100.6")]
    assert rule.text.str.contains("in the Magic: The Gathering Tournament Rules").all() and len(rule) == 1
    # 2009-07-11's and 2011-07-15's "_Odyssey_TM" (a lost ™) reads as the releases round them write it.
    tombstone = els[els.text.str.startswith("A tombstone icon appears") & els.source_id.isin(
        ["cr-2009-07-11", "cr-2009-09-04", "cr-2011-07-15"])]
    assert tombstone.text.str.contains("many Odyssey(TM) block cards", regex=False).tolist() == [True] * 3
    blanks = els[els.text.str.contains("Wolf in ________ Clothing", regex=False)]
    assert len(blanks) >= 14


@pytest.mark.parametrize(("text", "cut"), [("Dredge is a", True), ("It resolves.", False),
                                            ("“Entwine [cost]” means “…”", False), ("(See rule 702.4)", False)])
def test_truncation(text: str, cut: bool) -> None:
    assert is_truncated(text) is cut


_PIECES = ["ability", "based", "about", "Auras", "blocked", "as", "the", "rule", "typecycling", "zzqqxx",
           "“", "”", '"', "_", " ", "  ", "\n", ".", "abilitybased", "aboutAuras", "blockedas", "qzqzqzqz"]


def _reference_fix(text: str, vocab: Vocabulary) -> tuple[str, list[str]]:
    """fix_and_explain with the fixers as they were first written: every fixer's
    patterns applied to every text, every word asked about (no shortcut for texts
    with nothing to fix)."""
    def lower(m: re.Match[str]) -> str:
        return " ".join(vocab.split(m.group(0)) or (m.group(0),))

    def camel(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        return f"{a} {b}" if vocab.known(a) and vocab.known(b.lower()) else m.group(0)

    return fix_and_explain(text, vocab, [
        ("markup_removed", lambda t, _: clean._UNDERSCORE.sub(r"\2", clean._UNDERSCORE_TM.sub(r"\1(TM)", t))),
        ("spaces_collapsed", clean.collapse_spaces),
        ("words_split", lambda t, _: clean._CAMEL.sub(camel, clean._LOWER_RUN.sub(lower, t))),
        # The curly-quote patterns first, always; space_quotes then finds nothing more for them.
        ("quote_spaced", lambda t, _: clean.space_quotes(clean._CURLY_OPEN.sub(" “", clean._CURLY_CLOSE.sub("” ", t)))),
    ])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
@example(["the", " ", "abilitybased", " ", "rule"])
@example(["say", '"', "this", '"', "and"])
@example(["say", "“", "this", "”", "and"])
@example(["the", " ", "_", "Magic", "_", " ", "game"])
@example(["the", " ", "_", "_", "Magic", "_", "_", " ", "game"])
def test_fixers_equal_their_unshortcut_reference(pieces: list[str]) -> None:
    """The fixers skip texts with nothing they could change (no underscore, no
    quote, no unknown long word) and remember each word's split; on any text they
    give what the patterns applied to everything give."""
    text = "".join(pieces)
    vocab = Vocabulary.build(["that ability based about Auras blocked"], ["zzqqxx " * 3, "qzqzqzqz " * 2])
    assert fix_and_explain(text, vocab) == _reference_fix(text, vocab)
    # known() is one set: the words of official texts and of the shipped list, short words, and words repeated 3 times.
    for word in {w.lower() for w in re.findall(r"[A-Za-z]+", text)}:
        assert vocab.known(word) == (word in clean._SHORT or word in vocab.official or vocab.counts[word] >= 3)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet="ab AB\n\t.é’_", max_size=12), max_size=8))
def test_words_and_counts_equal_a_text_at_a_time(texts: list[str]) -> None:
    """words_of reads all texts in one pass and word_counts the texts of equal
    multiplicity together; the words are those each text has on its own."""
    one_by_one = [[w.lower() for w in re.findall(r"[A-Za-z]+", t)] for t in texts]
    assert clean.words_of(texts) == {w for words in one_by_one for w in words}
    expected: dict[str, int] = {}
    for words in one_by_one:
        for w in words:
            expected[w] = expected.get(w, 0) + 1
    assert dict(clean.word_counts(texts)) == expected


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=" \t\n\x0b\x1c\u00a0\u3000ab.", max_size=16))
@example(" a ")
@example("a\u00a0")
@example("a  b")
def test_collapse_spaces_equals_its_line_by_line_form(text: str) -> None:
    """A one-line text without a tab or two spaces is only trimmed; any other is done line by line."""
    assert clean.collapse_spaces(text) == "\n".join(clean._SPACES.sub(" ", ln).strip() for ln in text.split("\n"))


def test_an_official_text_is_not_split_but_its_camel_case_is() -> None:
    """split_glued skips the unknown-word search in an official text (its words
    are known), not the camel-case one; a repeated other text is searched."""
    vocab = Vocabulary.build(["the ability based rule", "noted as ofTrample"], ["zzqqxx " * 3])
    assert vocab.texts == {"the ability based rule", "noted as ofTrample"}
    assert clean.split_glued("noted as ofTrample", vocab) == "noted as of Trample"
    assert clean.split_glued("the abilitybased rule", vocab) == "the ability based rule"
    assert fix_and_explain("the ability based rule", vocab) == ("the ability based rule", [])


def _element(kind: str, body: str, **fields: Any) -> Element:
    return Element("s", 1, 1, kind, body, body=body, **fields)


def test_clean_copies_each_element_once_with_its_kinds_fields() -> None:
    vocab = Vocabulary.build(["the Magic game"])
    memo: dict[str, tuple[str, tuple[str, ...]]] = {}
    qa = _element("qa", "Q:  the _Magic_ game", question="the  game?", answer="the _Magic_  game", flags=("x",))
    gloss = _element("glossary", "Tap  To turn", term="_Tap_")
    banner = _element("noise", "=====  ", noise_kind="banner")
    rule = _element("rule", "702.1 the _Magic_ game")
    got = clean.clean([qa, gloss, banner, rule, rule], vocab, memo)
    assert got[0] == qa._replace(text="Q: the Magic game", question="the game?", answer="the Magic game",
                                 flags=("x", "markup_removed", "spaces_collapsed"))
    assert got[1] == gloss._replace(text="Tap To turn", term="Tap", flags=("spaces_collapsed",))
    assert got[2] == banner._replace(text="=====  ")  # noise keeps its body as it is
    assert got[3] == got[4] == rule._replace(text="702.1 the Magic game", flags=("markup_removed",))
    assert memo["702.1 the _Magic_ game"] == ("702.1 the Magic game", ("markup_removed",))


def test_the_dated_releases_are_cleaned_first_oldest_first() -> None:
    """The lineage aligns each release as soon as it is clean: the dated official
    documents come first, by date then id; the rest after, in their own order."""
    sources = [Source("faq", "faq.txt", "a", 1, format="faq_page"),
               Source("new", "new.txt", "b", 1, format="cr_document", effective_date="2026-08-07"),
               Source("undated", "undated.txt", "c", 1, format="cr_document"),
               Source("old", "old.txt", "d", 1, format="cr_document", effective_date="2025-09-19"),
               Source("b-copy", "b.txt", "e", 1, format="cr_document", effective_date="2026-08-07")]
    per_source = [[Element(s.source_id, 1, 1, "rule", "702.2a Flying is evasion.", body="Flying is evasion.",
                           number_as_written="702.2a", text="Flying is evasion.")] for s in sources]
    got = [(i, src.source_id, [el.source_id for el in els]) for i, src, els in clean.clean_sources(sources, per_source)]
    assert [i for i, _, _ in got] == [3, 4, 1, 0, 2]
    assert all(sid == sources[i].source_id and ids == [sid] for i, sid, ids in got)
