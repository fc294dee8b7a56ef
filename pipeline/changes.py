"""What changed between two versions of a rule: the one change function.

Every consumer that says how a rule changed calls ``change_of``: the numbering
stage (``rule_history.csv``), the job's ``changes.md``, ``diff``, ``trace`` and
the site. A core module: it imports only the core (number shapes, text
normalisers), never the packages, so any of them may call it.
"""

from __future__ import annotations

from pipeline.numbers import normalise as normalise_number
from pipeline.text import folded


def change_of(old_number: str, old_text: str, number: str, text: str) -> str:
    """How a rule changed between two versions: ``unchanged``, ``moved``
    (renumbered), ``edited`` (reworded) or ``moved+edited``. A change that only
    renumbers a cross-reference, or only changes quote style, is no edit.

    >>> change_of("702.40a", 'Entwine is "x" (see rule 601.2)', "702.41a", "Entwine is “x” (see rule 601.2c)")
    'moved'
    >>> change_of("702.87a", "Totem armor is", "702.88a", "Umbra armor is")
    'moved+edited'
    """
    moved = normalise_number(old_number) != normalise_number(number)
    edited = folded(old_text) != folded(text)
    return "moved+edited" if moved and edited else "moved" if moved else "edited" if edited else "unchanged"
