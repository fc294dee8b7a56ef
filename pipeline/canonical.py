"""The reference numbering (CONTRACT.md, "Reference numbering") and its vocabulary.

The reference is the newest whole Comprehensive Rules document in the run.
Its own numbers are canonical as written (spaces and trailing dots removed);
``pipeline.align`` maps every other source onto it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.numbers import section_of
from pipeline.records import Source

__all__ = ["Mapping", "reference", "section_of", "title_key"]


@dataclass(frozen=True, slots=True)
class Mapping:
    """One row of ``renumber_map.csv``."""

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
