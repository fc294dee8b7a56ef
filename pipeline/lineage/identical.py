"""Identical wordings, and where the release's own cross-references place a rule.

The first evidence of a step: rules worded the same (numbers masked) pair
first, a wording used more than once by number, then section, then order
(``_identical``), a copy standing elsewhere leaving the rule at home
(``_restated_at_home``); and a rule goes on where the rules that stayed word
for word cite it under a new number (``_cited_as``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Container

from pipeline.lineage.evidence import Release, Step, Subjects, _likeness, _pair
from pipeline.lineage.thresholds import MIN_NEAR


def _identical(a: Release, b: Release, step: Step) -> None:
    """Identical wordings; a wording used more than once pairs equal numbers
    first, then numbers under the same rule, then in the same section, then in
    document order. Two variants' "Exactly one of the attack left,
    attack right ... options must be used" (806.2b and 811.2b) each go on in
    their own variant when one of them is reworded and the other re-lettered."""
    where_b: dict[str, list[int]] = defaultdict(list)
    for j, key in enumerate(b.keys):
        where_b[key].append(j)
    where_a: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(a.keys):
        if key in where_b:
            where_a[key].append(i)
    for key, left in where_a.items():
        right = where_b[key]
        if len(left) == 1 and len(right) == 1:
            home = _restated_at_home(a, b, step, left[0], right[0], where_a)
            _pair(step, left[0], right[0] if home is None else home, 100.0)
            continue
        free, rest = list(right), list(left)
        for alike in _IDENTICAL_ORDER:
            for i in list(rest):
                found = next((j for j in free if alike(a, b, i, j)), -1)
                if found >= 0:
                    rest.remove(i)
                    free.remove(found)
                    _pair(step, i, found, 100.0)


def _restated_at_home(a: Release, b: Release, step: Step, i: int, j: int, worded: Container[str]) -> int | None:
    """The one rule of the section rule ``i``'s own became that opens with
    ``i``'s words and goes on with more, when ``j``, worded as ``i`` is, stands
    elsewhere: ``j`` is then a copy, and the rule goes on at home. July 2009's
    card types list 205.2a is 204.2a in the type line rules ("... See section
    3"), not the new 300.1 that opens section 3 with the same words. Not a
    rule ``worded`` as one of ``a`` is (that one is its own rule's)."""
    home = step.sections.get(a.sections_of[i])
    if home is None or home == b.sections_of[j]:
        return None
    found = [k for k in range(len(b.keys))
             if b.sections_of[k] == home and k != j and b.keys[k].startswith(a.keys[i])]
    return found[0] if len(found) == 1 and b.keys[found[0]] not in worded else None


# The order in which repeated identical wordings pair: (a, b, i, j) -> whether to pair now.
_IDENTICAL_ORDER: tuple[Callable[[Release, Release, int, int], bool], ...] = (
    lambda a, b, i, j: a.numbers[i] == b.numbers[j],
    lambda a, b, i, j: a.parents[i] == b.parents[j],
    lambda a, b, i, j: a.sections_of[i] == b.sections_of[j],
    lambda a, b, i, j: True,
)


def _cited_as(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """A rule goes on where the release's own cross-references say it went:
    where rules that stayed word for word (numbers aside) cite it under a new
    number, all of them the same one, and that rule is free and alike (the
    near similarity, about the same keywords). July 2009's 502.40d and 702.44d
    cite 409.1c as 601.2c, the casting step that holds what 409.1c said of
    choosing targets: it goes on there, not in the new 113.3 that took its last
    two sentences word for word (a subset score of 90). A citation kept as it
    was says nothing (a release may leave one stale), nor does one that only
    narrows to a subrule of the rule it cited (104.3 -> 104.3f)."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for i, j in step.pairs.items():
        if a.keys[i] == b.keys[j] and len(a.cites[i]) == len(b.cites[j]):
            for old, new in zip(a.cites[i], b.cites[j], strict=True):
                votes[old][new] += 1
    taken = set(step.pairs.values())
    for old, said in votes.items():
        new = next(iter(said)) if len(said) == 1 else ""
        i, j = a.at.get(old, -1), b.at.get(new, -1)
        if i < 0 or j < 0 or i in step.pairs or i in step.merged_into or j in taken \
                or new == old or b.parents[j] == old:
            continue
        score = _likeness(a.keys[i], b.keys[j], MIN_NEAR)
        if score and subjects.same(a.keys[i], b.keys[j]):
            _pair(step, i, j, score)
            taken.add(j)
