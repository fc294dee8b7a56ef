"""What changed between two sources, matched through lineages (not by number), with
the rules of the ``diff`` command (``pipeline.query.diff``).

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

from dataclasses import dataclass

from pipeline.changes import change_of
from pipeline.site.data import Dataset, Version

KINDS = ("added", "removed", "moved", "edited", "moved+edited", "split", "merged")


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    key: str
    old_number: str
    new_number: str
    old_text: str
    new_text: str
    other: str = ""  # the lineage split from or merged into
    other_number: str = ""


def number_order(number: str) -> tuple[int, int, str]:
    """Sort key of a rule number: section, rule, then the letters.

    >>> sorted(["702.10", "702.9b", "702.9"], key=number_order)
    ['702.9', '702.9b', '702.10']
    """
    head, _, tail = number.partition(".")
    digits = "".join(ch for ch in tail if ch.isdigit())
    return (int("".join(ch for ch in head if ch.isdigit()) or 0), int(digits or -1), tail.lstrip("0123456789 "))


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
    date_old, date_new = date.get(old_id, ""), date.get(new_id, "")
    # An old source that is no whole release lacks rules without their being added
    # since: only those newer than the release it is numbered like are (as ``diff``).
    source = ds.source(old_id)
    whole = source is None or source.official
    placed = "" if source is None or source.official else date.get(source.numbering_like, "")
    changes = []
    for key in dict.fromkeys([*new, *old]):
        a, b = old.get(key), new.get(key)
        lin = ds.lineages[key]
        if a and b:
            kind = change_of(a.number, a.text, b.number, b.text)
            if kind != "unchanged":
                changes.append(Change(kind, key, a.number, b.number, a.text, b.text))
        elif b:
            if not whole and (not placed or date.get(lin.first_source, "") <= placed):
                continue
            if lin.split_from in ds.lineages and (not date_old or date.get(lin.first_source, "") > date_old):
                parent = old.get(lin.split_from)
                changes.append(Change("split", key, "", b.number, "", b.text, lin.split_from,
                                      parent.number if parent else ""))
            else:
                changes.append(Change("added", key, "", b.number, "", b.text))
        elif a and lin.ended and date_new and date_old < date.get(lin.ended_in, "") <= date_new:
            into = new.get(lin.merged_into) if lin.ended == "merged" else None
            changes.append(Change(lin.ended, key, a.number, "", a.text, "", lin.merged_into if into else "",
                                  into.number if into else ""))
    return sorted(changes, key=lambda c: (number_order(c.new_number or c.other_number or c.old_number),
                                          number_order(c.old_number)))
