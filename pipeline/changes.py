"""What changed: the one change function, the one comparer and the one word diff.

Every consumer that says how a rule changed calls ``change_of``: the numbering
stage (``rule_history.csv``), ``trace``, and through ``compare`` (what changed
between two sets of rules) the job's ``changes.md``, ``diff`` and the site's
change pages. Every consumer that shows how a wording changed calls ``word_ops``
(``word_diff`` is its text form, as ``trace`` and ``diff`` print it; the site
renders it as HTML, and its ``static/wordops.js`` is the same algorithm for the
in-browser comparison, held to this one by a test). A core module: it imports only the core (number shapes, text
normalisers), never the packages, so any of them may call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

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


# The kinds of change ``compare`` tells, in the order counts are shown.
KINDS = ("added", "removed", "moved", "edited", "moved+edited", "split", "merged")


class Wording(Protocol):
    """A rule as one source has it: its number as written there, and its wording."""

    @property
    def number(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Worded:
    """A ``Wording`` made of two strings (a row of a table)."""

    number: str
    text: str


@dataclass(frozen=True, slots=True)
class Line:
    """What ``compare`` needs to know of a lineage: the date it started (its first
    source's), how it ended (``removed``, ``merged`` or "") and the date of the
    release it ended in, the lineage it was split from and the one it was merged
    into ("" for none, or for one the reader does not know)."""

    first: str = ""
    ended: str = ""
    ended_on: str = ""
    split_from: str = ""
    merged_into: str = ""


@dataclass(frozen=True, slots=True)
class Span:
    """The two sources compared: their dates, whether the older is a whole
    release, and when it is not, the date of the release it is numbered like
    ("" when it is numbered like none)."""

    old_date: str = ""
    new_date: str = ""
    whole: bool = True
    placed: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    """One rule that changed: its kind (one of ``KINDS``), its key (a lineage id,
    or whatever the two sets are keyed by), its number and wording in the older
    and the newer ("" where it has none), and for a split or a merge the lineage
    it was split from or merged into, with that one's number and wording in the
    older (split) or the newer (merged) source ("" when it has none there)."""

    kind: str
    key: str
    old_number: str
    new_number: str
    old_text: str
    new_text: str
    other: str = ""
    other_number: str = ""
    other_text: str = ""


def compare(
    keys: Iterable[str], old: Callable[[str], Wording | None], new: Callable[[str], Wording | None],
    lines: Callable[[str], Line] | None = None, span: Span = Span(),
) -> list[Change]:
    """Every change among ``keys`` from one set of rules to another (``old`` and
    ``new`` look a key's rule up in each, None when it has none), in the order
    of ``keys``. A rule in both changed as ``change_of`` says.

    Without ``lines`` the two sets are whole numberings (two runs' rules): a rule
    only in the newer is ``added``, one only in the older ``removed``.

    With ``lines`` (a key's lineage) they are two sources matched through their
    lineages: a rule only in the newer is ``split`` when its lineage was split
    from another after the older source, else ``added``; but when the older is no
    whole release (a cut copy, an FAQ page), a rule it lacks is a change only when
    its lineage is newer than the release the older is numbered like. A rule only
    in the older is ``removed`` or ``merged`` when its lineage ended after the
    older source and by the newer, else no change (the newer merely lacks it).

    >>> old = {"a": Worded("702.40a", "Entwine"), "b": Worded("702.9", "Gone")}.get
    >>> new = {"a": Worded("702.41a", "Entwine"), "c": Worded("702.1", "New")}.get
    >>> [(c.kind, c.key) for c in compare("acb", old, new)]
    [('moved', 'a'), ('added', 'c'), ('removed', 'b')]
    >>> lines = {"a": Line("1999"), "b": Line("1999", "merged", "2005", merged_into="a"),
    ...          "c": Line("2005", split_from="a")}
    >>> found = compare("acb", old, new, lines.__getitem__, Span("2004", "2005"))
    >>> [(c.kind, c.key, c.other, c.other_number) for c in found]
    [('moved', 'a', '', ''), ('split', 'c', 'a', '702.40a'), ('merged', 'b', 'a', '702.41a')]
    """
    changes = []
    for key in keys:
        a, b = old(key), new(key)
        if a and b:
            kind = change_of(a.number, a.text, b.number, b.text)
            if kind != "unchanged":
                changes.append(Change(kind, key, a.number, b.number, a.text, b.text))
        elif lines is None:
            if a or b:
                changes.append(Change("removed" if a else "added", key, a.number if a else "", b.number if b else "",
                                      a.text if a else "", b.text if b else ""))
        elif b:
            line = lines(key)
            if not span.whole and (not span.placed or line.first <= span.placed):
                continue  # missing from the copy, not added
            if line.split_from and (not span.old_date or line.first > span.old_date):
                parent = old(line.split_from)
                changes.append(Change("split", key, "", b.number, "", b.text, line.split_from,
                                      parent.number if parent else "", parent.text if parent else ""))
            else:
                changes.append(Change("added", key, "", b.number, "", b.text))
        elif a:
            line = lines(key)
            if line.ended and span.new_date and span.old_date < line.ended_on <= span.new_date:
                into = new(line.merged_into) if line.ended == "merged" and line.merged_into else None
                changes.append(Change(line.ended, key, a.number, "", a.text, "", line.merged_into if into else "",
                                      into.number if into else "", into.text if into else ""))
    return changes


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
