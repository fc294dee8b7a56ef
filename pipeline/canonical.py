"""Map elements to the reference numbering (CONTRACT.md, "Reference numbering").

The reference is the newest whole Comprehensive Rules document in the run.
Its own numbers are canonical as written (spaces and trailing dots removed).
Elsewhere a section is aligned by its title; a rule inside an aligned section
by its wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pipeline.dedupe import normalise_number
from pipeline.records import Element, Source


@dataclass(frozen=True, slots=True)
class Mapping:
    """One row of ``renumber_map.csv``."""

    source_id: str
    number_as_written: str
    title: str
    canonical_number: str
    method: str
    score: float


def reference(sources: Sequence[Source]) -> Source | None:
    """The newest numbered CR document: by effective date, else by era."""
    docs = [s for s in sources if s.status == "ok" and s.format == "cr_document"]
    return max(docs, key=lambda s: (s.effective_date, s.era, s.source_id), default=None)


def title_key(title: str) -> str:
    return " ".join(title.replace("_", "").split()).casefold()


@dataclass
class Reference:
    """The reference's sections by title and rules by section and wording."""

    by_title: dict[str, str]
    by_text: dict[tuple[str, str], str]

    @classmethod
    def build(cls, elements: Sequence[Element]) -> Reference:
        by_title: dict[str, str] = {}
        by_text: dict[tuple[str, str], str] = {}
        for el in elements:
            number = normalise_number(el.number_as_written)
            if el.kind == "section" and "." in number:
                by_title.setdefault(title_key(el.text), number)
            elif el.kind == "rule":
                by_text.setdefault((section_of(number), el.text), number)
        return cls(by_title, by_text)


def section_of(number: str) -> str:
    """The section a rule number belongs to: ``702.42a`` -> ``702.42``.

    >>> section_of("702.42a"), section_of("100.1"), section_of("408.f")
    ('702.42', '100', '408')
    """
    head, _, tail = number.partition(".")
    digits = "".join(ch for ch in tail if ch.isdigit())
    if tail and tail[-1].isalpha() and digits:
        return f"{head}.{digits}"
    return head


def assign(
    elements: Sequence[Element], is_reference: bool, ref: Reference | None
) -> tuple[list[Element], list[Mapping]]:
    """Canonical numbers for one source's elements and its renumber-map rows."""
    out: list[Element] = []
    rows: dict[tuple[str, str], Mapping] = {}
    section_map: dict[int, str] = {}
    for el in elements:
        number = normalise_number(el.number_as_written)
        canonical, method, score = "", "unmapped", 0.0
        if el.kind not in ("section", "rule", "chapter"):
            out.append(el)
            continue
        if is_reference:
            canonical, method, score = number, "same", 1.0
        elif ref is not None and el.kind == "section":
            hit = ref.by_title.get(title_key(el.text))
            if hit:
                canonical, method, score = hit, "same" if hit == number else "title", 1.0
            section_map[el.line_start] = hit or ""
        elif ref is not None and el.kind == "rule":
            mapped_section = section_map.get(el.parent_line) or section_of(number)
            hit = ref.by_text.get((mapped_section, el.text))
            if hit:
                canonical, method, score = hit, "same" if hit == number else "text", 1.0
        out.append(replace(el, canonical_number=canonical))
        if el.kind == "chapter":
            continue
        title = el.text if el.kind == "section" else ""
        key = (number, title if not number else "")
        rows.setdefault(key, Mapping(el.source_id, el.number_as_written, title, canonical, method, score))
    return out, list(rows.values())
