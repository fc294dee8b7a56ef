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
from collections import Counter
from collections.abc import Sequence

from pipeline.lineage.evidence import Release, Step, Subjects, _likeness, _pair
from pipeline.lineage.thresholds import MIN_CONTAINED_CHARS, MIN_WENT, WENT_MARGIN

_WORD = re.compile(r"[a-z][a-z'-]*")


def terms(key: str) -> frozenset[str]:
    """A folded wording's words and word pairs (numbers left out: they are renumbered).

    >>> sorted(terms("the bushido bonus is 2."))
    ['bonus', 'bonus is', 'bushido', 'bushido bonus', 'is', 'the', 'the bushido']
    """
    words = _WORD.findall(key)
    return frozenset(words) | frozenset(f"{x} {y}" for x, y in zip(words, words[1:], strict=False))


def weights(keys: Sequence[str]) -> tuple[list[frozenset[str]], dict[str, float], float]:
    """Each wording's terms, the weight of each term in these wordings (its
    inverse document frequency), and the weight of a term none of them has."""
    held = [terms(k) for k in keys]
    df = Counter(t for ts in held for t in ts)
    n = max(1, len(keys))
    return held, {t: math.log(n / c) for t, c in df.items()}, math.log(n)


def held_share(old: frozenset[str], new: frozenset[str], weight: dict[str, float], unseen: float) -> float:
    """The share of ``old``'s weighted terms that ``new`` holds (0-1).

    >>> w = {"bushido": 3.0, "bonus": 2.0, "the": 0.1}
    >>> round(held_share(frozenset(w), frozenset({"bushido", "the"}), w, 3.0), 3)
    0.608
    """
    total = sum(weight.get(t, unseen) for t in old)
    return sum(weight[t] for t in old & new) / total if total else 0.0


def _went_to(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """Each old rule still left over goes on in the rule of ``b`` that holds clearly
    most of its weighted words, if any does: continued when that rule is free,
    merged into it when it continues another lineage."""
    left = [i for i in range(len(a.keys)) if i not in step.pairs and i not in step.merged_into
            and len(a.keys[i]) >= MIN_CONTAINED_CHARS]
    if not left or not b.keys:
        return
    held, weight, unseen = weights(b.keys)
    named = [subjects.named(k) for k in b.keys]
    taken = set(step.pairs.values())
    for i in left:
        old, names = terms(a.keys[i]), subjects.named(a.keys[i])
        shares = sorted(((held_share(old, held[j], weight, unseen), j) for j in range(len(b.keys))
                         if subjects.same_names(names, named[j])), reverse=True)
        if not shares:
            continue
        best, j = shares[0]
        runner_up = shares[1][0] if len(shares) > 1 else 0.0
        if best < MIN_WENT or best - runner_up < WENT_MARGIN:
            continue
        if j in taken:
            step.merged_into[i] = j
        else:
            _pair(step, i, j, _likeness(a.keys[i], b.keys[j]))
            taken.add(j)
