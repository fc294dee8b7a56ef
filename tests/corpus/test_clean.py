"""Cleanup on the words the seeds glue together, and the game terms that must stay whole."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.corpus import clean
from pipeline.corpus.clean import Vocabulary, fix_and_explain, is_truncated
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
