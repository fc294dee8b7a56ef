"""What a source is: its format, stated effective date and wording era."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime

from pipeline.records import Element, evolve

# A web page's heading ("Double Strike") and paragraph (ends as a sentence does).
_TITLE = re.compile(r"[A-Z][\w’'()!,&/-]*(?: [\w’'()!,&/“”\"-]+)*")
_SENTENCE = re.compile(r"[A-Za-z)][.!?][\"”’)]?$")
_DATE = re.compile(
    r"(?:current|effective)\s+as\s+of\s+([A-Z][a-z]+\.?\s+\d{1,2},\s+\d{4})", re.I
)
# A title line that carries the date ("COMPREHENSIVE RULES      04/23/99", 1999).
_TITLE_DATE = re.compile(r"comprehensive\s+rules\s+(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})\s*$", re.I)

# Wording that dates a text (DOMAIN.md, "Wording eras"): for each change, the
# words before it and after it. A text is as old as the older words it uses
# more than the newer ones.
_CHANGES: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("pre-2009",
     re.compile(r"\bcomes? into play|\bin play\b|\bremoved? from the game|\bplay (?:a|this|that) spell", re.I),
     re.compile(r"\benters? the battlefield|\bon the battlefield|\bexiled?\b|\bcast (?:a|this|that) spell", re.I)),
    ("2009-2018", re.compile(r"\bhe or she\b|\bhis or her\b", re.I), re.compile(r"\bthey control\b", re.I)),
    ("2018-2021", re.compile(r"\bconverted mana cost\b", re.I), re.compile(r"\bmana value\b", re.I)),
)
_ERA_NAMES = ("pre-2009", "2009-2018", "2018-2021", "2021+")


def effective_date(elements: Sequence[Element]) -> str:
    """The ISO date of the first "current/effective as of" statement, if any.

    >>> from pipeline.records import Element, evolve
    >>> effective_date([Element("s", 3, 3, "front_matter", "These rules are effective as of July 11, 2009.")])
    '2009-07-11'
    >>> effective_date([Element("s", 3, 3, "front_matter", "COMPREHENSIVE RULES      04/23/99")])
    '1999-04-23'
    """
    for el in elements:
        if el.kind == "front_matter":
            m = _DATE.search(el.text_raw)
            if m:
                text = " ".join(m.group(1).replace(".", "").split())
                for fmt in ("%B %d, %Y", "%b %d, %Y"):
                    try:
                        return datetime.strptime(text, fmt).date().isoformat()
                    except ValueError:
                        continue
    for el in elements:
        m = _TITLE_DATE.search(el.text_raw) if el.kind == "front_matter" else None
        if m:
            month, day, year = (int(g) for g in m.groups())
            year += 1900 if year >= 90 and year < 100 else 2000 if year < 100 else 0
            try:
                return date(year, month, day).isoformat()
            except ValueError:
                continue
    return ""


def era(elements: Sequence[Element], date: str = "") -> str:
    """The wording era: from the stated date when there is one, else from wording."""
    if date:
        if date < "2009-07-11":
            return "pre-2009"
        if date < "2018-04-27":
            return "2009-2018"
        if date < "2021-04-16":
            return "2018-2021"
        return "2021+"
    text = "\n".join(el.text_raw for el in elements if el.kind in ("rule", "qa", "prose", "example"))
    latest = ""
    for i, (name, older, newer) in enumerate(_CHANGES):
        old_n, new_n = len(older.findall(text)), len(newer.findall(text))
        if old_n > new_n:
            return name
        if new_n:
            latest = _ERA_NAMES[i + 1]
    return latest


def source_format(elements: Sequence[Element]) -> str:
    """``cr_document``, ``cr_legacy``, ``cr_numbered``, ``faq``, ``web`` or ``unknown``."""
    kinds = Counter(el.kind for el in elements)
    if any(el.region == "toc" for el in elements):
        return "cr_document"
    if kinds["qa"]:
        return "faq"
    if kinds["rule"]:
        legacy = any(el.number_as_written.startswith("502.") for el in elements if el.kind == "rule")
        return "cr_legacy" if legacy and era(elements) == "pre-2009" else "cr_numbered"
    titles = [el for el in elements if el.kind == "section" and _TITLE.fullmatch(el.body)]
    sentences = [el for el in elements if el.kind == "prose" and _SENTENCE.search(el.body)]
    if titles and sentences:
        return "web"
    return "unknown"


def as_recognised(elements: list[Element], fmt: str) -> list[Element]:
    """The elements as the format found reads them: where no grammar recognised the
    text (``unknown``), every unnumbered heading is plain prose."""
    if fmt != "unknown":
        return elements
    return [evolve(el, kind="prose") if el.kind == "section" else el for el in elements]
