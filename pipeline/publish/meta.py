"""What a published file says of itself: versions, the reference release, and when its content is as of.

``rules.json``'s ``meta`` and ``rules.sqlite``'s ``meta`` table hold it, so that a
file copied away on its own still says where it came from.

``generated_at`` is the time the content is as of, not the time of the run: the
reference release's effective date (midnight, UTC). The project guarantees that
two runs of the same input publish the same bytes (all but ``run.json``, which
holds each run's own times, ``started_at`` and ``finished_at``); a wall-clock
time here would break that, and one carried over from the folder published
before would still differ between two fresh folders. A dataset whose content
changes without a new reference release (an FAQ dump added) keeps its
``generated_at``; ``code_version`` and ``sources`` tell such datasets apart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline import __version__
from pipeline.cache import code_version
from pipeline.records import Source

# The version of the published tables and of rules.json's shape: 1.1 added the
# keywords table and rules.json's pipeline_version, reference_date and generated_at.
SCHEMA_VERSION = "1.1"


@dataclass(frozen=True, slots=True)
class Meta:
    """The self-description shared by ``rules.json`` and ``rules.sqlite``."""

    schema_version: str
    pipeline_version: str
    code_version: str
    reference: str
    reference_date: str
    generated_at: str
    sources: dict[str, str]  # source_id -> sha256 of every source read (quarantined ones are not)

    def rules_json(self) -> dict[str, Any]:
        """``rules.json``'s ``meta``, as the contract lists it."""
        return {
            "schema_version": self.schema_version, "pipeline_version": self.pipeline_version,
            "reference": self.reference, "reference_date": self.reference_date, "generated_at": self.generated_at,
            "generated_from": sorted(self.sources.values()),
        }

    def rows(self) -> list[tuple[str, str]]:
        """``rules.sqlite``'s ``meta`` table: (key, value), ``sources`` as a JSON object."""
        return [
            ("schema_version", self.schema_version), ("pipeline_version", self.pipeline_version),
            ("code_version", self.code_version), ("reference", self.reference),
            ("reference_date", self.reference_date), ("generated_at", self.generated_at),
            ("sources", json.dumps(self.sources, ensure_ascii=False, sort_keys=True)),
        ]


def generated_at(reference_date: str) -> str:
    """When a dataset's content is as of: its reference release's date, at midnight UTC.

    >>> generated_at("2026-08-07"), generated_at("")
    ('2026-08-07T00:00:00Z', '')
    """
    return f"{reference_date}T00:00:00Z" if reference_date else ""


def of(sources: Sequence[Source], reference: str, reference_date: str = "") -> Meta:
    """The meta of a dataset built from ``sources`` with ``reference`` as its numbering,
    dated by that source, or by ``reference_date`` when it is none of them (a release
    of the history that a run on dumps alone maps through)."""
    date = next((s.effective_date for s in sources if s.source_id == reference), reference_date)
    read = {s.source_id: s.sha256 for s in sorted(sources, key=lambda s: s.source_id) if s.status != "quarantined"}
    return Meta(SCHEMA_VERSION, __version__, code_version(), reference, date, generated_at(date), read)
