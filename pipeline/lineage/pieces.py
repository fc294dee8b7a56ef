"""Pieces, splits and merges: a rule cut into several, or taken into another.

A rule goes on in the whole, not in a piece cut from it (``_cut_into_a_list``,
``_whole_before_piece``, ``_whole_before_part``); an old rule whose words stand
inside a neighbour that continues another lineage was merged there
(``_absorbed``); and, once pairing is done, the new rules cut from an old one
and the old ones taken into a new one are recorded (``splits_and_merges``:
``Step.split_from``, ``Step.merged_into``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from pipeline.lineage.evidence import (
    Release,
    Step,
    Subjects,
    _contained,
    _first_sentence,
    _left_over,
    _lettered,
    _likeness,
    _near,
    _pair,
    _subrules,
    _words_kept,
    similarity,
)
from pipeline.lineage.thresholds import (
    ABSORBED_MARGIN,
    MIN_ABSORBED,
    MIN_ALL_WORDS,
    MIN_CONTAINED,
    MIN_CONTAINED_CHARS,
    MIN_FAR,
    MIN_NEAR,
    MIN_SAME_SECTION,
    MIN_WHOLE_GAIN,
)


def _cut_into_a_list(a: Release, b: Release, step: Step) -> None:
    """A rule cut into new subrules (two or more, each holding words of it)
    goes on in the new rule they are lettered under, not in the piece it was
    paired with, when that rule is still free, keeps more of its opening than
    any piece does and is about the same (``MIN_SAME_SECTION``). July 2009's
    planeswalker rule 212.9f (one rule: their abilities, when one may be
    activated, the loyalty cost, a negative cost) is 306.7 (when one may be
    activated), over 306.7a and b; it had gone on in its last sentence, 306.7b.
    A rule that listed its items inline, "(a) ... or (b) ...", opens mostly with
    them: what it says outside them counts instead. July 2009's mana ability
    rule 406.1 is 605.1 (what mana abilities are, "regardless of what other
    effects they may generate"), over one subrule per item; it had gone on in
    the first item, 605.1a. ``_split_into_subrules`` does this where numbers
    were kept."""
    back = {j: i for i, j in step.pairs.items()}
    for i, piece in list(step.pairs.items()):
        head = b.at.get(b.parents[piece])
        if head is None or head in back or _subrules(a, i):
            continue
        cut = [k for k in _subrules(b, head) if back.get(k, i) == i
               and fuzz.token_set_ratio(a.keys[i], b.keys[k]) >= MIN_CONTAINED]
        opening = _outside_items(a.keys[i]) or _first_sentence(a.keys[i])
        if (len(cut) < 2 or piece not in cut
                or _words_kept(opening, b.keys[head]) <= max(_words_kept(opening, b.keys[k]) for k in cut)):
            continue
        score = _likeness(a.keys[i], b.keys[head], MIN_SAME_SECTION)
        if score:
            del back[piece]
            _pair(step, i, head, score)
            back[head] = i


# An item of a list written inline, "(a) ..." up to the end of its clause.
_INLINE_ITEM = re.compile(r"\([a-z]\) [^.;:]*")


def _outside_items(text: str) -> str:
    """What a rule that lists items inline, "(a) ... or (b) ...", says outside
    them, or "" if it lists none: when the items became subrules, the rule they
    are lettered under carries the rest.

    >>> _outside_items("a mana ability is either (a) an activated ability or (b) a triggered "
    ...                "ability. a mana ability can generate other effects.")
    'a mana ability is either . a mana ability can generate other effects.'
    """
    if "(a) " not in text or "(b) " not in text:
        return ""
    return " ".join(_INLINE_ITEM.sub(" ", text).split())


def _whole_before_piece(a: Release, b: Release, step: Step) -> None:
    """A rule paired with a piece cut from it (every word of the piece stands in
    it: the pair rests on the subset score) goes on instead in a rule still free
    in that piece's section that is closer to it letter by letter (by
    ``MIN_WHOLE_GAIN`` or more), keeps more of its longer words, holds more of
    its opening, and is closer to it than to any rule left over; the piece was
    split from it. July 2009's combat damage rule 310.1 (the
    players announce how damage is assigned, the assignments go on the stack,
    triggers, priority) is 510.1 ("first, the active player announces how each
    attacking creature assigns its combat damage, ..."), not its trigger
    sentence, 510.3. A rule that kept its number keeps it (2001's 420.5a, whose
    draw-from-an-empty-library half became 420.5g); 402.1 (what an ability is
    and what it can affect) stays in 112.2, what it can affect, for 112.1a
    (what an ability is) is closer to 400.1, left over; 416.1 (what resolving
    creates) likewise stays in 608.6 (replacement effects), 608.1 being closer
    to 400.2."""
    taken = set(step.pairs.values()) | set(step.split_from)
    free: dict[str, list[int]] = defaultdict(list)
    for j, sec in enumerate(b.sections_of):
        if j not in taken:
            free[sec].append(j)
    for i, j in list(step.pairs.items()):
        old, piece = a.keys[i], b.keys[j]
        if (step.scores[i] >= 100 or a.numbers[i] == b.numbers[j] or not free[b.sections_of[j]]
                or fuzz.token_set_ratio(old, piece) < MIN_CONTAINED):
            continue
        head, straight = _first_sentence(old), fuzz.ratio(old, piece)
        wholes = [(fuzz.ratio(old, b.keys[k]), k) for k in free[b.sections_of[j]]
                  if _words_kept(old, b.keys[k]) > _words_kept(old, piece)
                  and fuzz.partial_ratio(head, b.keys[k]) > fuzz.partial_ratio(head, piece)]
        best = max(wholes, default=(0.0, -1))
        if best[0] >= straight + MIN_WHOLE_GAIN and best[0] > max(
                (fuzz.ratio(a.keys[r], b.keys[best[1]]) for r in _left_over(a, b, step)[0]), default=0.0):
            k = best[1]
            free[b.sections_of[k]].remove(k)
            _pair(step, i, k, _likeness(old, b.keys[k]))
            step.split_from[j] = i  # however far from the whole (``splits_and_merges`` looks ``NEAR`` only)


def _whole_before_part(a: Release, b: Release, step: Step) -> None:
    """The mirror of ``_whole_before_piece``: a new rule paired with a longer old
    subrule it holds only a part of (every word of it stands in the old one: the
    pair rests on the subset score) continues instead a rule left over, a rule
    like it (not lettered), that is closer to it letter by letter (by
    ``MIN_WHOLE_GAIN`` or more) and closer to it than to any new rule still
    free; the subrule it had been paired with was merged into it. June 2023's
    meld rule 713.1 ("a meld card has a Magic card face on one side and half of
    an oversized Magic card face on the other") is 712.4, the head of the meld
    rules moved into 712, not the subrule 712.1g, a pointer whose other sentence
    (meld cards are not double-faced cards, see rule 713) went. Between rules
    of one kind, the closer wording says little: 2023's 712.7 (how a
    transforming double-faced card is cast) goes on in 712.11 (how a
    double-faced spell is cast), which the meld rule 713.8 is closer to."""
    back = {j: i for i, j in step.pairs.items()}
    left, free = _left_over(a, b, step)
    left = [k for k in left if not _lettered(a.numbers[k])]
    if not left:
        return
    for j, i in sorted(back.items()):
        new, part = b.keys[j], a.keys[i]
        if (step.scores[i] >= 100 or _lettered(b.numbers[j]) or not _lettered(a.numbers[i])
                or len(new) >= len(part) or fuzz.token_set_ratio(part, new) < MIN_CONTAINED):
            continue
        straight = fuzz.ratio(part, new)
        best, k = max(((fuzz.ratio(a.keys[k], new), k) for k in left), default=(0.0, -1))
        if best >= max(straight + MIN_WHOLE_GAIN, MIN_NEAR) and best > max(
                (fuzz.ratio(a.keys[k], b.keys[c]) for c in free), default=0.0):
            left.remove(k)
            del step.pairs[i], step.scores[i]
            _pair(step, k, j, _likeness(a.keys[k], new))
            step.merged_into[i] = j


def _absorbed(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """An old rule whose words now stand inside a longer neighbouring new rule
    that continues another lineage was merged there (transform, 2016;
    controlling a turn, 2010): it does not go on as some looser match
    elsewhere. Unless a free rule matches it about as well: then it may have
    been restated, and the later passes decide. Not into a rule about another
    keyword (``Subjects``), nor into one that went on word for word (``_unchanged``)."""
    taken = set(step.pairs.values())
    free = [b.keys[j] for j in range(len(b.keys)) if j not in taken]
    unchanged = _unchanged(a, b, step)
    for i in range(len(a.keys)):
        if i in step.pairs or i in step.merged_into or len(a.keys[i]) < MIN_CONTAINED_CHARS:
            continue
        near = [j for j in _near(i, step.pairs, len(a.keys)) if j not in unchanged
                and len(b.keys[j]) > len(a.keys[i]) and subjects.same(a.keys[i], b.keys[j])]
        if not near:
            continue
        held = similarity([a.keys[i]], [b.keys[j] for j in near], MIN_FAR)[1][0]
        best = int(held.argmax())
        if not held[best]:
            continue
        rival = similarity([a.keys[i]], free, 0.0)[1].max(initial=0.0) if free else 0.0
        if rival + ABSORBED_MARGIN <= held[best]:
            step.merged_into[i] = near[best]


def splits_and_merges(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
    """New rules cut from an old one that continued, old ones absorbed by a new
    one. A piece split off stands near the rule it came from, and a rule merged
    away stood near the one that absorbed it: the candidates are the partners
    of the nearest paired rules (for a merge, and the rules those are lettered
    under), about the same keywords (``Subjects``: a
    generated release's new "if a permanent has multiple instances of weglith,
    each one triggers separately" was no piece of raiston's, and its removed
    mayhem rule was not merged into web-slinging's, each worded alike); and
    not from or into a rule that went on word for word (``_unchanged``).
    Nothing was cut from it or put into it: 2020's new gold token rule 111.10c
    is worded after the treasure token's 111.10a, no piece of it, and 2020's
    layer 7d (counters) went into 7c, not into the unchanged 7a next to it."""
    back = {j: i for i, j in step.pairs.items()}
    unchanged = _unchanged(a, b, step)
    in_section: dict[str, list[int]] = defaultdict(list)
    for j, sec in enumerate(b.sections_of):
        if j not in unchanged:
            in_section[sec].append(j)
    for j in range(len(b.keys)):
        if j not in back and len(b.keys[j]) >= MIN_CONTAINED_CHARS:
            near = [i for i in _near(j, back, len(b.keys))
                    if step.pairs[i] not in unchanged and subjects.same(a.keys[i], b.keys[j])]
            best = _contained(b.keys[j], [a.keys[i] for i in near])
            if best is not None:
                step.split_from[j] = near[best]
    for i in range(len(a.keys)):
        if i not in step.pairs and i not in step.merged_into and len(a.keys[i]) >= MIN_CONTAINED_CHARS:
            around = _near(i, step.pairs, len(a.keys))
            # ... and the rules those are lettered under (2009's 419.2 went into 614.1, above its neighbour's 614.1a)
            around += [p for j in around if (p := b.at.get(b.parents[j], j)) not in around]
            near = [j for j in dict.fromkeys(around) if j not in unchanged and subjects.same(a.keys[i], b.keys[j])]
            best = _contained(a.keys[i], [b.keys[j] for j in near])
            if best is None:
                best = _absorbed_by(a.keys[i], [b.keys[j] for j in near])
            if best is None:
                # Anywhere in those rules' sections, every word of it (2023's meld 713.12 in 712.19).
                near = sorted(j for sec in {b.sections_of[j] for j in near} for j in in_section[sec]
                              if len(b.keys[j]) > len(a.keys[i]) and subjects.same(a.keys[i], b.keys[j]))
                best = _absorbed_by(a.keys[i], [b.keys[j] for j in near], MIN_ALL_WORDS)
            if best is not None:
                step.merged_into[i] = near[best]


def _unchanged(a: Release, b: Release, step: Step) -> set[int]:
    """The rules of ``b`` that continue a rule of ``a`` word for word (numbers masked)."""
    return {j for i, j in step.pairs.items() if a.keys[i] == b.keys[j]}


def _absorbed_by(old: str, candidates: Sequence[str], cutoff: float = MIN_ABSORBED) -> int | None:
    """The longer candidate that holds most of ``old``'s words (a rule merged
    into its neighbour in other words: 'the player whose turn is being
    controlled is still the active player' in 'a player who's being controlled
    during his or her turn is still the active player'), if enough of them.

    >>> _absorbed_by("the player whose turn is being controlled is still the active player.",
    ...              ["the controller of the turn makes all choices the controlled player would make.",
    ...               "only control of the player changes. a player who's being controlled "
    ...               "during his or her turn is still the active player."])
    1
    >>> _absorbed_by("all permanents with phasing phase out.", ["the game ends in a draw."]) is None
    True
    """
    keep = [k for k, text in enumerate(candidates) if len(text) >= len(old)]
    found = process.extractOne(old, [candidates[k] for k in keep], scorer=fuzz.token_set_ratio,
                               score_cutoff=cutoff) if keep else None
    return keep[found[2]] if found else None
