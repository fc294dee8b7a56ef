"""Align every source to the reference numbering: sections by title, rules by wording.

Cost stays near-linear: every rule is first looked up by the hash of its
normalised wording; only what is left is fuzzy-matched (rapidfuzz), inside
its aligned section, order-preserving. Unnumbered paragraphs are matched
against the whole reference, so one pasted under the wrong heading still
finds its own rule.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

import numpy as np
from rapidfuzz import fuzz, process

from pipeline import numbers
from pipeline.lineage.thresholds import MIN_LOOSE_SCORE, MIN_RULE_SCORE, MIN_VOTE_SCORE, SHORTLIST, SUBSET_WEIGHT
from pipeline.numbers import normalise as normalise_number
from pipeline.numbers import section_of
from pipeline.records import Element, Mapping, evolve
from pipeline.text import masked, match_text, title_key

SEE_RULE = re.compile(rf"See rule ({numbers.SECTION_NUMBER})")


@dataclass
class RefSection:
    number: str
    title: str
    rules: list[tuple[str, str]] = field(default_factory=list)  # (number, match text)


@dataclass
class RefIndex:
    """The reference document, indexed for alignment."""

    sections: dict[str, RefSection]
    by_title: dict[str, list[str]]
    aliases: dict[str, str]
    glossary: dict[str, str]
    by_hash: dict[str, list[str]]
    rule_numbers: list[str]
    rule_texts: list[str]
    chapters: dict[str, str]
    # Memos: most of a corpus repeats wording and whole sections verbatim
    # (consecutive releases, re-scraped pages); each is aligned once.
    memo_rule: dict[tuple[str, str], tuple[str, float]] = field(default_factory=dict)
    shortlists: dict[str, list[int]] = field(default_factory=dict)
    memo_group: dict[bytes, tuple[Match, list[tuple[str, str, float, str]]]] = field(default_factory=dict)
    rule_lengths: np.ndarray = field(init=False, repr=False)  # the length of each of rule_texts

    def __post_init__(self) -> None:
        self.rule_lengths = np.fromiter(map(len, self.rule_texts), dtype=np.int64, count=len(self.rule_texts))

    @classmethod
    def build(cls, elements: Sequence[Element]) -> RefIndex:
        sections: dict[str, RefSection] = {}
        by_title: dict[str, list[str]] = defaultdict(list)
        by_hash: dict[str, list[str]] = defaultdict(list)
        chapters: dict[str, str] = {}
        numbers, texts = [], []
        aliases: dict[str, str] = {}
        glossary: dict[str, str] = {}
        line_to_section: dict[int, str] = {}
        for el in elements:
            number = normalise_number(el.number_as_written)
            if el.kind == "chapter":
                chapters[title_key(el.text)] = number
            elif el.kind == "section":
                sections.setdefault(number, RefSection(number, el.text))
                by_title[title_key(el.text)].append(number)
                line_to_section[el.line_start] = number
            elif el.kind == "rule":
                text = match_text(el.text)
                sec = line_to_section.get(el.parent_line, section_of(number))
                sections.setdefault(sec, RefSection(sec, "")).rules.append((number, text))
                by_hash[text].append(number)
                numbers.append(number)
                texts.append(text)
            elif el.kind == "glossary":
                glossary[title_key(el.term)] = el.text
                if el.term.endswith("(Obsolete)"):
                    m = SEE_RULE.search(el.text)
                    if m:
                        aliases[title_key(el.term.removesuffix("(Obsolete)"))] = m.group(1)
        return cls(sections, dict(by_title), aliases, glossary, dict(by_hash), numbers, texts, chapters)


@dataclass
class _Group:
    """A source section (or, without a heading, the rules sharing a number prefix)."""

    head: Element | None
    number: str
    rules: list[Element] = field(default_factory=list)


def _groups(elements: Sequence[Element]) -> list[_Group]:
    groups: dict[object, _Group] = {}
    order: list[_Group] = []
    for el in elements:
        if el.kind == "section":
            g = _Group(el, normalise_number(el.number_as_written))
            groups[el.line_start] = g
            order.append(g)
        elif el.kind == "rule":
            number = normalise_number(el.number_as_written)
            key: object = el.parent_line if el.parent_line in groups else ("virtual", section_of(number))
            if key not in groups:
                groups[key] = _Group(None, section_of(number))
                order.append(groups[key])
            groups[key].rules.append(el)
    return order


@dataclass(frozen=True, slots=True)
class Match:
    canonical: str
    method: str
    score: float
    reason: str = ""


def _title_candidates(group: _Group, ref: RefIndex) -> list[str]:
    """Reference sections the group's title names: its rename, or those bearing it."""
    if group.head is None or not group.head.text:
        return []
    key = title_key(group.head.text)
    return [ref.aliases[key]] if key in ref.aliases else ref.by_title.get(key, [])


def _section_match(group: _Group, ref: RefIndex) -> Match:
    """Find the reference section of a source section: by title, alias, then wording."""
    candidates = _title_candidates(group, ref)
    if len(candidates) == 1:
        hit = candidates[0]
        return Match(hit, "same" if hit == group.number else "title", 100.0)
    if candidates:
        # A title many sections share ("General"): the wording decides.
        by_words = _vote(group.rules, ref, set(candidates))
        if by_words:
            return replace(by_words, method="same" if by_words.canonical == group.number else "title")
    by_words = _vote(group.rules, ref)
    if by_words:
        return by_words
    if group.head is not None and group.head.text:
        note = ref.glossary.get(title_key(group.head.text))
        reason = f"no reference section titled {group.head.text!r}"
        return Match("", "unmapped", 0.0, reason + (f"; reference glossary: {note}" if note else ""))
    return Match("", "unmapped", 0.0, "no reference rule has this wording")


def _vote(rules: Sequence[Element], ref: RefIndex, among: set[str] | None = None) -> Match | None:
    """The reference section most of these rules' wordings belong to."""
    votes: Counter[str] = Counter()
    scores: dict[str, list[float]] = defaultdict(list)
    for el in rules[:8]:
        number, score = best_rule(el.text, ref)
        sec = _section_of_rule(number, ref) if number else ""
        if sec and (among is None or sec in among):
            votes[sec] += 1
            scores[sec].append(score)
    if not votes:
        return None
    sec, count = votes.most_common(1)[0]
    mean = sum(scores[sec]) / count
    # Most of the rules must agree, and closely: a section that shares a few
    # phrases with another is not that section.
    if count * 2 < min(len(rules), 8) or mean < MIN_VOTE_SCORE:
        return None
    return Match(sec, "text", round(mean, 1))


def _section_of_rule(number: str, ref: RefIndex) -> str:
    for sec in (section_of(number), number.rsplit(".", 1)[0]):
        if sec in ref.sections:
            return sec
    return section_of(number)


def prefetch(keys: Iterable[str], ref: RefIndex) -> None:
    """Shortlist candidates for many wordings (``match_text``) at once: one ``cdist``
    on both cores instead of a search per wording. Those with an exact match need none."""
    pending = sorted({
        key for key in keys if key not in ref.by_hash and key not in ref.shortlists and len(key) >= 12
    }, key=len)
    lengths = ref.rule_lengths
    for start in range(0, len(pending), 2048):
        batch = pending[start:start + 2048]
        # fuzz.ratio is 200·LCS/(|a| + |b|): 50 or more only when the longer text is at
        # most three times the shorter. The batch's texts are of near lengths (sorted),
        # so the rules outside that band, which would score 0 here, are never compared.
        cols = np.flatnonzero((lengths * 3 >= len(batch[0])) & (lengths <= 3 * len(batch[-1])))
        scores = process.cdist(batch, [ref.rule_texts[i] for i in cols], scorer=fuzz.ratio, score_cutoff=50,
                               dtype=np.float32, workers=-1)
        ref.shortlists.update(zip(batch, _top(scores, cols), strict=True))


def _top(scores: np.ndarray, cols: np.ndarray) -> list[list[int]]:
    """Each row's ``SHORTLIST`` best columns scoring above 0, best first, a tie by
    column order (``cols``: the reference rule of each column, ascending)."""
    n, width = scores.shape
    if width > SHORTLIST:
        # The SHORTLIST-th best score of each row: nothing below it can be among the best.
        floor = np.partition(scores, width - SHORTLIST, axis=1)[:, width - SHORTLIST]
        rows, at = np.nonzero((scores >= floor[:, None]) & (scores > 0))
    else:
        rows, at = np.nonzero(scores > 0)
    order = np.lexsort((at, -scores[rows, at], rows))
    rows, at = rows[order], at[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows)  # rows sorted: the place in its row
    keep = rank < SHORTLIST
    rows, picked = rows[keep], cols[at[keep]]
    flat, ends = picked.tolist(), np.cumsum(np.bincount(rows, minlength=n)).tolist()
    return [flat[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def best_rule(text: str, ref: RefIndex, within: str = "") -> tuple[str, float]:
    """The reference rule closest to ``text``: exact wording first, then fuzzy.

    With ``within``, a match in that section wins a tie against the rest.
    """
    return rule_for(match_text(text), ref, within)


def rule_for(key: str, ref: RefIndex, within: str = "") -> tuple[str, float]:
    """``best_rule`` of a wording already folded by ``match_text``."""
    memo_key = (key, within)
    if memo_key not in ref.memo_rule:
        ref.memo_rule[memo_key] = _best_rule(key, ref, within)
    return ref.memo_rule[memo_key]


def _best_rule(key: str, ref: RefIndex, within: str) -> tuple[str, float]:
    exact = ref.by_hash.get(key)
    if exact:
        local = [n for n in exact if within and _section_of_rule(n, ref) == within]
        return (local or exact)[0], 100.0
    if len(key) < 12:
        return "", 0.0
    # A cheap scorer shortlists; the weighted one (tolerant of a cut or an
    # appended sentence) decides among the few left.
    if key not in ref.shortlists:
        prefetch([key], ref)
    rescored = [(fuzz.WRatio(key, ref.rule_texts[i]), -i) for i in ref.shortlists[key]]
    if not rescored or max(rescored)[0] < MIN_LOOSE_SCORE:
        return "", 0.0
    score, neg_index = max(rescored)
    best = ref.rule_numbers[-neg_index]
    if within and within in ref.sections:
        for number, text2 in ref.sections[within].rules:
            if fuzz.WRatio(key, text2) >= score:
                return number, round(fuzz.WRatio(key, text2), 1)
    return best, round(score, 1)


def align_rules(rules: Sequence[Element], target: RefSection) -> dict[int, tuple[str, str, float]]:
    """Order-preserving alignment of a section's rules to the reference section's.

    Returns line_start -> (canonical number, method, score). Identical wordings
    are anchors (found by hashing, as difflib does); only the runs between
    anchors are fuzzy-matched, keeping the best monotonic pairing.
    """
    src = [match_text(el.text) for el in rules]
    dst = [t for _, t in target.rules]
    pairs: list[tuple[int, int, float]] = []
    i0 = j0 = 0
    for block in SequenceMatcher(None, src, dst, autojunk=False).get_matching_blocks():
        pairs += _fuzzy_run(src, dst, range(i0, block.a), range(j0, block.b))
        pairs += [(block.a + k, block.b + k, 100.0) for k in range(block.size)]
        i0, j0 = block.a + block.size, block.b + block.size
    out: dict[int, tuple[str, str, float]] = {}
    for i, j, score in pairs:
        number = target.rules[j][0]
        same = normalise_number(rules[i].number_as_written) == number
        out[rules[i].line_start] = (number, "same" if same else "text", round(score, 1))
    return out


def _fuzzy_run(src: list[str], dst: list[str], rows: range, cols: range) -> list[tuple[int, int, float]]:
    """Best monotonic pairing of two short runs by similarity (dynamic programming)."""
    if not rows or not cols:
        return []
    a = [masked(src[i]) for i in rows]
    b = [masked(dst[j]) for j in cols]
    # WRatio is 50x slower than these two and no better here: ratio for
    # rewordings, token_set_ratio for a rule cut short or grown a sentence.
    # Threads cost more than they save on the small matrices most gaps make.
    workers = -1 if len(a) * len(b) > 2000 else 1
    matrix = np.maximum(
        process.cdist(a, b, scorer=fuzz.ratio, score_cutoff=MIN_RULE_SCORE, dtype=np.float32, workers=workers),
        process.cdist(a, b, scorer=fuzz.token_set_ratio, dtype=np.float32, workers=workers) * SUBSET_WEIGHT,
    )
    sim = {
        (i, j): float(matrix[a, b])
        for a, i in enumerate(rows) for b, j in enumerate(cols) if matrix[a, b] >= MIN_RULE_SCORE
    }
    if not sim:
        return []
    best: dict[tuple[int, int], float] = {}
    for i in reversed(rows):
        for j in reversed(cols):
            take = sim.get((i, j), 0.0)
            if take:
                take += best.get((i + 1, j + 1), 0.0)
            best[i, j] = max(best.get((i + 1, j), 0.0), best.get((i, j + 1), 0.0), take)
    out = []
    i, j = rows.start, cols.start
    while i < rows.stop and j < cols.stop:
        here = best[i, j]
        if here == 0.0:
            break
        if (i, j) in sim and here == sim[i, j] + best.get((i + 1, j + 1), 0.0):
            out.append((i, j, sim[i, j]))
            i, j = i + 1, j + 1
        elif here == best.get((i + 1, j), 0.0):
            i += 1
        else:
            j += 1
    return out


def _group_key(group: _Group) -> bytes:
    """What a group's alignment depends on: its heading, numbers and wordings."""
    parts = [group.number, group.head.text if group.head else "\x00"]
    for el in group.rules:
        parts += [el.number_as_written, el.text]
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _align_group(group: _Group, ref: RefIndex) -> tuple[Match, list[tuple[str, str, float, str]]]:
    """The section match of a group and (number, method, score, reason) for each rule."""
    match = _section_match(group, ref)
    target = ref.sections.get(match.canonical)
    aligned = align_rules(group.rules, target) if target is not None else {}
    results = []
    for el in group.rules:
        if el.line_start in aligned:
            number, method, score = aligned[el.line_start]
            results.append((number, method, score, ""))
        elif normalise_number(el.number_as_written) == match.canonical and match.canonical:
            results.append((match.canonical, match.method, match.score, ""))
        else:
            number, score = best_rule(el.text, ref, match.canonical) if not target else ("", 0.0)
            why = f"no rule of {match.canonical} has this wording" if target else match.reason
            results.append((number, "text", score, "") if number else ("", "unmapped", 0.0, why))
    return match, results


def align(elements: Sequence[Element], ref: RefIndex | None, is_reference: bool) -> tuple[list[Element], list[Mapping]]:
    """Canonical numbers for one source's elements, and its ``renumber_map`` rows."""
    rows: list[Mapping] = []
    if is_reference or ref is None:
        out = []
        for el in elements:
            if el.kind in ("chapter", "section", "rule") and el.number_as_written:
                number = normalise_number(el.number_as_written) if is_reference else ""
                method = "same" if is_reference else "unmapped"
                reason = "" if is_reference else "no reference document in the run"
                rows.append(Mapping(el.source_id, el.number_as_written, el.text if el.kind == "section" else "",
                                    number, method, 100.0 if is_reference else 0.0, reason))
                el = evolve(el, canonical_number=number)
            out.append(el)
        return out, _unique(rows)
    assigned: dict[int, tuple[str, str, float, str]] = {}
    groups = [(g, _group_key(g)) for g in _groups(elements)]
    # Rules of sections their title does not settle, and every paragraph, may
    # need the whole reference searched: shortlist them all at once.
    untitled = [g for g, key in groups if key not in ref.memo_group and len(_title_candidates(g, ref)) != 1]
    prose = [match_text(el.text) for el in elements if el.kind == "prose"]
    prefetch([match_text(el.text) for g in untitled for el in g.rules] + prose, ref)
    prose_keys = iter(prose)
    for group, key in groups:
        if key not in ref.memo_group:
            ref.memo_group[key] = _align_group(group, ref)
        match, results = ref.memo_group[key]
        if group.head is not None:
            assigned[group.head.line_start] = (match.canonical, match.method, match.score, match.reason)
        for el, result in zip(group.rules, results, strict=True):
            assigned[el.line_start] = result
    out = []
    for el in elements:
        if el.kind == "chapter":
            number = ref.chapters.get(title_key(el.text), "")
            el = evolve(el, canonical_number=number)
        elif el.kind == "prose":
            within = assigned.get(el.parent_line, ("",))[0] if el.parent_line else ""
            number, score = rule_for(next(prose_keys), ref, within)
            if number != el.canonical_number:
                el = evolve(el, canonical_number=number)
        elif el.line_start in assigned:
            number, method, score, reason = assigned[el.line_start]
            title = el.text if el.kind == "section" else ""
            rows.append(Mapping(el.source_id, el.number_as_written, title, number, method, score, reason))
            el = evolve(el, canonical_number=number)
        out.append(el)
    return out, _unique(rows)


def _unique(rows: list[Mapping]) -> list[Mapping]:
    """One row per number as written (or per title, for unnumbered sections)."""
    seen: dict[tuple[str, str], Mapping] = {}
    for row in rows:
        seen.setdefault((row.number_as_written, row.title if not row.number_as_written else ""), row)
    return list(seen.values())


def numbering_versions(
    elements: Sequence[Element], versions: Sequence[str], eras: dict[str, str] | None = None
) -> dict[str, str]:
    """For each source, the whole CR document whose numbering its own agrees with most.

    A dump without a date shares its numbers with the release it was scraped
    from: ``702.40a`` for Entwine is the 2011-2013 numbering. The answer dates
    the dump in ``rule_history.csv`` and maps the cross-references it makes to
    rules it does not itself contain. A source with no numbers of its own gets
    the newest release of the wording era it shows (``eras``: source -> era).
    """
    pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for el in elements:
        if el.kind in ("rule", "section") and el.canonical_number and el.number_as_written:
            pairs[el.source_id].add((normalise_number(el.number_as_written), el.canonical_number))
    out: dict[str, str] = {}
    for sid, own in pairs.items():
        if sid in versions:
            out[sid] = sid
            continue
        agree = [(len(own & pairs[v]), i, v) for i, v in enumerate(versions)]
        best = max(agree, default=(0, 0, ""))
        if best[0]:
            out[sid] = best[2]
    for sid, era in (eras or {}).items():
        same_era = [v for v in versions if eras and eras.get(v) == era]
        if sid not in out and era and same_era:
            out[sid] = same_era[-1]
    return out
