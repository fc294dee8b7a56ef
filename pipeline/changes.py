"""What changed between two versions of a rule: the one change function and the one
word diff.

Every consumer that says how a rule changed calls ``change_of``: the numbering
stage (``rule_history.csv``), the job's ``changes.md``, ``diff``, ``trace`` and
the site. Every consumer that shows how a wording changed calls ``word_ops``
(``word_diff`` is its text form, as ``trace`` and ``diff`` print it; the site
renders it as HTML, and its ``static/wordops.js`` is the same algorithm for the
in-browser comparison, held to this one by a test). A core module: it imports only the core (number shapes, text
normalisers), never the packages, so any of them may call it.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from pipeline.numbers import normalise as normalise_number
from pipeline.text import fold, folded


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


def word_ops(old: str, new: str) -> list[tuple[str, str]]:
    """A word diff as (op, words) runs: ``=`` kept, ``-`` removed, ``+`` added (a
    replacement is its removal, then its addition). Words that differ only in quote
    style are the same word (as they are no edit for ``change_of``), shown as the
    new version writes them. The matching is difflib's (``autojunk=False``).

    >>> word_ops("Totem armor is static", "Umbra armor is static")
    [('-', 'Totem'), ('+', 'Umbra'), ('=', 'armor is static')]
    >>> word_ops("its “card” here", 'its "card" here now')
    [('=', 'its "card" here'), ('+', 'now')]
    """
    a, b = old.split(), new.split()
    ops: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, [fold(w) for w in a], [fold(w) for w in b],
                                              autojunk=False).get_opcodes():
        if op == "equal":
            ops.append(("=", " ".join(b[j1:j2])))
            continue
        if i2 > i1:
            ops.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("+", " ".join(b[j1:j2])))
    return ops


def word_diff(old: str, new: str) -> str:
    """``word_ops`` inline, ``[-removed-] {+added+}``, as ``git diff --word-diff`` shows it.

    >>> word_diff("Play this ability only", "Activate this ability only")
    '[-Play-] {+Activate+} this ability only'
    >>> print(word_diff("its “card” here", 'its "card" here now'))
    its "card" here {+now+}
    """
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return " ".join(marks[op].format(words) for op, words in word_ops(old, new))
