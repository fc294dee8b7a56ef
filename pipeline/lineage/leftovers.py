"""Rules left over once wording and place have spoken.

An old and a new rule that share an example no other rule has
(``_same_examples``), an old rule whose examples went into a rule that
continues another (``_examples_went_with``), the few rules left of a section
rewritten in place (``_leftovers_in_place``, ``_leftovers_where_it_went``), a
rule that moved with its neighbour (``_moved_with_its_block``), and a keyword's
definition (``keyword_defined``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.lineage.evidence import (
    Release,
    Step,
    Subjects,
    _left_over,
    _likeness,
    _numbering_kept,
    _pair,
    _votes,
    similarity,
)
from pipeline.lineage.thresholds import (
    KEYWORD_SECTIONS,
    MAX_IN_PLACE,
    MAX_SPREAD,
    MIN_FAR,
    MIN_SAME_EXAMPLE,
    MIN_SAME_NUMBER,
    MIN_SAME_SECTION,
    MIN_SPREAD_LETTERS,
)


def _same_examples(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """A rule reworded beyond its wording's similarity still comes with its
    examples: an old and a new rule, both unpaired, that share an example found
    under no other rule of either release are one rule (the double-faced card
    rule 711.5 of 2016, rewritten round its Clone and Cytoshape examples), if
    their wordings are still about the same thing."""
    holders_a: dict[str, set[int]] = defaultdict(set)
    holders_b: dict[str, set[int]] = defaultdict(set)
    for holders, rel in ((holders_a, a), (holders_b, b)):
        for k, under in enumerate(rel.examples):
            for example in under:
                holders[example].add(k)
    taken = set(step.pairs.values())
    for example, olds in holders_a.items():
        news = holders_b.get(example, set())
        if len(olds) != 1 or len(news) != 1:
            continue
        (i,), (j,) = olds, news
        if i in step.pairs or j in taken or not subjects.same(a.keys[i], b.keys[j]):
            continue
        alike = _likeness(a.keys[i], b.keys[j], MIN_SAME_NUMBER)
        if alike:
            _pair(step, i, j, alike)
            taken.add(j)


def _examples_went_with(a: Release, b: Release, step: Step) -> None:
    """An old rule left over whose examples all stand, reworded or not, under
    one new rule that continues another lineage, and under no free one, was
    merged there: 2009's trample rule 502.9e ("it's legal to assign damage
    from those without trample so as to maximize ...") went into 702.17b with
    its example (a 2/2 blocking a 1/1 and a 3/3 with trample), though its
    words alone are too unlike 702.17b's to say so."""
    taken = set(step.pairs.values())
    under = [(j, example) for j, examples in enumerate(b.examples) for example in examples]
    if not under:
        return
    texts = [example for _, example in under]
    for i, examples in enumerate(a.examples):
        if not examples or i in step.pairs or i in step.merged_into:
            continue
        holders = set()
        for example in examples:
            found = process.extractOne(example, texts, scorer=fuzz.ratio, score_cutoff=MIN_SAME_EXAMPLE)
            holders.add(under[found[2]][0] if found else -1)
        if len(holders) == 1 and (j := holders.pop()) in taken:
            step.merged_into[i] = j


def _best_first(a: Release, b: Release, step: Step, rows: list[int], cols: list[int], cutoff: float,
                subjects: Subjects, refused: Callable[[int, int], bool] = lambda i, j: False) -> None:
    """Pair ``rows`` with ``cols`` greedily, most similar first, one to one
    (not a pair of indexes ``refused``)."""
    taken = set(step.pairs.values())
    xs, ys = [a.keys[i] for i in rows], [b.keys[j] for j in cols]
    straight, matrix = similarity(xs, ys, cutoff)
    matrix = subjects.drop_others(matrix, xs, ys)
    for r, c in sorted(np.argwhere(matrix > 0).tolist(),
                       key=lambda rc: (-matrix[rc[0], rc[1]], -straight[rc[0], rc[1]], rc[0], rc[1])):
        i, j = rows[r], cols[c]
        if i not in step.pairs and j not in taken and not refused(i, j):
            _pair(step, i, j, float(matrix[r, c]))
            taken.add(j)


def _leftovers_in_place(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """A few rules left over on both sides of a pair of sections are rewritten
    in place (the 2016 turn-structure rewrite): pair them at a lower similarity,
    in any order (rules of a step swap places)."""
    taken = set(step.pairs.values())
    rows_by: dict[str, list[int]] = defaultdict(list)
    for i, sec in enumerate(a.sections_of):
        if i not in step.pairs and i not in step.merged_into and sec in step.sections:
            rows_by[sec].append(i)
    cols_by: dict[str, list[int]] = defaultdict(list)
    for j, sec in enumerate(b.sections_of):
        if j not in taken:
            cols_by[sec].append(j)
    # A new subrule of a rule that stayed word for word elaborates that rule:
    # no rule from elsewhere in the section was rewritten into it (2016's
    # face-down commander rule 903.10 is not the new melded-commander 903.9a).
    back = {j: i for i, j in step.pairs.items() if step.scores.get(i) == 100.0}

    def elsewhere(i: int, j: int) -> bool:
        parent = b.at.get(b.parents[j])  # the rule 903.9a is lettered under
        if parent is None or parent == j or parent not in back:
            return False
        return a.parents[i] != a.numbers[back[parent]]

    # In a renumbered release (July 2009) a section paired by title says less of
    # where a rule went: its wording must be alike letter by letter too.
    renumbered = not _numbering_kept(a, b, step)

    def refused(i: int, j: int) -> bool:
        return elsewhere(i, j) or (renumbered and fuzz.ratio(a.keys[i], b.keys[j]) < MIN_SPREAD_LETTERS)

    for sec, rows in rows_by.items():
        cols = cols_by.get(step.sections[sec], [])
        if cols and len(rows) <= MAX_IN_PLACE and len(cols) <= MAX_IN_PLACE:
            _best_first(a, b, step, rows, cols, MIN_SAME_SECTION, subjects, refused=refused)
    _leftovers_where_it_went(a, b, step, subjects, elsewhere)


def _leftovers_where_it_went(a: Release, b: Release, step: Step, subjects: Subjects,
                             elsewhere: Callable[[int, int], bool]) -> None:
    """The same for a section that no title or vote paired, whose rules went to
    a few sections (two or more to each): what is left of it was rewritten in
    one of those, when alike letter by letter too (the place says less). July
    2009's list of what does not use the stack, 408.2, went to 405.6 and 114.2:
    its state-based entry 408.2c went on in 405.6f ("state-based actions don't
    use the stack ..."), turning a face-down permanent up (408.2h) in 114.2b;
    2003's 212.2d ("there are no subtypes for artifact cards ...") in 205.3d."""
    taken = set(step.pairs.values())
    cols_by: dict[str, list[int]] = defaultdict(list)
    for j, sec in enumerate(b.sections_of):
        if j not in taken:
            cols_by[sec].append(j)
    rows_by: dict[str, list[int]] = defaultdict(list)
    for i, sec in enumerate(a.sections_of):
        if i not in step.pairs and i not in step.merged_into and sec not in step.sections:
            rows_by[sec].append(i)
    votes = _votes(a, b, step)

    def refused(i: int, j: int) -> bool:
        return elsewhere(i, j) or fuzz.ratio(a.keys[i], b.keys[j]) < MIN_SPREAD_LETTERS

    for sec, rows in rows_by.items():
        cols = [j for to, n in sorted(votes.get(sec, Counter()).items()) if n >= 2 for j in cols_by.get(to, [])]
        if cols and len(rows) <= MAX_IN_PLACE and len(cols) <= MAX_SPREAD:
            _best_first(a, b, step, rows, cols, MIN_SAME_SECTION, subjects, refused=refused)


def _moved_with_its_block(a: Release, b: Release, step: Step) -> None:
    """A rule whose neighbour moved goes with it when the free rule beside the
    neighbour's new place is closer letter by letter (``MIN_FAR`` and more)
    than its partner: in 2010-02, 306.7 and its subrules 306.7a-b moved from
    Planeswalkers into the new 606 Loyalty Abilities, reworded; 306.7 had
    paired with the new summary 306.5d, which holds all of its words and
    more, not with 606.3, beside where 306.7a went."""
    taken = set(step.pairs.values())
    for i, j in sorted(step.pairs.items()):
        if step.scores.get(i, 0.0) >= 100.0:
            continue
        beside = [step.pairs[i + d] - d for d in (-1, 1) if i + d in step.pairs]
        if j in beside:
            continue
        here = fuzz.ratio(a.keys[i], b.keys[j])
        for k in beside:
            if 0 <= k < len(b.keys) and k not in taken:
                there = fuzz.ratio(a.keys[i], b.keys[k])
                if there >= MIN_FAR and there > here:
                    taken.discard(j)
                    _pair(step, i, k, _likeness(a.keys[i], b.keys[k]))
                    taken.add(k)
                    break


def keyword_defined(a: Release, b: Release, step: Step) -> None:
    """A keyword's definition goes on in its definition, however rewritten: the
    one rule left over that opens "<keyword> is" in the keyword sections paired
    with a section, and the one new rule left over that opens so in it, are one
    rule (July 2009's lifelink 502.68a, "lifelink is a triggered ability", is
    702.13a, "lifelink is a static ability", alike letter by letter as any two
    rules are). Two old sections paired with one (bands with other went into
    banding) have two definitions for one: neither is paired."""
    rows, cols = _left_over(a, b, step)
    defining = _definitions(b, cols)
    defined: dict[str, list[int]] = defaultdict(list)
    for sec, found in _definitions(a, rows).items():
        if sec in step.sections:
            defined[step.sections[sec]] += found
    for sec, found in defined.items():
        there = defining.get(sec, [])
        if len(found) == 1 and len(there) == 1:
            _pair(step, found[0], there[0], _likeness(a.keys[found[0]], b.keys[there[0]]))


def _definitions(rel: Release, indexes: Iterable[int]) -> dict[str, list[int]]:
    """The rules among ``indexes`` that say what their keyword is ("lifelink is ..."), by section."""
    out: dict[str, list[int]] = defaultdict(list)
    for k in indexes:
        sec = rel.sections_of[k]
        name = rel.sections.get(sec, "") if sec.startswith(KEYWORD_SECTIONS) else ""
        if name and rel.keys[k].startswith(name + " is "):
            out[sec].append(k)
    return out
