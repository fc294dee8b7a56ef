"""The passes of a renumbered release (July 2009), where numbers and sections say little.

A rule left over and a new one are one rule when each is the other's closest,
by a clear margin: by first sentence (``_closest_openings``), letter by letter
(``_closest_letters``), by the rarer words they share
(``_closest_rare_words``); and the one subrule left under a paired rule goes
with the one left under its partner (``_only_child_left``). Where numbering was
kept they would pair a removed rule with an added one: ``step.align_pair``
runs them only when it was not.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

import numpy as np
from rapidfuzz import fuzz

from pipeline.lineage.evidence import (
    Release,
    Step,
    Subjects,
    _Alike,
    _first_sentence,
    _left_over,
    _likeness,
    _pair,
    _subrules,
    _votes,
)
from pipeline.lineage.thresholds import (
    CLOSEST_MARGIN,
    MIN_CLOSEST,
    MIN_HOMELESS_COSINE,
    MIN_OPENING_ALIKE,
    MIN_RARE_WORDS_COSINE,
    OPENING_MARGIN,
    RARE_WORDS_LEAD,
)


def _closest_openings(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """In a renumbered release (July 2009), a rule left over whose first
    sentence is, in other words, the first sentence of a new rule left over in
    the section its own became, or one its rules went to (``MIN_OPENING_ALIKE``
    letter by letter, and ``OPENING_MARGIN`` ahead of every other such pair of
    either) is that rule:
    408.1c ("the active player gets priority at the beginning of most phases
    and steps, after any game actions are dealt with ...") is 115.3a ("the
    active player receives priority at the beginning of most steps and phases,
    after any turn-based actions ... have been dealt with ..."), its other
    sentences gone to 115.3b-d and 115.4: the whole rules are 47 alike."""
    rows, cols = _left_over(a, b, step)
    heads_a = {i: _first_sentence(a.keys[i]) for i in rows}
    heads_b = {j: _first_sentence(b.keys[j]) for j in cols}
    in_section: dict[str, list[int]] = defaultdict(list)
    for j in cols:
        in_section[b.sections_of[j]].append(j)
    votes = _votes(a, b, step)
    found: dict[tuple[int, int], float] = {}
    for i in rows:
        sec = a.sections_of[i]
        for new_sec in {step.sections.get(sec, ""), *votes[sec]}:
            for j in in_section.get(new_sec, []):
                found[i, j] = fuzz.ratio(heads_a[i], heads_b[j])
    for (i, j), top in found.items():
        rivals = [score for (x, y), score in found.items() if (x == i) != (y == j)]
        if (top >= MIN_OPENING_ALIKE and top - max(rivals, default=0.0) >= OPENING_MARGIN
                and subjects.same(a.keys[i], b.keys[j])):
            _pair(step, i, j, _likeness(a.keys[i], b.keys[j]))


def _closest_letters(a: Release, b: Release, step: Step, subjects: Subjects, alike: _Alike) -> None:
    """In a renumbered release (July 2009), where neither numbers nor sections
    say where a rule went, a rule left over and a new rule left over that are
    each other's closest wording, letter by letter, by a clear margin over every
    other rule left over on both sides, are one rule rewritten: 2009's 400.1
    ("an ability is something an object does or can do ...") is 112.1a ("an
    ability is a characteristic an object has that lets it affect the game
    ..."), 214.2 (a nontoken permanent's card types are those printed on its
    card) 110.3 (its characteristics are). Where numbering was kept, a rule
    left over by then was removed and a new one added (2015's commander
    colour-identity mana rule 903.9 is not the new generic-mana rule 106.10)."""
    rows, cols = _left_over(a, b, step)
    ratio = alike(rows, cols)[0]
    for r, c in each_others_best(ratio, lambda top, second: top >= MIN_CLOSEST and top - second >= CLOSEST_MARGIN):
        i, j = rows[r], cols[c]
        if subjects.same(a.keys[i], b.keys[j]):
            _pair(step, i, j, _likeness(a.keys[i], b.keys[j]))


def _closest_rare_words(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """Then (July 2009), by the words they share, each weighted by how few rules
    of the two releases hold it: a pair each other's closest so, well ahead of
    the next, in the section its own became (or where its section's rules
    went), is one rule rewritten further still: 2009's sealed-deck rule 100.3
    ("for sealed deck or draft play, only forty cards are required in a deck
    ...") is 100.2b ("in limited play ... each deck must contain at least forty
    cards"), though letter by letter it is as alike as any rule of 100. A rule
    of a section that became none, and none of whose rules went anywhere, may
    go anywhere, at ``MIN_HOMELESS_COSINE``: the phased-out zone 217.8 was
    dissolved, and its "tokens in the phased-out zone cease to exist. this is a
    state-based effect" is phasing's 702.23j, "phased-out tokens cease to
    exist as a state-based action" (0.65; the next rule left over so far apart,
    2009's 401.6 in 116.9d, is 0.50 and another rule)."""
    rows, cols = _left_over(a, b, step)
    cosines = _rare_word_cosines([a.keys[i] for i in rows], [b.keys[j] for j in cols], a.keys + b.keys)
    votes = _votes(a, b, step)
    for r, c in each_others_best(
            cosines, lambda top, second: top >= MIN_RARE_WORDS_COSINE and top >= RARE_WORDS_LEAD * second):
        i, j = rows[r], cols[c]
        placed = step.sections.get(a.sections_of[i]) == b.sections_of[j] or b.sections_of[j] in votes[a.sections_of[i]]
        # A rule of a section that became none (the phased-out zone, 217.8) may go anywhere, if closer still.
        homeless = a.sections_of[i] not in step.sections and not votes[a.sections_of[i]]
        if (placed or (homeless and cosines[r, c] >= MIN_HOMELESS_COSINE)) and subjects.same(a.keys[i], b.keys[j]):
            _pair(step, i, j, _likeness(a.keys[i], b.keys[j]))


def _only_child_left(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """Last (July 2009), the one subrule left over under a rule that went on,
    and the one new subrule left over under where it went, are one rule:
    200.4a (a token's owner and controller), under 200.4 (what a token is, now
    110.5), is 110.5a. No wording is asked of them (only the same keywords), so
    where numbering was kept it would pair a removed rule with an added one
    (704.5j of 2017)."""
    rows, cols = _left_over(a, b, step)
    free = set(cols)
    under: dict[int, list[int]] = defaultdict(list)
    for i in rows:
        parent = a.at.get(a.parents[i])
        if parent is not None and parent != i and parent in step.pairs:
            under[parent].append(i)
    for parent, olds in under.items():
        news = [j for j in _subrules(b, step.pairs[parent]) if j in free]
        if len(olds) == 1 and len(news) == 1 and subjects.same(a.keys[olds[0]], b.keys[news[0]]):
            _pair(step, olds[0], news[0], _likeness(a.keys[olds[0]], b.keys[news[0]]))


def each_others_best(scores: np.ndarray, clear: Callable[[float, float], bool]) -> list[tuple[int, int]]:
    """The cells of ``scores`` best in their row and their column, where ``clear``
    holds of that score and the next best in either (none with fewer than 2 of
    either: with one rule on a side, nothing says how far ahead it is)."""
    if min(scores.shape) < 2:
        return []
    best_c, best_r = scores.argmax(axis=1), scores.argmax(axis=0)
    second = np.maximum(np.sort(scores, axis=1)[:, -2][:, None], np.sort(scores, axis=0)[-2, :][None, :])
    return [(r, c) for r, c in enumerate(best_c.tolist())
            if best_r[c] == r and clear(float(scores[r, c]), float(second[r, c]))]


def _rare_word_cosines(xs: Sequence[str], ys: Sequence[str], corpus: Sequence[str]) -> np.ndarray:
    """The cosine of each x and y as bags of words, each word weighted by its
    rarity in ``corpus`` (tf-idf: log-scaled counts times log(N / rules holding
    the word)). Hand-written: scikit-learn's TfidfVectorizer is 164 MB with
    scipy, and a second and more to import, for this one product.

    >>> cos = _rare_word_cosines(["forty cards in a sealed deck"], ["a limited deck has forty cards", "a deck"],
    ...                          ["a deck", "a card", "a deck of cards", "forty cards", "sealed deck", "limited"])
    >>> bool(cos[0, 0] > cos[0, 1])
    True
    """
    held = Counter(w for text in corpus for w in set(_WORD.findall(text)))
    index = {w: n for n, w in enumerate(held)}
    idf = np.log(len(corpus) / np.array(list(held.values()), dtype=np.float64))

    def vectors(texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(index)))
        for r, text in enumerate(texts):
            for w, n in Counter(_WORD.findall(text)).items():
                if w in index:
                    out[r, index[w]] = 1.0 + math.log(n)
        out *= idf
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    cosines: np.ndarray = vectors(xs) @ vectors(ys).T
    return cosines


_WORD = re.compile(r"[a-z][a-z'-]+")
