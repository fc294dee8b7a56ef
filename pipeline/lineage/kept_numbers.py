"""Rules under the number they kept.

Where a release kept its numbering (all but July 2009), an old rule and the
new rule under its number, in the section its own became, are one rule on less
wording than elsewhere (``_pair_kept_numbers``): one whose first sentence
stands in it (``_kept_heads``), one cut into itself and new subrules lettered
under it (``_split_into_subrules``), one reworded heavily (``_same_number``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rapidfuzz import fuzz

from pipeline.lineage.evidence import (
    Release,
    Step,
    Subjects,
    _contained,
    _first_sentence,
    _likeness,
    _near,
    _numbering_kept,
    _pair,
    _say_the_same,
    _subrules,
    similarity,
)
from pipeline.lineage.thresholds import (
    MIN_CONTAINED,
    MIN_CONTAINED_CHARS,
    MIN_FAR,
    MIN_SAME_NUMBER,
    MIN_SAME_SECTION,
    MIN_WORDS_SAME_NUMBER,
)


def _pair_kept_numbers(a: Release, b: Release, step: Step, score: Callable[[int, int], float]) -> None:
    """Pair each unpaired rule of ``a`` with the unpaired rule of ``b`` under its
    number in the section its own became, when ``score`` of their wordings is
    not 0 (given their indexes). Not in a renumbered document (July 2009): its numbers say nothing."""
    if not _numbering_kept(a, b, step):
        return
    taken = set(step.pairs.values())
    free_b = {b.numbers[j]: j for j in range(len(b.keys)) if j not in taken}
    for i in range(len(a.keys)):
        j = free_b.get(a.numbers[i])
        if (i in step.pairs or i in step.merged_into or j is None or j in taken
                or step.sections.get(a.sections_of[i]) != b.sections_of[j]):
            continue
        found = score(i, j)
        if found:
            _pair(step, i, j, found)
            taken.add(j)


def _kept_heads(a: Release, b: Release, step: Step) -> None:
    """A rule whose first sentence stands, word for word, in the rule that kept
    its number (same section) continues there, however much else moved in or
    out: when a rule is split and merged at once (transform, 2016), the pieces
    that went elsewhere are splits, what came in from elsewhere merged."""
    def score(i: int, j: int) -> float:
        old, new = a.keys[i], b.keys[j]
        head = _first_sentence(old)
        if len(head) >= MIN_CONTAINED_CHARS and head in new:
            return _likeness(old, new)
        return 0.0

    _pair_kept_numbers(a, b, step, score)


def _split_into_subrules(a: Release, b: Release, step: Step) -> None:
    """A rule cut into itself and new subrules lettered under it goes on in the
    rule that kept its number, if that still says much the same (a piece holds
    all of its words in the old rule, and so scores as a subset about as high
    as an unchanged rule): 2007's 104.1 kept "the Magic game uses only ..." and
    gave its fractions sentence to the new 104.1a; 2026-01's 500.5 ("as a step
    or phase ends ... effects expire") gave its combat and turn sentences to
    the new 500.5a and 500.5b. Or if the rule under its number now only
    announces the pieces (it ends with a colon, or says its steps, order or
    conditions are listed below), and is as alike letter by letter as
    ``_same_number``'s floor (``MIN_SAME_NUMBER``; its words are the header's
    own, so the share of longer words kept is not asked): 2006's
    402.8 (abilities function only in play "unless the ability is a
    characteristic-setting ability ...; an ability of an instant or sorcery;
    ...") opened a list, 402.8a-g, whose first piece has more of its opening
    words than the header does; 2003's 308.2 (the attack's legality, tapping,
    costs, mana abilities) is "to declare attackers, the active player follows
    the steps below, in order", over 308.2a-g, not 308.2c, which holds its
    tapping sentence word for word. A new subrule is one that continues no old
    rule yet, whatever its number: 2010-02's 113.6 (changing targets) cut its
    legal-target sentences into 113.6a, a number the old release had used for
    the modal rule, now 113.7."""
    taken = set(step.pairs.values())

    def score(i: int, j: int) -> float:
        old = a.keys[i]
        pieces = [b.keys[k] for k in _subrules(b, j) if k not in taken and len(b.keys[k]) >= MIN_CONTAINED_CHARS]
        # The pieces cut from the old rule: all of their words stand in it.
        cut = [p for p in pieces if fuzz.token_set_ratio(old, p) >= MIN_CONTAINED]
        if not cut:
            return 0.0
        # That rule now announces the pieces: its number says it is the same rule;
        if _announces(b.keys[j], old, cut):
            return _likeness(old, b.keys[j], MIN_SAME_NUMBER)
        # or the old rule's opening stays in it, not with a piece.
        head = _first_sentence(old)
        if fuzz.token_set_ratio(head, b.keys[j]) > max(fuzz.token_set_ratio(head, p) for p in cut):
            return _likeness(old, b.keys[j], MIN_SAME_SECTION)
        return 0.0

    _pair_kept_numbers(a, b, step, score)


# A rule that announces the list of subrules under it in words ("follows the
# steps below, in order", "in the order described below", "conditions (listed
# below)"), not with a colon.
_ANNOUNCES_IN_WORDS = re.compile(r"\b(?:steps|order|conditions)(?: listed| described)? below\b")


def _announces(header: str, old: str, pieces: Sequence[str]) -> bool:
    """Whether ``header`` announces a list that ``old`` was cut into (it ends
    with a colon, or says its steps, order or conditions are listed below): no
    piece is ``old`` on its own (a rule that went whole into the one item under
    a new "as follows:" goes on there)."""
    return ((header.endswith(":") or _ANNOUNCES_IN_WORDS.search(header) is not None)
            and all(fuzz.ratio(old, p) < MIN_FAR for p in pieces))


def _same_number(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """A rule left over under the same number in the same section, still about
    the same thing, was reworded heavily (a clause cut, a mechanic added): the
    numbering says it is the same rule, and the looser wording agrees. Unless
    the new rule is a piece cut from a neighbour that went on elsewhere (in
    2010-02 the new 702.12c is the second sentence of 702.12b, which kept its
    number; the old 702.12c, on choosing a landwalk ability, was removed)."""
    back = {j: i for i, j in step.pairs.items()}

    def score(i: int, j: int) -> float:
        old, new = a.keys[i], b.keys[j]
        matrix = similarity([old], [new], MIN_SAME_NUMBER)[1]
        if (not matrix[0, 0] or not subjects.same(old, new) or _subrules_left(a, b, step, i, j)
                or not _say_the_same(old, new, MIN_WORDS_SAME_NUMBER)):
            return 0.0
        cut_from = _contained(new, [a.keys[k] for k in _near(j, back, len(b.keys))])
        if cut_from is not None and _contained(new, [old]) is None:
            return 0.0
        return float(matrix[0, 0])

    _pair_kept_numbers(a, b, step, score)


def _subrules_left(a: Release, b: Release, step: Step, i: int, j: int) -> bool:
    """Whether the subrules of ``a``'s rule ``i`` went on, but none of them under
    ``b``'s rule ``j``: then the number says the two are not one rule. In 2020-11
    700.8 ("some cards refer to cards with a name originally printed in a particular
    set") took its subrules 700.8a-c under 206.3 as 206.3a-c; the new 700.8 is party."""
    went = [step.pairs[k] for k in _subrules(a, i) if k in step.pairs]
    return bool(went) and all(b.parents[m] != b.numbers[j] for m in went)
