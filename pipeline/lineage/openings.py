"""A rule goes on where its first sentence went.

A rule left over whose opening opens a new rule word for word
(``_opening_goes_on``), also in the terms July 2009 renamed
(``opening_over_piece``); a new rule under a kept number that opens with what
an old rule said in other words (``kept_number_opens``); and a subrule paired
with a rule that opens as its own rule did, which goes on there
(``_parent_opens``).
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from pipeline.lineage.evidence import (
    Release,
    Step,
    _first_sentence,
    _lettered,
    _likeness,
    _numbering_kept,
    _pair,
    similarity,
)
from pipeline.lineage.thresholds import MIN_ABSORBED, MIN_OPENING_WORDS, MIN_TAKEN_IN


def _opening_goes_on(a: Release, b: Release, step: Step) -> None:
    """A rule left over whose first sentence (``MIN_OPENING_WORDS`` words or
    more, unique in both releases) opens a new rule word for word takes that
    rule from the rule paired with it, if that one neither kept its number nor
    opened so (it was merged in after the opening; it is left over for
    ``splits_and_merges``): 2003's 214.9d ("the basic land types are plains,
    island, swamp, mountain, and forest. ...") is 212.6d, which opens so and
    took in 214.9e's mana-ability sentence, closer to it word for word. A rule
    that kept its number keeps it (2016's transform 701.25a took in 701.25b's
    opening: ``_kept_heads``). A new rule still free by now is left to the
    passes after (none such on raw/)."""
    back = {j: i for i, j in step.pairs.items()}
    opens = {_first_sentence(key): j for j, key in enumerate(b.keys)}
    for i, key in enumerate(a.keys):
        head = _first_sentence(key)
        if (i in step.pairs or i in step.merged_into or len(head.split()) < MIN_OPENING_WORDS
                or a.heads[head] != 1 or b.heads[head] != 1):
            continue
        j = opens[head]
        other = back.get(j)
        if other is not None and a.numbers[other] != b.numbers[j] and _first_sentence(a.keys[other]) != head:
            del step.pairs[other], step.scores[other]
            _pair(step, i, j, _likeness(key, b.keys[j]))
            back[j] = i


# The terms the July 2009 release renamed (DOMAIN.md, "Wording eras"), as
# folded wordings spell them: an old first sentence in the new terms.
_RENAMED_IN_2009 = (
    (re.compile(r"\bcomes into play\b"), "enters the battlefield"),
    (re.compile(r"\bcome into play\b"), "enter the battlefield"),
    (re.compile(r"\bcame into play\b"), "entered the battlefield"),
    (re.compile(r"\binto play\b"), "onto the battlefield"),
    (re.compile(r"\bleaves play\b"), "leaves the battlefield"),
    (re.compile(r"\bleave play\b"), "leave the battlefield"),
    (re.compile(r"\bin play\b"), "on the battlefield"),
    (re.compile(r"\bremoved from the game\b"), "exiled"),
    (re.compile(r"\bplays (a|an|the|this|that) spell\b"), r"casts \1 spell"),
    (re.compile(r"\bplay (a|an|the|this|that) spell\b"), r"cast \1 spell"),
)


def _in_new_terms(text: str) -> str:
    """``text`` with the terms July 2009 renamed put in the new ones.

    >>> _in_new_terms("a permanent is a card or token in play.")
    'a permanent is a card or token on the battlefield.'
    """
    for old, new in _RENAMED_IN_2009:
        text = old.sub(new, text)
    return text


def opening_over_piece(a: Release, b: Release, step: Step) -> None:
    """A rule paired with a new rule that does not open as it did (nor kept its
    number, where numbers were kept) goes on instead in a new rule still free
    that opens with its first sentence word for word (``MIN_OPENING_WORDS``
    words or more, unique in both releases; in the terms of the new release,
    where July 2009 renamed them); the rule it was paired with, on its words, is
    a piece split from it. Not if another old rule stands in that new rule more
    fully (is closer to it, ``similarity``). July 2009's 214.1 ("a permanent is a
    card or token in play. ... there are five permanent types: ...") is 110.1 ("a
    permanent is a card or token on the battlefield. ..."), not the list of
    permanent types, 110.4, which holds more of its words and was split from it;
    but 216.1 ("some effects put tokens into play. ...") is not 110.5, which opens
    so and goes on with 200.4's token definition word for word. (The new rule
    under its number would come first, where numbers were kept, as the readers
    take it: 2007-05's 203.1a, cut in three, is the copy sentence 203.1a to its
    reader, the opening 203.1c here. Tried on raw/, taking the rule under its
    number moved 18 steps, most of them rules re-lettered by an insertion.)"""
    taken = set(step.pairs.values())
    opens = {_first_sentence(b.keys[k]): k for k in range(len(b.keys)) if k not in taken and k not in step.split_from}
    kept = _numbering_kept(a, b, step)
    for i, j in list(step.pairs.items()):
        head = _first_sentence(a.keys[i])
        if len(head.split()) < MIN_OPENING_WORDS or a.heads[head] != 1 or (kept and a.numbers[i] == b.numbers[j]):
            continue
        new_head = head if kept else _in_new_terms(head)
        k = opens.get(new_head)
        if k is None or b.heads[new_head] != 1 or _first_sentence(b.keys[j]) in (head, new_head):
            continue
        # The opening is not enough if another old rule stands in that rule more fully.
        alike = similarity([b.keys[k]], a.keys, 0.0)[1][0]
        score = float(alike[i])
        alike[i] = 0.0
        if score <= alike.max():
            continue
        del opens[new_head]
        _pair(step, i, k, score)
        step.split_from[j] = i


def kept_number_opens(a: Release, b: Release, step: Step) -> None:
    """A rule left over whose number a new rule kept goes on there when that
    rule opens with what it said, in other words, and only then holds the rule
    paired with it (which had another number: it was merged in after the
    opening, and is left over for ``splits_and_merges``). 2022's coin-flip
    705.2 ("... cares only whether the coin comes up heads or tails ... no
    player wins or loses this kind of flip") is 705.2, which opens "some
    effects ... care only about whether the coin comes up heads or tails. no
    player wins or loses a coin flip for this kind of effect" and then takes in
    705.1's call. The opening is what stands before the partner's text
    (``fuzz.partial_ratio_alignment``, at least ``MIN_TAKEN_IN``), and must be
    half as long as the rule left over or more: a new rule that only took the
    number of the rule it replaced opens with its partner's text (2019's
    proliferate 701.26b, two-headed giant's poison rule), or with a few words
    put before it ("in a two-headed giant game, ..."), which any rule about
    the same thing has. Numbers must have been kept (not July 2009), and the
    rule must stand in the section its own became. A rule merged into a new
    rule is asked the same, whatever its number: 2007-05's evasion rule 500.3a
    opens with 501.1's definition in other words and ends with 501.2's
    "evasion abilities are cumulative", which had taken it by their shared
    example: 501.1 goes on there, 501.2 is merged in."""
    if not _numbering_kept(a, b, step):
        return
    back = {j: i for i, j in step.pairs.items()}
    for k, key in enumerate(a.keys):
        # A rule merged into the new rule: the same question, whatever its number (2007-05's 500.3a).
        j = step.merged_into[k] if k in step.merged_into else b.at.get(a.numbers[k])
        if (k in step.pairs or j is None or j not in back
                or (k not in step.merged_into and step.sections.get(a.sections_of[k]) != b.sections_of[j])):
            continue
        i = back[j]
        if a.numbers[i] == b.numbers[j] or len(a.keys[i]) > len(b.keys[j]):
            continue
        found = fuzz.partial_ratio_alignment(a.keys[i], b.keys[j], score_cutoff=MIN_TAKEN_IN)
        if found is None or 2 * found.dest_start < len(key):
            continue
        if fuzz.token_set_ratio(key, b.keys[j][:found.dest_start]) >= MIN_ABSORBED:
            del step.pairs[i], step.scores[i]
            step.merged_into.pop(k, None)
            _pair(step, k, j, _likeness(key, b.keys[j]))
            back[j] = k


def _parent_opens(a: Release, b: Release, step: Step) -> None:
    """A subrule paired with a new rule that opens with what the subrule's own
    rule said (the text before the subrule's, ``MIN_ABSORBED`` alike in words
    to the rule's first sentence) is merged there, and the rule, not paired by
    any pass (left over, or merged), goes on in it: the two became one rule,
    which opens as the rule did. July 2009's blocking check 500.3 ("as part of
    declaring blockers, the defending player checks each creature he or she
    controls to see whether it must block, can't block, ...") is 509.1b ("the
    defending player checks each creature he or she controls to see whether
    it's affected by any restrictions ..."), which goes on with its subrule
    500.3a, the evasion rule, word for word; 500.3 had been merged into
    509.1c, the requirements check that continues 500.4."""
    back = {j: i for i, j in step.pairs.items()}
    for j, i in sorted(back.items()):
        parent = a.at.get(a.parents[i])
        if parent is None or parent == i or parent in step.pairs or not _lettered(a.numbers[i]):
            continue
        found = fuzz.partial_ratio_alignment(a.keys[i], b.keys[j], score_cutoff=MIN_TAKEN_IN)
        if found is None or found.dest_start == 0:
            continue
        opening = b.keys[j][:found.dest_start]
        score = fuzz.token_set_ratio(_first_sentence(a.keys[parent]), opening)
        if score >= MIN_ABSORBED:
            del step.pairs[i], step.scores[i]
            step.merged_into.pop(parent, None)
            _pair(step, parent, j, _likeness(a.keys[parent], b.keys[j]))
            step.merged_into[i] = j
