"""The reference numbering (CONTRACT.md, "Reference numbering") and its vocabulary.

The reference is the newest whole Comprehensive Rules document in the run.
Its own numbers are canonical as written (spaces and trailing dots removed);
``pipeline.align`` maps every other source onto it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pipeline.numbers import section_of
from pipeline.records import Source

__all__ = ["Mapping", "reference", "section_of", "title_key"]


# How the ``reason`` of a renumber_map row opens when the source wrote its number for
# rules that are different rules today: the row maps to none of them (``numbering._unique``).
WRITTEN_TWICE = "written for"


class Mapping(NamedTuple):
    """One row of ``renumber_map.csv`` (a named tuple: the stage makes one for each
    numbered rule and section of each source, 280,000 on the 1x benchmark, and a
    tuple is made three times faster than a frozen dataclass).
    """

    source_id: str
    number_as_written: str
    title: str
    canonical_number: str
    method: str
    score: float
    reason: str = ""
    lineage_id: str = ""


def reference(sources: Sequence[Source]) -> Source | None:
    """The newest numbered CR document: by effective date, else by era."""
    docs = [s for s in sources if s.status == "ok" and s.format == "cr_document"]
    return max(docs, key=lambda s: (s.effective_date, s.era, s.source_id), default=None)


def title_key(title: str) -> str:
    return " ".join(title.replace("_", "").split()).casefold()
