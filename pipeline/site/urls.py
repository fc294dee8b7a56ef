"""How the site names its pages and anchors, and how it labels and folds text."""

from __future__ import annotations

import re

from pipeline.site.data import Source, slug
from pipeline.text import search_fold


def release_file(source_id: str) -> str:
    return f"release/{slug(source_id)}.html"


def changes_file(source_id: str) -> str:
    return f"changes/{slug(source_id)}.html"


def data_file(source_id: str) -> str:
    return f"data/{slug(source_id)}.js"


def term_id(term: str) -> str:
    """The anchor of a glossary entry.

    >>> term_id("Umbra Armor"), term_id("“Dies”")
    ('G-umbra-armor', 'G-dies')
    """
    return "G-" + re.sub(r"[^a-z0-9]+", "-", search_fold(term)).strip("-")


def label(src: Source) -> str:
    if src.official:
        return f"CR {src.effective_date}"
    return f"{src.source_id}" + (f" ({src.effective_date})" if src.effective_date else "")


def section_of(number: str, sections: set[str]) -> str:
    """The section a rule number belongs to in a release (``502.6a`` is in ``502.6`` in old numberings).

    >>> section_of("502.6a", {"502", "502.6"}), section_of("702.89a", {"702"})
    ('502.6', '702')
    """
    stem = number.rstrip("abcdefghijklmnopqrstuvwxyz")
    if stem in sections:
        return stem
    return number.partition(".")[0]
