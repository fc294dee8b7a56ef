"""What changed between any two sources, matched through lineages (not by number).

A rule renumbered by an inserted keyword is ``moved``, not removed plus added;
a change that only renumbers a cross-reference or only changes quote style is
no change at all. ``pipeline.changes.compare`` decides, as it does for the
site's change pages and the job's ``changes.md``; this module reads the two
sources from the database and tells the changes by section.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pipeline.changes import KINDS, Line, Span, Worded, compare, word_diff
from pipeline.errors import ArgumentError, TraceError
from pipeline.numbers import normalise as normalise_number
from pipeline.numbers import section_of, sort_key
from pipeline.query.dataset import Published


def date_shaped(name: str) -> bool:
    """Whether an argument is meant as a date (YYYY-MM-DD), real or not."""
    return len(name) == 10 and name[4] == "-" and name[7] == "-"


def _source(data: Published, name: str) -> str:
    """A source id, or a date meaning the release in effect on it."""
    if name in data.sources:
        return name
    if date_shaped(name):
        return data.release_on(name)
    raise TraceError(f"no source {name!r} in the published dataset (give a source id or a YYYY-MM-DD date)")


def diff(out: Path, old: str, new: str, section: str = "") -> dict[str, Any]:
    """The changes from source ``old`` to source ``new`` (ids or dates), as
    ``diff --json`` prints them: ``from`` and ``to`` (the source ids), ``note``
    (why some rules are not counted, or None), ``counts`` (per kind of change,
    in ``pipeline.changes.KINDS``) and ``changes``, one per lineage, where a number or word diff
    that does not apply is None (as ``resolve`` says "no current number")."""
    data = Published(out)
    old, new = _source(data, old), _source(data, new)
    if section and not any(data.section_at(sid, section) is not None for sid in (old, new)):
        raise TraceError(f"no section {section} in {old} or {new} (a section is a number such as 702.42)")
    date_new = data.sources[new]["effective_date"]
    date_old = data.sources[old]["effective_date"]
    when_old, when_new = _placed(data, old), _placed(data, new)
    if when_old and when_new and when_old > when_new:
        # Rules added since would have come out as nothing at all, not as removed.
        raise ArgumentError(f"{old} ({_when(data, old)}) is newer than {new} ({_when(data, new)}): "
                         "give the older one first")
    # A source that is no whole release (a cut or partial copy, an FAQ page) lacks
    # rules without their being added since: a rule it lacks is "added" only when
    # its lineage started after the release it is numbered like (the site's
    # comparison applies the same rule).
    whole = old in data.releases
    like = "" if whole else data.sources[old].get("numbering_like", "")
    placed = _date(data, like) if like else ""
    notes = [] if whole else [
        f"{old} is not a whole release" + (f" (numbered as {like})" if like else "") + ": rules it lacks are not "
        + (f"counted as added unless they are newer than {like}" if placed else "counted as added")]
    if new not in data.releases:
        notes.append(f"{new} is not a whole release ({_when(data, new)}): rules it lacks are not counted as removed")
    # Only a lineage numbered in one of the two, and not alike in both, can have changed between them.
    numbered: dict[str, dict[str, Worded]] = {}
    for r in data.rows_in(old, new):
        numbered.setdefault(r["lineage_id"], {}).setdefault(r["source_id"], Worded(r["number_as_written"], r["text"]))

    def version(sid: str) -> Callable[[str], Worded | None]:
        def at(lid: str) -> Worded | None:
            if lid in numbered:
                return numbered[lid].get(sid)
            row = _row_in(data, lid, sid)  # a lineage split from or merged into, alike in both
            return Worded(row["number_as_written"], row["text"]) if row else None
        return at

    def line(lid: str) -> Line:
        r = data.lineages[lid]
        return Line(_date(data, r["first_source"]), r["ended"], _date(data, r["ended_in"]),
                    r["split_from"] if r["split_from"] in data.lineages else "", r["merged_into"])

    changes: list[dict[str, Any]] = []
    for c in compare(numbered, version(old), version(new), line, Span(date_old, date_new, whole, placed)):
        # A split is told from the rule it was split from, a merge into the rule it went into.
        was = (c.old_number, c.old_text) if c.old_number else (c.other_number, c.other_text) \
            if c.kind == "split" and c.other_number else None
        now = (c.new_number, c.new_text) if c.new_number else (c.other_number, c.other_text) \
            if c.kind == "merged" and c.other_number else None
        old_number = normalise_number(was[0]) if was else None
        new_number = normalise_number(now[0]) if now else None
        if section and not any(n and _in_section(n, section) for n in (old_number, new_number)):
            continue
        changes.append({
            "change": c.kind, "old_number": old_number, "new_number": new_number, "lineage_id": c.key,
            "section": section_of(new_number or old_number or ""),
            "diff": word_diff(was[1], now[1]) if was and now and c.kind != "moved" else None,
            "text": (now or was or ("", ""))[1],
        })
    changes.sort(key=lambda c: (sort_key(c["section"]), sort_key(c["new_number"] or c["old_number"])))
    counts = Counter(c["change"] for c in changes)
    return {"from": old, "to": new, "note": "; ".join(notes) or None,
            "counts": {kind: counts[kind] for kind in KINDS if counts[kind]}, "changes": changes}


def _in_section(number: str, section: str) -> bool:
    """Whether a rule is in a section: 702.42a in 702.42, and in 702.

    >>> _in_section("702.42a", "702"), _in_section("702.42a", "702.42"), _in_section("702.4a", "702.42")
    (True, True, False)
    """
    if "." not in section:
        return number.split(".")[0] == section
    return section_of(number) == section


def _date(data: Published, sid: str) -> str:
    return data.sources.get(sid, {}).get("effective_date", "")


def _placed(data: Published, sid: str) -> str:
    """A source's date; an undated one is as old as the release it is numbered like."""
    return _date(data, sid) or _date(data, data.sources.get(sid, {}).get("numbering_like", ""))


def _when(data: Published, sid: str) -> str:
    """A source's date, or for an undated one the release it is numbered like."""
    like = data.sources.get(sid, {}).get("numbering_like", "")
    return _date(data, sid) or (f"numbered as {like}, {_date(data, like)}" if like and _date(data, like) else "undated")


def _row_in(data: Published, lid: str, sid: str) -> dict[str, str] | None:
    return next((r for r in data.history_of(lid) if r["source_id"] == sid and r["number_as_written"]), None)


def describe(result: dict[str, Any]) -> Iterator[str]:
    """The diff as text: a summary line, then the changes grouped by section."""
    counts = ", ".join(f"{n} {kind}" for kind, n in result["counts"].items()) or "no changes"
    yield f"{result['from']} -> {result['to']}: {counts}"
    if result["note"]:
        yield f"note: {result['note']}"
    by_section: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in result["changes"]:
        by_section[c["section"]].append(c)
    for sec, items in by_section.items():
        yield ""
        yield f"## {sec}"
        for c in items:
            numbers = " -> ".join(n for n in (c["old_number"], c["new_number"]) if n)
            yield f"{c['change']:<13} {numbers}"
            if c["diff"]:
                yield f"    {c['diff']}"
            elif c["change"] in ("added", "removed"):
                yield f"    {c['text']}"
