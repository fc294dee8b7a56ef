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


def test_markup_and_spacing() -> None:
    assert fix_and_explain("the _Magic_   game", VOCAB) == ("the Magic game", ["markup_removed", "spaces_collapsed"])


@pytest.mark.parametrize(("text", "cut"), [("Dredge is a", True), ("It resolves.", False),
                                            ("“Entwine [cost]” means “…”", False), ("(See rule 702.4)", False)])
def test_truncation(text: str, cut: bool) -> None:
    assert is_truncated(text) is cut
