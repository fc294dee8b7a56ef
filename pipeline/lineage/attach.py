"""The release a non-release copy belongs to.

Undated or partial sources (FAQ and web pages, truncated copies) never end a
lineage: the numbering stage attaches each to the release that shares most of
its (number, wording) pairs (``attach``), aligns it with that release
(``align``) and maps it through that release's lineages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pipeline.numbers import normalise as normalise_number
from pipeline.records import Element
from pipeline.text import folded


def rule_pairs(elements: Iterable[Element]) -> tuple[set[tuple[str, str]], set[str]]:
    """A release's (number, folded wording) pairs and its wordings, for ``attach``."""
    pairs = {(normalise_number(e.number_as_written), folded(e.text)) for e in elements if e.kind == "rule"}
    return pairs, {t for _, t in pairs}


def attach(
    rules: Iterable[Element], releases: Sequence[tuple[str, tuple[set[tuple[str, str]], set[str]]]]
) -> str:
    """The release an undated source belongs to: the one sharing most of its
    (number, wording) pairs, then most wordings; the earliest on a tie.
    ``releases`` are (source id, ``rule_pairs`` of its elements), oldest first."""
    own = [(normalise_number(el.number_as_written), folded(el.text)) for el in rules if el.number_as_written]
    if not own:
        return ""
    best, best_id = (0, 0), ""
    for source_id, (pairs, texts) in releases:
        score = (sum(p in pairs for p in own), sum(t in texts for _, t in own))
        if score > best:
            best, best_id = score, source_id
    return best_id
