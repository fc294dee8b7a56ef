"""Pairs by context: where a rule stood, and which section became which.

Sections paired by title (``sections_by_title``) or by where their rules
went (``_vote_sections``, ``_where_siblings_went``); the runs between the
identical rules that keep their order (``_ordered``, ``_gaps``); and the pass
that pairs what is left, most likely first, a wording's similarity weighed by
its place (``_by_context``), where the piece that opens with a rule's first
sentence goes on (``_opening_first``).
"""

from __future__ import annotations

import bisect
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
    _numbering_kept,
    _pair,
    _say_the_same,
    _votes,
)
from pipeline.lineage.thresholds import (
    GAP_BONUS,
    HEAD_BONUS,
    KEYWORD_SECTIONS,
    MIN_FAR,
    MIN_HEAD,
    MIN_HEAD_WORDS,
    MIN_NEAR,
    MIN_OPENING_WORDS,
    SAME_NUMBER_BONUS,
    SAME_OPENING_BONUS,
    SECTION_BONUS,
    WEAK_PAIR,
)


def sections_by_title(a: Release, b: Release) -> dict[str, str]:
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
