"""The numbering stage: every element's canonical number, through the lineages.

The dated, complete official releases form the chain that ``pipeline.lineage.chain``
follows. Every other source (an FAQ or web page, a partial or truncated copy,
an undated release) is attached to the chain release it matches best, aligned
with that release by ``pipeline.lineage.align``, and mapped through its lineages, so it
never ends one. This stage derives every row about numbering (renumber_map,
lineages, rule_history); the writer only serialises them.

When ``raw/`` holds no release, or only releases older than its newest, a
history (``pipeline.lineage.history``: the one the package ships, or an earlier
published dataset's) lends its releases: they are numbered with the rest and
left out of what the stage returns, but for the reference's own elements (the
rules and sections tables are made of them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pipeline.cache import SourceCache
from pipeline.changes import change_of
from pipeline.lineage import align
from pipeline.lineage.attach import attach, rule_pairs
from pipeline.lineage.chain import Ahead, Lineages, chain_of, follow
from pipeline.lineage.history import History, to_use
from pipeline.numbers import normalise as normalise_number
from pipeline.numbers import section_of, sort_key
from pipeline.records import WRITTEN_TWICE, Element, Lineage, Mapping, Source, evolve
from pipeline.text import folded, title_key

Progress = Callable[[str, int, int], None]


@dataclass
class Numbering:
    """What the stage derives, ready to be written."""

    elements: list[list[Element]]
    mappings: list[Mapping]
    lineages: list[Lineage]
    history: list[dict[str, Any]]
    attached: dict[str, str]
    reference: str
    chain: list[str] = field(default_factory=list)
    step_keys: list[str] = field(default_factory=list)  # cache entries of the lineage steps
    reference_elements: list[Element] = field(default_factory=list)  # when the reference is the history's
    history_used: str = ""  # the name of the history used, if one was
    lent_mappings: list[Mapping] = field(default_factory=list)  # the history's releases' rows (for xrefs)
    reference_date: str = ""  # the reference's date when it is the history's release, not a source


def number(
    sources: Sequence[Source], cleaned: Sequence[Sequence[Element]], progress: Progress | None = None,
    jobs: int = 1, cache: SourceCache | None = None, ahead: Ahead | None = None, history: History | None = None,
) -> Numbering:
    """Canonical numbers for every source's elements, and the numbering tables;
    the lineage steps come from ``ahead`` where it aligned them already. The
    releases of ``history`` join the chain when ``raw/`` lacks them (``to_use``)."""
    own = len(sources)
    used, whole = to_use([sources[k] for k in chain_of(sources)], history)
    if used is not None:
        used = used.apart_from({s.source_id for s in sources})
        dates = {sources[k].effective_date for k in chain_of(sources)}
        lent = [(src, els) for src, els in used.releases if whole or src.effective_date not in dates]
        sources, cleaned = [*sources, *(s for s, _ in lent)], [*cleaned, *(els for _, els in lent)]
    chain = chain_of(sources)
    if used is not None and whole:
        lines = used.followed()
    else:
        lines = follow([(sources[k], cleaned[k]) for k in chain], jobs, cache, ahead)
    chain_ids = [sources[k].source_id for k in chain]
    reference = chain_ids[-1] if chain_ids else ""
    newest = Newest.of(cleaned[chain[-1]] if chain else ())
    out_elements: list[list[Element]] = []
    mappings: list[Mapping] = []
    attached: dict[str, str] = {}
    indexes: dict[str, align.RefIndex] = {}
    releases = [(sources[k], cleaned[k]) for k in chain]
    in_chain = set(chain)
    # Mapping through a history as a whole, the work on its releases alone is the same
    # every run: done once a history (``History.once``), its results shared, never changed.
    once = used.once if used is not None and whole else lambda _, make: make()
    worded = once("worded", lambda: _worded(chain, sources, cleaned, lines))
    pair_sets: list[tuple[str, tuple[set[tuple[str, str]], set[str]]]] = []  # made when first needed
    at = {sources[k].source_id: k for k in chain}
    for k, (src, els) in enumerate(zip(sources, cleaned, strict=True)):
        if progress and k < own:
            progress("align", k + 1, own)
        if k in in_chain:
            els, rows = once(("release", src.source_id), partial(_release, src, els, lines, newest))
            attached[src.source_id] = src.source_id
        elif src.status != "quarantined" and chain:
            if not pair_sets:
                pair_sets = once("pairs", lambda: [(rel.source_id, rule_pairs(rel_els)) for rel, rel_els in releases])
            target = _attach_to(src, els, releases, pair_sets)
            attached[src.source_id] = target
            if target not in indexes:
                indexes[target] = align.RefIndex.build(cleaned[at[target]])
            els, rows = _through(src, els, target, indexes[target], lines, newest, worded)
        else:
            rows = [Mapping(src.source_id, el.number_as_written, el.text if el.kind == "section" else "", "",
                            "unmapped", 0.0, "no official release in the run")
                    for el in els if el.kind in ("section", "rule") and el.number_as_written]
        out_elements.append(list(els))
        mappings.extend(_unique(rows))
    if len(sources) == own:
        history_rows, ordered = _history(sources, out_elements, lines, attached, chain_ids)
        return Numbering(out_elements, mappings, ordered, history_rows, attached, reference, chain_ids,
                         lines.step_keys)
    # The history's releases are not this run's sources: none of their rows is published
    # (nor where a lineage ended in one, though a source may bear its name: a cut copy).
    ids = {s.source_id for s in sources[:own]}
    ends = {sources[k].source_id for k in chain if k < own}
    history_rows, ordered = _history(sources, out_elements, lines, attached, chain_ids, (ids, ends))
    return Numbering(
        out_elements[:own], [m for m in mappings if m.source_id in ids], ordered, history_rows,
        {k: v for k, v in attached.items() if k in ids},
        reference, chain_ids, lines.step_keys,
        out_elements[chain[-1]] if chain and chain[-1] >= own else [], used.name if used else "",
        [m for m in mappings if m.source_id not in ids],
        sources[chain[-1]].effective_date if chain and chain[-1] >= own else "",
    )


def _worded(chain: Sequence[int], sources: Sequence[Source], cleaned: Sequence[Sequence[Element]],
            lines: Lineages) -> dict[str, set[str]]:
    """The lineages of each folded wording of the chain's rules."""
    worded: dict[str, set[str]] = defaultdict(set)
    for k in chain:
        for el in cleaned[k]:
            lid = lines.of_element.get((sources[k].source_id, el.line_start)) if el.kind == "rule" else None
            if lid:
                worded[folded(el.text)].add(lid)
    return worded


def _attach_to(src: Source, els: Sequence[Element], releases: list[tuple[Source, Sequence[Element]]],
               pair_sets: Sequence[tuple[str, tuple[set[tuple[str, str]], set[str]]]]) -> str:
    """The chain release a source is read against: the same bytes, the one it
    shares most numbers and wordings with; with no rule to compare, the one in
    force on the date it states (the front matter of a release cut short is that
    release's), else the newest of its wording era."""
    for rel, _ in releases:
        if rel.sha256 == src.sha256:
            return rel.source_id
    found = attach((el for el in els if el.kind == "rule"), pair_sets)
    if found:
        return found
    in_force = [rel.source_id for rel, _ in releases if src.effective_date and rel.effective_date <= src.effective_date]
    if in_force:
        return in_force[-1]
    same_era = [rel.source_id for rel, _ in releases if rel.era == src.era]
    return same_era[-1] if same_era else releases[-1][0].source_id


@dataclass(frozen=True)
class Newest:
    """What the newest release says about titles: its chapters, and its glossary
    notes on former keywords ("Imprint ... is now an ability word")."""

    chapters: dict[str, str]
    notes: dict[str, str]

    @classmethod
    def of(cls, elements: Sequence[Element]) -> Newest:
        return cls(
            {title_key(el.text): normalise_number(el.number_as_written) for el in elements if el.kind == "chapter"},
            {title_key(el.term.removesuffix("(Obsolete)")): el.text for el in elements if el.kind == "glossary"},
        )

    def chapter(self, el: Element) -> str:
        return self.chapters.get(title_key(el.text), "")


def _release(src: Source, els: Sequence[Element], lines: Lineages, newest: Newest
             ) -> tuple[list[Element], list[Mapping]]:
    """A chain release: each rule's lineage, each section's chain."""
    sid = src.source_id
    of_element, lineages, scores, sections = lines.of_element, lines.lineages, lines.score, lines.sections

    def now(el: Element) -> str:
        lid = of_element.get((sid, el.line_start), "")
        return lineages[lid].canonical_number if lid else ""

    twice = sections_by_their_rules(els, now)
    out, rows = [], []
    for el in els:
        kind, written = el.kind, el.number_as_written
        if kind == "rule" and written:
            lid = of_element.get((sid, el.line_start), "")
            current = lineages[lid].canonical_number if lid else ""
            rows.append(_row(el, lid, current, lines, sid, scores.get((sid, el.line_start)), newest=newest))
            el = evolve(el, canonical_number=current)
        elif kind == "section" and written:
            current = twice[el.line_start] if el.line_start in twice \
                else sections.get((sid, normalise_number(written)), "")
            rows.append(_row(el, "", current, lines, sid, 100.0 if current else 0.0, newest=newest))
            el = evolve(el, canonical_number=current)
        elif kind == "chapter":
            el = evolve(el, canonical_number=newest.chapter(el))
            rows += _chapter_row(el, sid)
        out.append(el)
    return out, rows


def sections_by_their_rules(els: Sequence[Element], current: Callable[[Element], str]) -> dict[int, str]:
    """Sections whose number the release uses twice (cr-2024-09-20 numbers both
    Offspring and Impending 702.175), by line: each is where most of its own
    rules are now (Impending's 702.175a is 702.176a), or nothing if none of
    them goes on. The number alone cannot tell the two apart."""
    numbers = Counter(normalise_number(el.number_as_written) for el in els
                      if el.kind == "section" and el.number_as_written)
    lines = {el.line_start for el in els if el.kind == "section" and el.number_as_written
             and numbers[normalise_number(el.number_as_written)] > 1}
    votes: dict[int, Counter[str]] = {line: Counter() for line in lines}
    dotted = {el.line_start: "." in el.number_as_written.rstrip(".") for el in els if el.line_start in lines}
    for el in els:
        if el.kind == "rule" and el.parent_line in votes and (now := current(el)):
            # The section of the same level: 702.176 for 702.176a; 111, not the rule 111.1, for 111.1a.
            votes[el.parent_line][section_of(now) if dotted[el.parent_line] else now.split(".")[0]] += 1
    return {line: found.most_common(1)[0][0] if found else "" for line, found in votes.items()}


def _chapter_row(el: Element, release: str) -> list[Mapping]:
    """A numbered chapter's ``renumber_map`` row: mapped by its title to the newest
    release's chapter of that title (``el.canonical_number``)."""
    if not el.number_as_written:
        return []
    written, current = normalise_number(el.number_as_written), el.canonical_number
    if current:
        return [Mapping(el.source_id, el.number_as_written, el.text, current,
                        "same" if written == current else "title", 100.0)]
    reason = f"chapter {written} of {release} ({el.text}) has no chapter of that title in the newest release"
    return [Mapping(el.source_id, el.number_as_written, el.text, "", "unmapped", 0.0, reason)]


def _row(el: Element, lid: str, current: str, lines: Lineages, release: str, score: float | None,
         method: str = "", newest: Newest | None = None) -> Mapping:
    title = el.text if el.kind == "section" else ""
    written = normalise_number(el.number_as_written)
    if current:
        method = "same" if written == current else (method or "lineage")
        return Mapping(el.source_id, el.number_as_written, title, current, method, score or 0.0, "", lid)
    if lid:
        line = lines.lineages[lid]
        how = f"merged into {line.merged_into}" if line.ended == "merged" else "removed"
        reason = f"lineage {lid} ended: {how} in {line.ended_in}"
    elif el.kind == "section":
        reason = f"section {written} of {release} has no successor in the newest release"
        note = newest.notes.get(title_key(el.text)) if newest else None
        if note:
            reason += f"; the newest glossary says: {note}"
    else:
        reason = f"no lineage for {written} in {release}"
    return Mapping(el.source_id, el.number_as_written, title, "", "unmapped", 0.0, reason, lid)


def _through(src: Source, els: Sequence[Element], target: str, index: align.RefIndex, lines: Lineages,
             newest: Newest, worded: dict[str, set[str]]) -> tuple[list[Element], list[Mapping]]:
    """A source that is not a chain release, aligned with ``target`` and mapped
    through that release's lineages; a rule ``target`` lacks, worded exactly as
    one lineage of another release (``worded``: folded wording -> lineages), is
    that lineage's."""
    aligned, found = align.align(els, index, False)
    by_written = {(m.number_as_written, m.title if not m.number_as_written else ""): m for m in found}
    out, rows = [], []
    for el in aligned:
        there = el.canonical_number  # the number in the target release
        if el.kind == "rule":
            lid, current = lines.current(target, there) if there else ("", "")
            m = by_written.get((el.number_as_written, ""))
            if not lid and len(worded.get(folded(el.text), ())) == 1:
                # A source of mixed eras: this wording is another release's, word for word.
                (lid,) = worded[folded(el.text)]
                current, there = lines.lineages[lid].canonical_number, lines.lineages[lid].last_number
                m = Mapping(src.source_id, el.number_as_written, "", "", "text", 100.0)
            if lid:
                lines.of_element[src.source_id, el.line_start] = lid
            if m is not None:
                if there:
                    row = _row(el, lid, current, lines, target, m.score, "" if m.method == "same" else m.method,
                               newest)
                else:
                    row = m._replace(reason=m.reason or f"no rule of {target} has this wording")
                rows.append(row)
            el = evolve(el, canonical_number=current)
        elif el.kind == "section":
            current = lines.sections.get((target, there), "") if there else ""
            m = by_written.get((el.number_as_written, el.text if not el.number_as_written else ""))
            if m is not None:
                rows.append(_row(el, "", current, lines, target, m.score, "" if m.method == "same" else m.method,
                                 newest) if there else m)
            el = evolve(el, canonical_number=current)
        elif el.kind == "prose" and there:
            el = evolve(el, canonical_number=lines.current(target, there)[1])
        elif el.kind == "chapter":
            el = evolve(el, canonical_number=newest.chapter(el))
            rows += _chapter_row(el, target)
        out.append(el)
    return out, rows


def _unique(rows: list[Mapping]) -> list[Mapping]:
    """One row per number as written (or per title, for unnumbered sections). A
    number a source writes for rules that are different lineages or numbers
    today (a slip of the release: 2024-09's 702.175a is both Offspring's and
    Impending's, now 702.175a and 702.176a) maps to none of them: its row says
    what each is now, and ``elements`` has each rule's own number."""
    seen: dict[tuple[str, str], Mapping] = {}
    more: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    for row in rows:
        key = (row.number_as_written, row.title if not row.number_as_written else "")
        if seen.setdefault(key, row) is not row:
            more[key].append(row)
    for key, others in more.items():
        first = seen[key]
        targets = dict.fromkeys((m.canonical_number, m.lineage_id) for m in (first, *others))
        if len(targets) > 1:
            now = ", ".join(current or (f"ended (lineage {lid})" if lid else "unmapped") for current, lid in targets)
            seen[key] = first._replace(canonical_number="", lineage_id="", method="unmapped", score=0.0,
                                       reason=f"{WRITTEN_TWICE} {len(others) + 1} rules in this source, now {now}")
    return list(seen.values())


def _history(
    sources: Sequence[Source], elements: list[list[Element]], lines: Lineages, attached: dict[str, str],
    chain: list[str], own: tuple[set[str], set[str]] | None = None,
) -> tuple[list[dict[str, Any]], list[Lineage]]:
    """``rule_history.csv``: every lineage in every source it appears in, in date
    order (an attached source just after its release), with the ended ones; with
    ``own`` (the run's sources, its releases), only the rows of those sources, and
    of the endings in those releases (a run that borrows a history's releases: their
    rows, made and thrown away, were most of a run on dumps alone)."""
    ids, ends = own if own is not None else (None, None)
    position = {sid: k for k, sid in enumerate(chain)}
    dates = {s.source_id: s.effective_date for s in sources}
    seen: dict[str, dict[str, tuple[tuple[int, int, str], Element]]] = defaultdict(dict)
    for src, els in zip(sources, elements, strict=True):
        sid = src.source_id
        if sid not in attached or attached[sid] not in position:
            continue
        official = sid in position
        when = (position[attached[sid]], 0 if official else 1, sid)
        for el in els:
            if el.kind != "rule" or not el.number_as_written:
                continue
            lid = lines.of_element.get((sid, el.line_start), "")
            if lid and sid not in seen[lid]:
                seen[lid][sid] = (when, el)
    ordered = sorted(lines.lineages.values(), key=lambda ln: (
        (0, sort_key(ln.canonical_number), "") if ln.canonical_number
        else (1, (position.get(ln.first_source, 0), *sort_key(ln.first_number)[:2]), ln.first_number)
    ))
    rows: list[dict[str, Any]] = []
    for line in ordered:
        versions = sorted(seen[line.lineage_id].values(), key=lambda v: v[0])
        by_source = {el.source_id: el for _, el in versions}
        prev: Element | None = None
        for (_, kind, _), el in versions:
            if ids is None or el.source_id in ids:
                if kind == 1:
                    base = by_source.get(attached[el.source_id])
                    change = change_of(base.number_as_written, base.text, el.number_as_written, el.text) if base \
                        else "added"
                elif prev is None:
                    change = "split" if line.split_from else "added"
                else:
                    change = change_of(prev.number_as_written, prev.text, el.number_as_written, el.text)
                rows.append(_history_row(line, el.source_id, dates, el.number_as_written, change, el.text))
            if kind == 0:
                prev = el
        if line.ended and (ends is None or line.ended_in in ends):
            rows.append(_history_row(line, line.ended_in, dates, "", line.ended, ""))
    return rows, ordered


def _history_row(line: Lineage, sid: str, dates: dict[str, str], written: str, change: str,
                 text: str) -> dict[str, Any]:
    return {
        "lineage_id": line.lineage_id, "canonical_number": line.canonical_number, "source_id": sid,
        "effective_date": dates.get(sid, ""), "number_as_written": written, "change": change, "text": text,
    }
