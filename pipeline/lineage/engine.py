"""Lineages: every rule followed release by release, and where it is today.

Each dated, complete official release is aligned with the one before it
(neighbouring releases differ by a few percent, so each step is small and
certain); a rule's lineage is the chain of those steps and its canonical
number is where the chain ends in the newest release, or nothing, with the
release where it ended. One step (``align_pair``) matches, globally and one to
one within the pair:

1. identical wordings (numbers masked, so a renumbered cross-reference is no
   edit), equal numbers paired first when a wording repeats, then numbers
   under the same rule; then rules that kept their first sentence and number,
   and rules cut into themselves and new subrules lettered under them (the
   opening stays under the number); then rules that the release's own
   cross-references place (rules that stayed word for word cite them under a
   new number: ``_cited_as``);
2. the runs between the identical rules that keep their order (a keyword
   inserted shifts a whole block), and the rules of sections paired by title
   (or by the newer release's "(Obsolete)" glossary renames), each paired
   order-preservingly by similarity (a rule split in place goes on in the
   piece that kept its first sentence, word for word if one did, or its
   number and opening); a weak pair, resting on the subset score, must keep
   the longer words of one of the two; a rule moves into a section new in
   the release only from its own chapter;
3. what is left, anywhere in the release (a rule moved to another section),
   by a stricter similarity (the near one in the section where its
   section-mates went, or when the two cite one rule), not by a subset
   match alone unless the two open
   alike; then a rule left over that kept an example no
   other rule has (reworded round it); between these passes, an old rule
   whose words now stand inside a neighbouring new rule that continues
   another lineage is merged there (``_absorbed``), not paired with a looser
   match, nor is one whose examples went into a new rule that continues
   another; a rule whose neighbour moved goes with it when that is closer;
   what is left of a section rewritten in place, at a lower similarity, in
   its own section or in those its rules went to; a rule under its own
   number, unless its subrules went on under another; a keyword's definition
   in its definition; a rule whose unique first sentence opens a new rule
   word for word, in place of one merged in after that opening; a rule paired
   with a piece cut from it, in the whole, when that is free and closer;
4. splits (a new rule whose wording lies inside an old one that continued
   elsewhere: ``split_from``), merges (an old rule whose wording lies inside a
   new one that continues another lineage, near it or, every word of it,
   farther off in that section: ``merged_into``), each between
   rules about the same keywords and never from or into a rule that went on
   word for word;
5. in a renumbered release only (July 2009), what is left: a rule and a new
   rule whose first sentences are one in other words, or each other's closest
   by a clear margin, letter by letter, or by the rarer words they share in the
   section its own became (anywhere, closer still, for a rule whose section
   became none), and the one subrule left over under a paired rule with the
   one left under its partner; the rest removed or added.

Undated or partial sources (FAQ and web pages, truncated copies) never end a
lineage: each is attached to the release whose numbers and wording it shares
most, aligned with that release (``pipeline.lineage.align``), and mapped through its
lineages.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import TracebackType

import numpy as np
from rapidfuzz import fuzz, process

from pipeline import workers
from pipeline.cache import SourceCache
from pipeline.corpus.dedupe import normalise_number
from pipeline.lineage.evidence import (
    Release,
    Step,
    Subjects,
    _Alike,
    _contained,
    _first_sentence,
    _left_over,
    _lettered,
    _likeness,
    _near,
    _numbering_kept,
    _pair,
    _say_the_same,
    _subrules,
    _votes,
    _words_kept,
    similarity,
)
from pipeline.lineage.thresholds import (
    ABSORBED_MARGIN,
    CLOSEST_MARGIN,
    GAP_BONUS,
    HEAD_BONUS,
    KEYWORD_SECTIONS,
    MAX_IN_PLACE,
    MAX_SPREAD,
    MIN_ABSORBED,
    MIN_ALL_WORDS,
    MIN_CLOSEST,
    MIN_CONTAINED,
    MIN_CONTAINED_CHARS,
    MIN_FAR,
    MIN_HEAD,
    MIN_HEAD_WORDS,
    MIN_HOMELESS_COSINE,
    MIN_NEAR,
    MIN_OPENING_ALIKE,
    MIN_OPENING_WORDS,
    MIN_RARE_WORDS_COSINE,
    MIN_SAME_EXAMPLE,
    MIN_SAME_NUMBER,
    MIN_SAME_SECTION,
    MIN_SPREAD_LETTERS,
    MIN_TAKEN_IN,
    MIN_WHOLE_GAIN,
    MIN_WORDS_SAME_NUMBER,
    OPENING_MARGIN,
    RARE_WORDS_LEAD,
    SAME_NUMBER_BONUS,
    SAME_OPENING_BONUS,
    SECTION_BONUS,
    WEAK_PAIR,
)
from pipeline.numbers import section_of
from pipeline.records import Element, Source
from pipeline.text import folded

_WORD = re.compile(r"[a-z][a-z'-]+")


def align_pair(a: Release, b: Release) -> Step:
    """Match the rules of release ``a`` with those of its successor ``b``."""
    step = Step()
    step.sections = _sections_by_title(a, b)
    subjects = Subjects.of(a, b)
    alike = _Alike(a, b, subjects)
    _identical(a, b, step)
    _kept_heads(a, b, step)
    _split_into_subrules(a, b, step)
    _absorbed(a, b, step, subjects)
    _cited_as(a, b, step, subjects)
    _by_context(a, b, step, alike)
    _vote_sections(a, b, step)
    _absorbed(a, b, step, subjects)
    _by_context(a, b, step, alike)
    _same_examples(a, b, step, subjects)
    _absorbed(a, b, step, subjects)
    _examples_went_with(a, b, step)
    _leftovers_in_place(a, b, step, subjects)
    _same_number(a, b, step, subjects)
    _moved_with_its_block(a, b, step)
    _keyword_defined(a, b, step)
    _opening_goes_on(a, b, step)
    _opening_over_piece(a, b, step)
    _kept_number_opens(a, b, step)
    _cut_into_a_list(a, b, step)
    _whole_before_piece(a, b, step)
    _whole_before_part(a, b, step)
    _splits_and_merges(a, b, step, subjects)
    if not _numbering_kept(a, b, step):  # July 2009: numbers and sections say little of where a rule went
        _closest_openings(a, b, step, subjects)
        _closest_letters(a, b, step, subjects, alike)
        _closest_rare_words(a, b, step, subjects)
        _only_child_left(a, b, step, subjects)
    _parent_opens(a, b, step)
    _vote_sections(a, b, step, last=True)
    return step


def _sections_by_title(a: Release, b: Release) -> dict[str, str]:
    """Sections paired by title (or by a rename the newer glossary records). A
    title several sections share ("General" opens each chapter) pairs within
    the chapter of the same title: July 2009's chapter 3 Turn Structure became
    chapter 5, so its 300 General is 500 General, not 300 (Card Types'); in a
    chapter no longer there (or in a release without chapters), or twice in
    its chapter (2003-2009's 200 and 212.1 General), the section keeps its
    number if that has the title."""
    titles: dict[str, list[str]] = defaultdict(list)
    for number, title in b.sections.items():
        titles[title].append(number)
    out = {}
    for number, title in a.sections.items():
        found = titles.get(title, [])
        if not found and title in b.aliases:
            found = [b.aliases[title]]
        if len(found) > 1:
            chapter = a.chapters.get(number[:1])
            within = [n for n in found if chapter and b.chapters.get(n[:1]) == chapter]
            gone = chapter not in b.chapters.values()
            found = within if len(within) == 1 else [number] if number in (within or (found if gone else [])) else []
        if len(found) == 1:
            out[number] = found[0]
    return out


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
    lambda a, b, i, j: section_of(a.numbers[i]) == section_of(b.numbers[j]),
    lambda a, b, i, j: a.sections_of[i] == b.sections_of[j],
    lambda a, b, i, j: True,
)


def _ordered(step: Step) -> list[tuple[int, int]]:
    """The longest run of pairs that keeps the order of both releases (anchors)."""
    pairs = sorted(step.pairs.items())
    # Longest increasing subsequence of b indexes, O(n log n).
    tails: list[int] = []
    tail_at: list[int] = []
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        back[k] = tail_at[pos - 1] if pos else -1
    out = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


def _gaps(a: Release, b: Release, step: Step) -> tuple[np.ndarray, np.ndarray]:
    """For each rule of ``a``, the span of ``b`` between the partners of its
    nearest anchors before and after it (where it stands, if it kept its place).
    (An anchor's own entries are those of the span after it: anchors are paired,
    and only unpaired rules are looked up.)"""
    anchors = [(-1, -1), *_ordered(step), (len(a.keys), len(b.keys))]
    at_a = np.array([i for i, _ in anchors], dtype=np.int64)
    at_b = np.array([j for _, j in anchors], dtype=np.int64)
    before = np.searchsorted(at_a, np.arange(len(a.keys)), side="right") - 1
    return at_b[before], at_b[before + 1]


def _by_context(a: Release, b: Release, step: Step, alike: _Alike) -> None:
    """Pair what is left, most likely first, one to one. A pair is likely when
    the wordings are close, and closer still when the rule kept its place: in
    the span between the same identical neighbours, in the section its own
    section became (or in a section new in ``b``: rules move into new sections),
    under the same number. Without such context only a close wording pairs."""
    taken = set(step.pairs.values())
    rows = [i for i in range(len(a.keys)) if i not in step.pairs and i not in step.merged_into]
    cols = [j for j in range(len(b.keys)) if j not in taken]
    if not rows or not cols:
        return
    xs, ys = [a.keys[i] for i in rows], [b.keys[j] for j in cols]
    straight, matrix = alike(rows, cols)
    lo, hi = _gaps(a, b, step)
    r_idx = np.array(rows)
    c_idx = np.array(cols)
    in_gap = (c_idx[None, :] > lo[r_idx][:, None]) & (c_idx[None, :] < hi[r_idx][:, None])
    known = set(step.sections.values())
    target = np.array([step.sections.get(a.sections_of[i], "\x00") for i in rows], dtype=object)
    b_secs = np.array([b.sections_of[j] for j in cols], dtype=object)
    # In a renumbered document (July 2009) nearly every section is "new": no context.
    new_sec = np.array([sec not in known for sec in b_secs]) & _numbering_kept(a, b, step)
    in_section = np.equal.outer(target, b_secs).astype(bool) | _moves_into(
        b, new_sec, b_secs, xs, [a.sections_of[i] for i in rows], alike.subjects)
    same_number = np.equal.outer(np.array([a.numbers[i] for i in rows], dtype=object),
                                 np.array([b.numbers[j] for j in cols], dtype=object)).astype(bool)
    context = in_gap | in_section
    keep = (matrix > 0) & context
    # First sentences, each made once: the passes below compare them pair by pair.
    firsts_x, firsts_y = [_first_sentence(t) for t in xs], [_first_sentence(t) for t in ys]
    heads_a, heads_b = a.heads, b.heads
    # Far from its place, a rule pairs at MIN_FAR when the wordings are alike
    # letter by letter. On the subset score alone (a wording that holds the
    # other's words) it pairs only if it opens as the other does: "an activated
    # or triggered ability is targeted if ..." (2009's 415.2) stands inside the
    # spell rule 113.1a's parenthesis, but goes on in 113.1c; 408.2b goes on as
    # the opening of 405.6b. And a rule that opens as the other does (each
    # first sentence unique in its release) pairs at the near similarity, far
    # as it is: 2009's special actions moved from 408.2 into the new 114.2,
    # each reworded after its opening ("playing a land is a special action").
    # A rule whose section-mates that were paired all went to one section
    # (two or more: too few to pair the sections) pairs there when alike
    # letter by letter: 2009's loop rule 421.1 went into the shortcut
    # rules as 713.1b, where 421.4 and 421.6 went.
    # So does one that refers to the rule its own reference became: 2004's
    # 212.4j ("an object that is an enchant world is a global enchantment ...
    # see rule 420.5i") went into the new supertype rules as 205.4d ("... the
    # world rule (see rule 420.5i)").
    siblings = _where_siblings_went(a, b, step)
    cited = _cited_alike(a, b, step)
    for r, c in np.argwhere(~context & (matrix > 0)).tolist():
        x, y = firsts_x[r], firsts_y[c]
        if matrix[r, c] >= MIN_FAR:
            keep[r, c] = straight[r, c] >= MIN_NEAR or _opens_alike(x, y)
        elif straight[r, c] >= MIN_NEAR and (siblings.get(a.sections_of[rows[r]]) == b_secs[c]
                                             or cited(rows[r], cols[c])):
            keep[r, c] = True
        else:
            keep[r, c] = heads_a[x] == 1 and heads_b[y] == 1 and _opens_alike(x, y)
    # A weak pair that rests on the subset score (the old rule's short and common
    # words all stand in the new one) must also keep the longer words of one of
    # them: 2009's 502.15e ("when a permanent phases out, all damage dealt to it is
    # removed") is not the phased-out status rule 702.23b, which only shares
    # "permanent phases out"; the damage rule was dropped.
    for r, c in np.argwhere(keep & (matrix < WEAK_PAIR) & (straight < MIN_NEAR)).tolist():
        keep[r, c] = _say_the_same(xs[r], ys[c])
    score = matrix + GAP_BONUS * in_gap + SECTION_BONUS * in_section + SAME_NUMBER_BONUS * same_number
    cand = np.argwhere(keep).tolist()
    head: dict[tuple[int, int], bool] = {}
    opened: list[tuple[int, int]] = []  # first sentences one beyond doubt
    opens_so: list[tuple[int, int]] = []  # first sentences that open with the same words
    for r, c in cand:
        x, y = firsts_x[r], firsts_y[c]
        head[r, c] = _same_head(x, y)
        # A head many rules share ("As this step begins, ...") says nothing to
        # the score; it still settles a tie (pieces a rule was cut into, each
        # of its words: the one it opened with goes on). Far from its place as
        # well: 2009's 200.7 ("An ability can be one of two things. First,
        # ...") went on in 112.1, its first sentence alone, not in 112.1b.
        if heads_a[x] == 1 and heads_b[y] == 1 and head[r, c]:
            # Of two pieces opening alike, the one that opens with the very same
            # sentence ("effects that use the word 'instead' are replacement
            # effects", 2009's 613.1a, not the "skip" rule 613.1b cut from it).
            score[r, c] += HEAD_BONUS + (SAME_OPENING_BONUS if x == y else 0.0)
            if len(x) < len(xs[r]):
                (opened if _opens_alike(x, y) else opens_so).append((r, c))
    _opening_first(opened, cand, score, lambda won, cell: straight[cell] <= straight[won] and not same_number[cell])
    if opens_so:
        # Opening with the same words is weaker evidence ("at the end of a
        # subgame of a ..." opens two rules): it outranks only the pieces, the
        # pairs little alike letter by letter that do not keep the number: a
        # shorter new rule cut from the old one (a split piece), or a shorter
        # old rule whose words stand inside the new one (merged there: 2009's
        # 502.10c, "a player may declare as many attacking bands as he or she
        # wants", inside 702.19c, which opens as 502.10b did).
        shorter = np.array([len(t) for t in ys])[None, :] < np.array([len(t) for t in xs])[:, None]
        loose = (straight < MIN_NEAR) & ~same_number
        cut, inside = shorter & loose, ~shorter & loose
        # Under the number it kept, its opening outranks any shorter piece cut from it.
        cut_kept = shorter & ~same_number
        _opening_first(opens_so, cand, score,
                       lambda won, cell: bool((cut_kept[cell] if same_number[won] else cut[cell])
                                              if cell[0] == won[0] else inside[cell]))
    order = sorted(cand, key=lambda rc: (-score[rc[0], rc[1]], not head[rc[0], rc[1]], -straight[rc[0], rc[1]],
                                         rc[0], rc[1]))
    for r, c in order:
        i, j = rows[r], cols[c]
        if i not in step.pairs and j not in taken:
            _pair(step, i, j, min(100.0, float(matrix[r, c])))
            taken.add(j)


def _moves_into(b: Release, new_sec: np.ndarray, b_secs: np.ndarray, xs: Sequence[str],
                xs_secs: Sequence[str], subjects: Subjects) -> np.ndarray:
    """Which old rules (``xs``) may have moved into each new rule's section,
    when that section is new in ``b``: any rule, but into a new keyword section
    only one that names its keyword (2013's 700.4a, "... is indestructible",
    went into the new 702.12, Indestructible). A keyword's rules are about it:
    a generated release's new 702.192c ("... refers to the wast value of an
    object ...") had taken in the targeting rule 115.1a, removed in that
    release, as a rule moved there (a 64 subset score, in a new section); and
    1999's trample rule 502.9d had gone on in banding's 502.10e of 2001 (where
    502.9d was emptied to "Ignore this rule.")."""
    into = np.repeat(new_sec[None, :], len(xs), axis=0)
    # Only from the same chapter: 2010-02's new Commander section 903 took in no
    # multiplayer rule of chapter 8 (808.6, Grand Melee's win/lose rule, was removed).
    chapters = np.array([s[:1] for s in xs_secs], dtype=object)
    into &= np.equal.outer(chapters, np.array([s[:1] for s in b_secs], dtype=object)).astype(bool)
    for c in np.flatnonzero(new_sec).tolist():
        sec = b_secs[c]
        title = b.sections.get(sec, "")
        if title and sec.startswith(KEYWORD_SECTIONS):
            into[:, c] = [title in subjects.named(x) for x in xs]
    return into


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
                or new == old or section_of(new) == old:
            continue
        score = _likeness(a.keys[i], b.keys[j], MIN_NEAR)
        if score and subjects.same(a.keys[i], b.keys[j]):
            _pair(step, i, j, score)
            taken.add(j)


def _cited_alike(a: Release, b: Release, step: Step) -> Callable[[int, int], bool]:
    """Whether an old and a new rule refer to one rule: the new one cites what
    a rule the old one cites became (as paired so far)."""
    def cited(i: int, j: int) -> bool:
        became = {step.pairs.get(a.at.get(n, -1), -1) for n in a.cites[i]} if a.cites else set()
        return any(b.at.get(n, -2) in became for n in b.cites[j]) if b.cites else False

    return cited


def _opens_alike(x: str, y: str) -> bool:
    """Whether two first sentences are one beyond doubt: close in wording, or
    the shorter one, ``MIN_OPENING_WORDS`` words or more, the start of the
    longer (a sentence that took in the next: 'normally, objects ... matched
    any trigger conditions' + ', and continuous effects ...'). Opening with the
    same words is not enough here: 'if a player is instructed to put a ...'
    opens many rules.

    >>> _opens_alike("playing a land is a special action.",
    ...              "playing a land is a special action consisting of putting that land into play.")
    True
    >>> _opens_alike("normally, objects that exist immediately after an event are checked.",
    ...              "normally, objects that exist immediately after an event are checked, and effects apply.")
    True
    >>> _opens_alike("if a player is instructed to put a card that isn't a double-faced card onto the "
    ...              "battlefield transformed, that card stays in its current zone.",
    ...              "if a player is instructed to put a modal double-faced card onto the battlefield and "
    ...              "its front face isn't a permanent card, the card stays in its current zone.")
    False
    """
    short, longer = sorted((x.rstrip("."), y.rstrip(".")), key=len)
    return fuzz.ratio(x, y) >= MIN_HEAD or (longer.startswith(short) and len(short.split()) >= MIN_OPENING_WORDS)


def _opening_first(opened: list[tuple[int, int]], cand: list[list[int]], score: np.ndarray,
                   outranks: Callable[[tuple[int, int], tuple[int, int]], bool]) -> None:
    """A rule of several sentences split into pieces goes on in the piece that
    opens with its first sentence (``opened``: pairs of ``score`` whose first
    sentences are one): that pair ranks above every other pair of the old
    rule or of the new one that it ``outranks`` (one whose only edge is the
    subset score). A short piece holds all of its words in the old rule, and
    so scores as a subset nearly as high as an unchanged rule: 2017's
    look-back rule 603.6d went on in its last exception 603.10g ('...
    planeswalks away from a plane look back in time'), not in 603.10, which
    opens as it did."""
    if not opened:
        return
    by_row: dict[int, list[int]] = defaultdict(list)
    by_col: dict[int, list[int]] = defaultdict(list)
    for r, c in cand:
        by_row[r].append(c)
        by_col[c].append(r)
    winners = set(opened)
    cap: dict[tuple[int, int], float] = {}
    for r, c in opened:
        rivals = [(r, c2) for c2 in by_row[r]] + [(r2, c) for r2 in by_col[c]]
        for cell in rivals:
            if cell not in winners and outranks((r, c), cell):
                cap[cell] = min(cap.get(cell, np.inf), score[r, c] - 0.5)
    for cell, top in cap.items():
        score[cell] = min(score[cell], top)


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
        parent = b.at.get(section_of(b.numbers[j]))  # the rule 903.9a is lettered under
        if parent is None or parent == j or parent not in back:
            return False
        return section_of(a.numbers[i]) != a.numbers[back[parent]]

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


def _same_head(x: str, y: str) -> bool:
    """Whether two first sentences are one: close in wording, or opening with
    the same ``MIN_HEAD_WORDS`` words.

    >>> _same_head("an object's timestamp is the time it entered the zone it's currently in, with "
    ...            "three exceptions: (a) whenever an aura becomes attached, it gets a new timestamp.",
    ...            "an object's timestamp is the time it entered the zone it's currently in, unless "
    ...            "it's an aura that's attached to another object.")
    True
    >>> _same_head("second, any abilities that triggered on attackers being declared go on the stack.",
    ...            "any abilities that trigger on attackers being declared trigger.")
    False
    """
    if fuzz.ratio(x, y) >= MIN_HEAD:
        return True
    wx, wy = x.split(maxsplit=MIN_HEAD_WORDS), y.split(maxsplit=MIN_HEAD_WORDS)
    return len(wx) > MIN_HEAD_WORDS and len(wy) > MIN_HEAD_WORDS and wx[:MIN_HEAD_WORDS] == wy[:MIN_HEAD_WORDS]


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
    return bool(went) and all(section_of(b.numbers[m]) != b.numbers[j] for m in went)


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


def _opening_goes_on(a: Release, b: Release, step: Step) -> None:
    """A rule left over whose first sentence (``MIN_OPENING_WORDS`` words or
    more, unique in both releases) opens a new rule word for word takes that
    rule from the rule paired with it, if that one neither kept its number nor
    opened so (it was merged in after the opening; it is left over for
    ``_splits_and_merges``): 2003's 214.9d ("the basic land types are plains,
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


def _opening_over_piece(a: Release, b: Release, step: Step) -> None:
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


def _kept_number_opens(a: Release, b: Release, step: Step) -> None:
    """A rule left over whose number a new rule kept goes on there when that
    rule opens with what it said, in other words, and only then holds the rule
    paired with it (which had another number: it was merged in after the
    opening, and is left over for ``_splits_and_merges``). 2022's coin-flip
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
        head = b.at.get(section_of(b.numbers[piece]))
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
            step.split_from[j] = i  # however far from the whole (``_splits_and_merges`` looks ``NEAR`` only)


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
        parent = a.at.get(section_of(a.numbers[i]))
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


def _keyword_defined(a: Release, b: Release, step: Step) -> None:
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
    for r, c in _each_others_best(ratio, lambda top, second: top >= MIN_CLOSEST and top - second >= CLOSEST_MARGIN):
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
    for r, c in _each_others_best(
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
        parent = a.at.get(section_of(a.numbers[i]))
        if parent is not None and parent != i and parent in step.pairs:
            under[parent].append(i)
    for parent, olds in under.items():
        news = [j for j in _subrules(b, step.pairs[parent]) if j in free]
        if len(olds) == 1 and len(news) == 1 and subjects.same(a.keys[olds[0]], b.keys[news[0]]):
            _pair(step, olds[0], news[0], _likeness(a.keys[olds[0]], b.keys[news[0]]))


def _each_others_best(scores: np.ndarray, clear: Callable[[float, float], bool]) -> list[tuple[int, int]]:
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


def _vote_sections(a: Release, b: Release, step: Step, last: bool = False) -> None:
    """A section its title did not pair goes where most of its paired (or
    merged) rules went: Bands with other went into Banding in 2009. On a tie,
    where the first of them went: 415.7 Changing Targets, whose 415.7a went to
    113 Targets and 415.7b to 700 General, is Targets. Once every rule is
    paired (``last``), also where all of them went, two or more and a third of
    its rules: 2009's 408.1 Timing, Priority, and the Stack, four of whose nine
    rules went into 115 Timing and Priority and the rest ended (as a place to
    look for rules while pairing them, that says too little)."""
    size, votes = Counter(a.sections_of), _votes(a, b, step)
    for sec, count in votes.items():
        if sec in step.sections:
            continue
        target, n = max(count.items(), key=lambda kv: kv[1])  # the first of the most (rule order)
        if n * 2 >= size[sec]:
            step.sections[sec] = target
    if last:
        for sec, target in _where_siblings_went(a, b, step).items():
            if votes[sec].total() * 3 >= size[sec]:
                step.sections[sec] = target


def _where_siblings_went(a: Release, b: Release, step: Step) -> dict[str, str]:
    """For each section of ``a`` not paired, the one section of ``b`` where all
    of its paired rules went, two or more (fewer than half: ``_vote_sections``
    pairs it only once every rule is paired, and a third of them went on)."""
    return {sec: next(iter(count)) for sec, count in _votes(a, b, step).items()
            if sec not in step.sections and len(count) == 1 and count.total() >= 2}


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


def _splits_and_merges(a: Release, b: Release, step: Step, subjects: Subjects) -> None:
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
            around += [p for j in around if (p := b.at.get(section_of(b.numbers[j]), j)) not in around]
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


@dataclass
class Lineage:
    """One row of ``lineages.csv``."""

    lineage_id: str
    first_source: str
    first_number: str
    last_source: str = ""
    last_number: str = ""
    canonical_number: str = ""
    ended: str = ""
    ended_in: str = ""
    split_from: str = ""
    merged_into: str = ""


@dataclass
class Lineages:
    """Every lineage, and which lineage each rule element of each source is in."""

    lineages: dict[str, Lineage] = field(default_factory=dict)
    of_element: dict[tuple[str, int], str] = field(default_factory=dict)  # (source, line) -> lineage
    by_number: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, number) -> lineage
    score: dict[tuple[str, int], float] = field(default_factory=dict)  # weakest step from here on
    sections: dict[tuple[str, str], str] = field(default_factory=dict)  # (release, section) -> current
    releases: list[str] = field(default_factory=list)
    step_keys: list[str] = field(default_factory=list)  # the cache entries of the steps

    def current(self, source_id: str, number: str) -> tuple[str, str]:
        """(lineage id, canonical number) of a number as one source wrote it."""
        lid = self.by_number.get((source_id, normalise_number(number)), "")
        return lid, self.lineages[lid].canonical_number if lid else ""


def follow(releases: Sequence[tuple[Source, Sequence[Element]]], jobs: int = 1,
           cache: SourceCache | None = None, ahead: Ahead | None = None) -> Lineages:
    """Chain the steps between consecutive releases (given in date order); the
    steps themselves are independent, aligned in ``jobs`` processes, each read
    from ``cache`` when the same two releases were aligned before, or taken from
    ``ahead`` when it aligned them while the sources were being cleaned."""
    out = Lineages(releases=[s.source_id for s, _ in releases])
    built = [ahead.built(s.source_id, els) if ahead else Release.build(s.source_id, els) for s, els in releases]
    steps = _steps(built, jobs, cache, out.step_keys, ahead)
    ids: list[list[str]] = []
    for k, rel in enumerate(built):
        if k == 0:
            ids.append([_new(out, rel, j) for j in range(len(rel.rules))])
            continue
        prev = built[k - 1]
        step = steps[k - 1]
        back = {j: i for i, j in step.pairs.items()}
        here = []
        for j in range(len(rel.rules)):
            if j in back:
                here.append(ids[k - 1][back[j]])
            else:
                lid = _new(out, rel, j)
                if j in step.split_from:
                    out.lineages[lid].split_from = ids[k - 1][step.split_from[j]]
                here.append(lid)
        ids.append(here)
        for i in range(len(prev.rules)):
            if i in step.pairs:
                continue
            gone = out.lineages[ids[k - 1][i]]
            gone.ended, gone.ended_in = "removed", rel.source_id
            if i in step.merged_into:
                gone.ended, gone.merged_into = "merged", here[step.merged_into[i]]
    for k, rel in enumerate(built):
        for j, el in enumerate(rel.rules):
            lid = ids[k][j]
            line = out.lineages[lid]
            line.last_source, line.last_number = rel.source_id, rel.numbers[j]
            out.of_element[rel.source_id, el.line_start] = lid
            out.by_number.setdefault((rel.source_id, rel.numbers[j]), lid)
    if built:
        newest = built[-1]
        for j, lid in enumerate(ids[-1]):
            out.lineages[lid].canonical_number = newest.numbers[j]
        _weakest_steps(out, built, ids, steps)
        _section_chain(out, built, steps)
    return out


def _steps(built: Sequence[Release], jobs: int, cache: SourceCache | None, used: list[str],
           ahead: Ahead | None = None) -> list[Step]:
    """``align_pair`` of each release with the next, in order; the cache keys
    of the steps go to ``used``."""
    digests = [rel.digest() for rel in built] if cache else []
    keys = [cache.step_key(x, y) for x, y in zip(digests, digests[1:], strict=False)] if cache else []
    used.extend(keys)
    found: list[Step | None] = [cache.get(key) for key in keys] if cache else [None] * max(0, len(built) - 1)
    todo = [k for k, step in enumerate(found) if not isinstance(step, Step)]
    if ahead:
        for k in todo:
            found[k] = ahead.take(built[k], built[k + 1])
    rest = [k for k in todo if found[k] is None]
    if jobs <= 1 or len(rest) < 2:
        made = [align_pair(built[k], built[k + 1]) for k in rest]
    else:
        # Alignment reads numbers, wordings and sections only: the elements stay here.
        light = [rel.light() for rel in built]
        with workers.pool(jobs, fresh=True) as executor:
            made = list(executor.map(align_pair, [light[k] for k in rest], [light[k + 1] for k in rest],
                                     chunksize=4))
    for k, step in zip(rest, made, strict=True):
        found[k] = step
    if cache:
        for k in todo:
            cache.put(keys[k], found[k])
    return [step for step in found if isinstance(step, Step)]


class Ahead:
    """Steps aligned ahead: each release, once cleaned, is sent to a pool of
    ``jobs`` workers to be aligned with the release before it, while the main
    process cleans the rest (cleaning is the main process's alone, and would
    leave the second core idle). ``_steps`` then takes the steps it needs; one
    it needs but was not aligned ahead (a release the checks after cleaning
    took out of the chain leaves a gap) is aligned then. A step already in the
    cache is not aligned ahead. A context manager: the pool ends with it."""

    def __init__(self, jobs: int, cache: SourceCache | None) -> None:
        self.jobs, self.cache = jobs, cache
        self._stack = ExitStack()
        self._executor: ProcessPoolExecutor | None = None
        self._releases: dict[str, tuple[Sequence[Element], Release]] = {}
        self._last: Release | None = None
        self._futures: dict[tuple[str, str], Future[Step]] = {}

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._executor is not None and not all(f.done() for f in self._futures.values()):
            workers.stop(self._executor)  # steps nobody took: not worth waiting for
        self._futures.clear()
        # Its releases hold the cleaned elements: let them go with the stage that
        # used them (kept, they held a whole generation of elements through dedupe).
        self._releases.clear()
        self._last = None
        self._stack.__exit__(kind, error, trace)  # on an error, the pool stops its workers at once

    def add(self, source_id: str, elements: Sequence[Element]) -> None:
        """The next release of the chain, as far as is known before the checks (in date order)."""
        rel = Release.build(source_id, elements)
        self._releases[source_id] = (elements, rel)
        before, self._last = self._last, rel
        if before is None or self.jobs <= 1:
            return
        if self.cache and self.cache.has(self.cache.step_key(before.digest(), rel.digest())):
            return  # read from the cache by _steps (a damaged entry is aligned then)
        if self._executor is None:
            self._executor = self._stack.enter_context(workers.pool(self.jobs, fresh=True))
        self._futures[before.digest(), rel.digest()] = self._executor.submit(align_pair, before.light(), rel.light())

    def built(self, source_id: str, elements: Sequence[Element]) -> Release:
        """The release ``add`` built from these very elements, else a new one."""
        found = self._releases.get(source_id)
        return found[1] if found and found[0] is elements else Release.build(source_id, elements)

    def take(self, a: Release, b: Release) -> Step | None:
        """The step from ``a`` to ``b``, if it was aligned ahead (waits for it)."""
        future = self._futures.pop((a.digest(), b.digest()), None)
        return future.result() if future is not None else None


def _new(out: Lineages, rel: Release, j: int) -> str:
    base = f"{rel.source_id}:{rel.numbers[j]}"
    lid, n = base, 1
    while lid in out.lineages:
        n += 1
        lid = f"{base}~{n}"
    out.lineages[lid] = Lineage(lid, rel.source_id, rel.numbers[j])
    return lid


def _weakest_steps(out: Lineages, built: list[Release], ids: list[list[str]], steps: list[Step]) -> None:
    """For each rule, the lowest similarity of the steps from it to today (100 when identical)."""
    ahead: dict[str, float] = {}
    for k in range(len(built) - 1, -1, -1):
        rel = built[k]
        for i, el in enumerate(rel.rules):
            lid = ids[k][i]
            here = 100.0 if k == len(built) - 1 else steps[k].scores.get(i, 0.0)
            if k < len(built) - 1 and i in steps[k].pairs:
                here = min(here, ahead.get(lid, 100.0))
            out.score[rel.source_id, el.line_start] = here
        for i, lid in enumerate(ids[k]):
            ahead[lid] = out.score[rel.source_id, rel.rules[i].line_start]


def _section_chain(out: Lineages, built: list[Release], steps: list[Step]) -> None:
    """Each release's section numbers followed to the newest release. A
    section whose chain leads to one of another title is the newest
    release's one section of its own title, if there is one (and so are the
    sections of earlier releases it continues): Tokens
    (216) went into Permanents (110) in July 2009, and came back as a section
    of its own, 111 Tokens, in 2019."""
    newest = built[-1].sections
    titled = Counter(newest.values())
    own_title = {title: number for number, title in newest.items() if titled[title] == 1}
    current = {number: number for number in newest}
    for number, target in current.items():
        out.sections[built[-1].source_id, number] = target
    for k in range(len(built) - 2, -1, -1):
        step, sections = steps[k], built[k].sections
        current = {number: current.get(step.sections.get(number, ""), "") for number in sections}
        for number, target in current.items():
            title = sections[number]
            if target and newest.get(target) != title and title in own_title:
                current[number] = target = own_title[title]  # and so for what it continues
            out.sections[built[k].source_id, number] = target


def rule_pairs(elements: Iterable[Element]) -> tuple[set[tuple[str, str]], set[str]]:
    """A release's (number, folded wording) pairs and its wordings, for ``attach``."""
    pairs = {(normalise_number(e.number_as_written), folded(e.text)) for e in elements if e.kind == "rule"}
    return pairs, {t for _, t in pairs}


def attach(
    rules: Iterable[Element], releases: Sequence[tuple[str, tuple[set[tuple[str, str]], set[str]]]]
) -> str:
    """The release an undated source belongs to: the one sharing most of its
    (number, wording) pairs, then most wordings; the earliest on a tie.
    ``releases`` are (source id, ``rule_pairs`` of its elements), oldest first."""
    own = [(normalise_number(el.number_as_written), folded(el.text)) for el in rules if el.number_as_written]
    if not own:
        return ""
    best, best_id = (0, 0), ""
    for source_id, (pairs, texts) in releases:
        score = (sum(p in pairs for p in own), sum(t in texts for _, t in own))
        if score > best:
            best, best_id = score, source_id
    return best_id
