"""``keywords.csv``: every keyword ability, keyword action and ability word of each release, then and now.

A release's keywords are what its own headings and rules say: the sections
under its "Keyword Abilities" and "Keyword Actions" sections (502 and, from
May 2007, 501 before the July 2009 renumbering; 702 and 701 since), and the
words its ability-word rule lists ("The ability words are ...": 206.2c from
July 2009, 207.2c from 2012; the releases before it list none). Each keyword
maps to its section today through the lineage of its first rule, as the run
followed it release by release (Entwine, 502.32 in 2004, is 702.42 now); a
section whose first rule has no lineage of its own (a number the release
wrote twice: 702.175 in September 2024) keeps the number its heading was
mapped to. An ability word's "section" is the rule that lists it.

Renames come from the glossaries' "(Obsolete)" entries: "Totem Armor
(Obsolete): An obsolete keyword ability that has been renamed. See rule
702.89, “Umbra Armor.”" gives Totem Armor's rows ``renamed_to`` Umbra Armor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pipeline.numbers import normalise, section_of
from pipeline.records import Element, Lineage, Mapping, Source
from pipeline.text import title_key

KEYWORD_ABILITY = "keyword_ability"
KEYWORD_ACTION = "keyword_action"
ABILITY_WORD = "ability_word"
# The headings whose sections are keywords, by their title.
HEADINGS = {"keyword abilities": KEYWORD_ABILITY, "keyword actions": KEYWORD_ACTION}

_ABILITY_WORDS = re.compile(r"\bThe ability words are (.+?)\.?\s*$", re.S)
_LIST_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_OBSOLETE = re.compile(r"^(.+?)\s*\(Obsolete\)$", re.I)
_RENAMED = re.compile(r"\brenamed\b.*?\bSee rules? [0-9.]+[a-z]?,\s*[“\"](.+?)[.,]?[”\"]", re.S)


def ability_words(text: str) -> list[str]:
    """The words an ability-word rule lists, in its order.

    >>> ability_words("... no individual entries. The ability words are channel, council’s dilemma, "
    ...               "descend 4, join forces, and will of the council.")
    ['channel', 'council’s dilemma', 'descend 4', 'join forces', 'will of the council']
    >>> ability_words("Ability words are similar to keywords.")
    []
    """
    # The substring first: the pattern, tried on each of 130,000 rules, took 0.8 s.
    found = _ABILITY_WORDS.search(text) if "ability words are" in text else None
    if not found:
        return []
    return [word for word in (w.strip() for w in _LIST_SEPARATOR.split(found.group(1))) if word]


def renamed(term: str, text: str) -> tuple[str, str] | None:
    """(old name, new name) when a glossary entry says a keyword was renamed.

    >>> renamed("Totem Armor (Obsolete)", "An obsolete keyword ability that has been renamed. "
    ...         "See rule 702.89, “Umbra Armor.”")
    ('Totem Armor', 'Umbra Armor')
    >>> renamed("Bury (Obsolete)", "A term that meant “put into its owner’s graveyard.”") is None
    True
    """
    old = _OBSOLETE.match(term.strip())
    new = _RENAMED.search(text) if old else None  # the text searched only for an obsolete term: a few of 60,000
    return (old.group(1), new.group(1).strip()) if old and new else None


def renames(glossary: Iterable[Element]) -> dict[str, str]:
    """Every rename the glossary entries state, old name (``title_key``) -> the
    newest name it leads to (a rename of a rename followed to its end)."""
    step: dict[str, str] = {}
    for el in glossary:
        pair = renamed(el.term, el.text)
        if pair:
            step[title_key(pair[0])] = pair[1]
    out: dict[str, str] = {}
    for old, new in step.items():
        seen = {old}
        while title_key(new) in step and title_key(new) not in seen:
            seen.add(title_key(new))
            new = step[title_key(new)]
        out[old] = new
    return out


def releases(sources: Sequence[Source]) -> list[Source]:
    """The releases the run followed (each its own numbering), oldest first."""
    chain = [s for s in sources if s.format == "cr_document" and s.numbering_like == s.source_id
             and s.status != "quarantined"]
    return sorted(chain, key=lambda s: (s.effective_date, s.source_id))


def keyword_rows(sources: Sequence[Source], elements: Iterable[Element], mappings: Iterable[Mapping],
                 lineages: Iterable[Lineage]) -> list[dict[str, Any]]:
    """The rows of ``keywords.csv``: each release's keywords in its own order, releases oldest first."""
    chain = releases(sources)
    wanted = {s.source_id for s in chain}
    by_source: dict[str, list[Element]] = {sid: [] for sid in wanted}
    glossary: list[Element] = []
    for el in elements:
        if el.source_id in wanted and el.kind in ("section", "rule", "glossary"):
            (glossary if el.kind == "glossary" else by_source[el.source_id]).append(el)
    lineage_of = {(m.source_id, normalise(m.number_as_written)): m.lineage_id
                  for m in mappings if m.source_id in wanted and m.lineage_id and not m.title}
    now = {line.lineage_id: line.canonical_number for line in lineages}
    names = renames(glossary)
    key = _Keys()  # each release repeats the titles of the one before: each folded once
    rows: list[dict[str, Any]] = []
    for src in chain:
        seen: set[tuple[str, str]] = set()
        for kind, name, written, first, mapped in _keywords(by_source[src.source_id], key):
            if (kind, key[name]) in seen:  # a release that lists one twice: its first place
                continue
            seen.add((kind, key[name]))
            lineage = lineage_of.get((src.source_id, normalise(first)), "") if first else ""
            if lineage:
                canonical = now.get(lineage, "")
                canonical = canonical if kind == ABILITY_WORD or not canonical else section_of(canonical)
            else:
                canonical = mapped
            new = names.get(key[name], "")
            rows.append({
                "keyword": name, "kind": kind, "source_id": src.source_id, "effective_date": src.effective_date,
                "section_as_written": written, "canonical_section": canonical, "lineage_id": lineage,
                "renamed_to": new if key[new] != key[name] else "",
            })
    return rows


class _Keys(dict[str, str]):
    """``title_key`` of each title, made once."""

    def __missing__(self, title: str) -> str:
        made = self[title] = title_key(title)
        return made


def _keywords(els: Sequence[Element], key: _Keys) -> Iterator[tuple[str, str, str, str, str]]:
    """(kind, name, number as written, number of its first rule, canonical number
    of its heading) of each keyword of one release's elements, in document order."""
    headings = {normalise(el.number_as_written): HEADINGS[key[el.text]] for el in els
                if el.kind == "section" and key[el.text] in HEADINGS and el.number_as_written}
    first_rule: dict[int, str] = {}
    for el in els:
        if el.kind == "rule" and el.parent_line and el.parent_line not in first_rule:
            first_rule[el.parent_line] = el.number_as_written
    for el in els:
        number = normalise(el.number_as_written)
        if el.kind == "section" and "." in number and number.partition(".")[0] in headings and el.text.strip():
            kind = headings[number.partition(".")[0]]
            yield kind, el.text.strip(), el.number_as_written, first_rule.get(el.line_start, ""), el.canonical_number
        elif el.kind == "rule":
            for word in ability_words(el.text):
                yield ABILITY_WORD, word, el.number_as_written, el.number_as_written, el.canonical_number
