"""The site's changes between two sources: ``pipeline.changes.compare`` over the
site's dataset (``diff`` calls the same comparer over the database, and the job's
``changes.md`` over two runs' rules).

A rule in both is ``moved`` (renumbered), ``edited`` (reworded) or both, as
``pipeline.changes.change_of`` decides (a renumbered cross-reference or a new quote
style is no edit); one only in the newer is ``added``, or ``split`` when its
lineage was split from another after the older source; one only in the older is
``removed`` or ``merged`` when its lineage ended between the two (a rule that a
partial copy merely lacks is no change, nor is a rule it lacks that the
release it is numbered like has). The site's ``compare.js`` applies the
same rules in the browser to the same data, and a test holds the two equal.
"""

from __future__ import annotations

from pipeline.changes import KINDS, Change, Line, Span
from pipeline.changes import compare as compare_rules
from pipeline.numbers import sort_key
from pipeline.site.data import Dataset, Version

__all__ = ["KINDS", "Change", "compare", "document_order", "presence"]


def document_order(c: Change) -> tuple[tuple[int, int, int, str], tuple[int, int, int, str]]:
    """Where a change stands on a change page: by its number in the newer source (for
    a merge, the rule it went into; else its number in the older), then by its number
    in the older, both in document order (``pipeline.numbers.sort_key``: 704.5z before
    704.5aa, as ``diff`` orders them). ``compare.js`` orders its changes the same way."""
    return (sort_key(c.new_number or c.other_number or c.old_number), sort_key(c.old_number))


def presence(ds: Dataset) -> dict[str, dict[str, Version]]:
    """Per source, the lineages it has, each with its version there (the first, when a number repeats)."""
    found: dict[str, dict[str, Version]] = {s.source_id: {} for s in ds.sources}
    for key, lin in ds.lineages.items():
        for v in lin.versions:
            if v.number:
                found[v.source_id].setdefault(key, v)
    return found


def compare(ds: Dataset, old_id: str, new_id: str, have: dict[str, dict[str, Version]]) -> list[Change]:
    """Every change from source ``old_id`` to ``new_id`` (``have`` is ``presence(ds)``),
    in the new numbering's order."""
    old, new = have[old_id], have[new_id]
    date = {s.source_id: s.effective_date for s in ds.sources}
    # An old source that is no whole release lacks rules without their being added
    # since: only those newer than the release it is numbered like are (as ``diff``).
    source = ds.source(old_id)
    whole = source is None or source.official
    placed = "" if source is None or source.official else date.get(source.numbering_like, "")

    def line(key: str) -> Line:
        lin = ds.lineages[key]
        return Line(date.get(lin.first_source, ""), lin.ended, date.get(lin.ended_in, ""),
                    lin.split_from if lin.split_from in ds.lineages else "", lin.merged_into)

    span = Span(date.get(old_id, ""), date.get(new_id, ""), whole, placed)
    changes = compare_rules(dict.fromkeys([*new, *old]), old.get, new.get, line, span)
    return sorted(changes, key=document_order)
