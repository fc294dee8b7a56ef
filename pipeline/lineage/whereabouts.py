"""The last pass of a step: where the content of a rule still left over went.

After every other pass, an old rule neither paired nor merged would end as
removed. Most such rules were not deleted (the ending audit,
``tests/data/ending_key.csv``: readers found the content of two in three of
them in the next release): they were folded into a rule that already said
much of it, or rewritten into a new rule elsewhere. Here the whole next
release is searched for the one rule that holds most of the old rule's words,
each weighted by how rare it is in that release (its inverse document
frequency: "the", "player" and "spell" weigh little, "bushido" or "phased-out"
much), word pairs counted too so that the order of the words tells. The old
rule goes on there when one rule holds clearly more of it than any other
(``MIN_WENT``, ``WENT_MARGIN``), about the same keywords (``Subjects``): into a
free new rule it continues, into one that continues another lineage it is
merged. Otherwise it ends removed, as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from pipeline.lineage.evidence import Release, Step, Subjects, _likeness, _pair
from pipeline.lineage.thresholds import MIN_CONTAINED_CHARS, MIN_WENT, WENT_MARGIN

_WORD = re.compile(r"[a-z][a-z'-]*")


@lru_cache(maxsize=1 << 16)
def terms(key: str) -> frozenset[str]:
    """A folded wording's words and word pairs (numbers left out: they are renumbered).

    >>> sorted(terms("the bushido bonus is 2."))
    ['bonus', 'bonus is', 'bushido', 'bushido bonus', 'is', 'the', 'the bushido']
    """
    words = _WORD.findall(key)
    return frozenset(words) | frozenset(f"{x} {y}" for x, y in zip(words, words[1:], strict=False))


def held_shares(olds: Sequence[frozenset[str]], held: Sequence[frozenset[str]]) -> np.ndarray:
    """For each old wording's terms (a row) the share of its weighted terms each new
    wording holds (a column), 0-1. A term weighs its inverse document frequency among
    the new wordings, ``log(n / df)``; one that none of them has, ``log(n)``.

    >>> shares = held_shares([frozenset({"bushido", "the"})],
    ...                      [frozenset({"bushido"}), frozenset({"the", "bonus"}), frozenset({"the"})])
    >>> [round(float(x), 3) for x in shares[0]]
    [0.73, 0.27, 0.27]
    """
    n = max(1, len(held))
    # Only the terms an old wording has count: a column each, a row for each new wording.
    used = sorted(frozenset().union(*olds) & frozenset().union(*held))
    column = {t: c for c, t in enumerate(used)}
    wanted = frozenset(used)
    holds = np.zeros((len(held), len(used)), dtype=np.uint8)
    for j, ts in enumerate(held):
        holds[j, [column[t] for t in ts & wanted]] = 1
    weight = {t: math.log(n / int(df)) for t, df in zip(used, holds.sum(axis=0, dtype=np.int64), strict=True)}
    unseen = math.log(n)
    out = np.zeros((len(olds), len(held)))
    for r, old in enumerate(olds):
        total = sum(weight.get(t, unseen) for t in old)
        if total:
            mine = sorted(old & wanted, key=column.__getitem__)
            out[r] = holds[:, [column[t] for t in mine]] @ np.array([weight[t] for t in mine], dtype=np.float64) / total
    return out


def _went_to(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """Each old rule still left over goes on in the rule of ``b`` that holds clearly
    most of its weighted words, if any does: continued when that rule is free,
    merged into it when it continues another lineage."""
    left = [i for i in range(len(a.keys)) if i not in step.pairs and i not in step.merged_into
            and len(a.keys[i]) >= MIN_CONTAINED_CHARS]
    if not left or not b.keys:
        return
    shares = held_shares([terms(a.keys[i]) for i in left], [terms(k) for k in b.keys])
    every = np.arange(len(b.keys))
    named: list[frozenset[str]] = []  # each new rule's keywords, found when first needed
    taken = set(step.pairs.values())
    for i, share in zip(left, shares, strict=True):
        names = subjects.named(a.keys[i])
        if names and not named:
            named = [subjects.named(k) for k in b.keys]
        candidates = np.array([j for j in range(len(named)) if subjects.same_names(names, named[j])], dtype=np.int64) \
            if names else every
        if not len(candidates):
            continue
        # The best share (the last rule among equals), and the runner-up's.
        order = np.lexsort((candidates, share[candidates]))
        best, j = float(share[candidates[order[-1]]]), int(candidates[order[-1]])
        runner_up = float(share[candidates[order[-2]]]) if len(order) > 1 else 0.0
        if best < MIN_WENT or best - runner_up < WENT_MARGIN:
            continue
        if j in taken:
            step.merged_into[i] = j
        else:
            _pair(step, i, j, _likeness(a.keys[i], b.keys[j]))
            taken.add(j)
