"""Cleanup on the words the seeds glue together, and the game terms that must stay whole."""

from __future__ import annotations

import pytest

from pipeline.clean import Vocabulary, fix_and_explain, is_truncated

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


@pytest.mark.parametrize(("text", "cut"), [("Dredge is a", True), ("It resolves.", False),
                                            ("“Entwine [cost]” means “…”", False), ("(See rule 702.4)", False)])
def test_truncation(text: str, cut: bool) -> None:
    assert is_truncated(text) is cut
