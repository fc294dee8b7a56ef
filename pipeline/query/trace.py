"""A rule's life from the published tables: find its lineage from any number
(current, or as some source or date cited it), show every version with word
diffs, and resolve an old citation to its current number.

Everything here reads the published ``rules.sqlite`` through
``pipeline.query.dataset.Published``, a few rows per question; nothing re-runs
the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.changes import change_of, word_diff
from pipeline.errors import TraceError
from pipeline.numbers import normalise as normalise_number
from pipeline.numbers import sort_key
from pipeline.query.dataset import Published, Row, checked_date, cited_number, ending, missing
from pipeline.text import folded_title

__all__ = ["TraceError", "checked_date", "cited_number", "describe_resolved", "is_rule_row", "missing",
           "resolve", "resolve_text", "trace", "trace_json"]


def is_rule_row(row: dict[str, str]) -> bool:
    """Whether a ``renumber_map`` row maps a rule as its source numbered it (not
    a section's title, nor a cross-reference in another rule's text)."""
    return not row["title"] and row["method"] != "xref"


def trace(out: Path, number: str, source: str = "", as_of: str = "") -> Iterator[str]:
    """Lines describing a rule's lineage: every version, its number then, word diffs."""
    data = Published(out)
    if _is_section(data, number, source, as_of):
        yield from _trace_section(data, number, source, as_of)
        return
    lid = data.find(number, source, as_of)
    line = data.lineages[lid]
    rows = data.history_of(lid)
    into = ending(lid, data.lineages.get)[2] if line["ended"] == "merged" else ""
    now = line["canonical_number"] or f"ended ({line['ended']} in {line['ended_in']}" + (
        f", into what is now {into})" if into else ")")
    versions = sum(1 for r in rows if r["number_as_written"])
    yield f"Rule {cited_number(number)}: lineage {lid}, {versions} versions, now {now}"
    if line["split_from"]:
        yield f"split from lineage {line['split_from']}"
    previous = ""
    for row in rows:
        when = row["effective_date"] or "undated"
        yield f"{when:<10}  {row['source_id']:<28} {row['number_as_written'] or '-':<10} {row['change']}"
        text = row["text"]
        if row["change"] in ("added", "split"):
            yield f"    {text}"
        elif row["change"] in ("edited", "moved+edited") and text and text != previous:
            yield f"    {word_diff(previous, text)}"
        elif row["change"] == "merged":
            yield f"    merged into {_merged_into(data, line, row['source_id'])}"
        if text:
            previous = text


def _merged_into(data: Published, line: Row, source: str) -> str:
    """The rule a lineage merged into, as ``source`` numbers it, and where that content is now."""
    there = next((r["number_as_written"] for r in data.history_of(line["merged_into"])
                  if r["source_id"] == source and r["number_as_written"]), "")
    now = ending(line["lineage_id"], data.lineages.get)[2]
    said = normalise_number(there) if there else f"lineage {line['merged_into']}"
    return said + (f" (now {now})" if now and now != said else "" if now else " (since removed)")


def _is_section(data: Published, number: str, source: str, as_of: str) -> bool:
    n = cited_number(number)
    if n[-1:].isalpha():
        return False
    where = data.release_on(as_of) if as_of else source or (data.releases[-1] if data.releases else "")
    # A section of the release it is read in, though a rule has its number now (502.2, First Strike until 2009).
    if data.section_at(where, n) is not None and not data.lineage_at(where, n):
        return True
    if data.numbered_now(n):
        return False
    if not source and not as_of and not data.having(n):
        sections = {s for s, _ in data.having(n, "section")}
        older = [sid for sid in data.releases if sid in sections]
        if older:
            raise TraceError(f"{n} is a section of older releases ({older[0]} to {older[-1]}), not of the newest: "
                             "say which with --source ID or --as-of YYYY-MM-DD")
    return False


def _section_versions(data: Published, number: str, source: str, as_of: str
                      ) -> tuple[str, str, dict[str, str], list[dict[str, str]]]:
    """(number, the release it is read in, its renumber_map row, its versions:
    a renumber_map row per release that has it, in date order). A section that
    ended has no number now: its versions are the sections that ended, release
    by release next to the one it is read in, under its number or title
    (Snow-Covered, 502.14 of 2001 to 2004)."""
    n = cited_number(number)
    where = data.release_on(as_of) if as_of else source or data.releases[-1]
    row = data.section_at(where, n)
    if row is None:
        raise KeyError((where, n))
    current = row["canonical_number"]
    order = {sid: k for k, sid in enumerate(data.releases)}
    # Release by release from the one it is read in (a dump: the release it is
    # like), each time the section of the same end (the same section now, or
    # none) under this number and title, else this title (folded: "Phased-Out"
    # was retitled "Phased Out" in 2005), else this number. A section that is
    # now another goes on, where none is so named, in the first of those that
    # are now the same (several became one: 2009's 415 Targeted Spells and
    # Abilities and its 415.7 Changing Targets are both 113 Targets), past
    # releases without it (216 Tokens was rules of 110 Permanents 2009-2019).
    alike: dict[str, list[dict[str, str]]] = {}
    for r in sorted(data.sections_now(current), key=lambda r: sort_key(normalise_number(r["number_as_written"]))):
        if r["source_id"] in order:
            alike.setdefault(r["source_id"], []).append(r)
    anchor = where if where in order else data.sources.get(where, {}).get("numbering_like", "")
    start = _same_section(alike.get(anchor, []), row)
    if anchor not in order or start is None:
        return n, where, row, []
    versions = [start]
    for step in (-1, 1):
        last, k = start, order[anchor] + step
        while 0 <= k < len(data.releases):
            here = alike.get(data.releases[k], [])
            found = _same_section(here, last) or (here[0] if here and current else None)
            if found is not None:
                versions.append(found)
                last = found
            elif here or not current:  # (only a section that is now another may be missing a while)
                break
            k += step
    return n, where, row, sorted(versions, key=lambda r: order[r["source_id"]])


def _same_section(candidates: list[dict[str, str]], like: dict[str, str]) -> dict[str, str] | None:
    """Of a release's sections that ended, the one ``like`` is in it: under its
    number and title, else with its title (renumbered), else under its number (retitled)."""
    number, title = normalise_number(like["number_as_written"]), folded_title(like["title"])
    ranked = [(normalise_number(r["number_as_written"]) != number or folded_title(r["title"]) != title,
               folded_title(r["title"]) != title, k) for k, r in enumerate(candidates)
              if normalise_number(r["number_as_written"]) == number or folded_title(r["title"]) == title]
    return candidates[min(ranked)[2]] if ranked else None


def _ended_in(data: Published, versions: list[dict[str, str]]) -> str:
    """The first release without an ended section's last version, or ''."""
    order = {sid: k for k, sid in enumerate(data.releases)}
    k = order.get(versions[-1]["source_id"], len(data.releases)) + 1 if versions else len(data.releases)
    return data.releases[k] if k < len(data.releases) else ""


def _trace_section(data: Published, number: str, source: str, as_of: str) -> Iterator[str]:
    n, where, row, versions = _section_versions(data, number, source, as_of)
    current = row["canonical_number"]
    yield f"Section {n} of {where} ({row['title']}): now {current or 'no section of the newest release'}"
    for r in versions:
        sid = r["source_id"]
        yield f"{data.sources[sid]['effective_date']:<10}  {sid:<28} {normalise_number(r['number_as_written']):<10} " \
              f"{r['title']}"
    gone = "" if current else _ended_in(data, versions)
    if gone:
        yield f"{data.sources[gone]['effective_date']:<10}  {gone:<28} {'':<10} removed"


def _resolved_section(data: Published, number: str, source: str, as_of: str) -> dict[str, Any]:
    n, where, row, versions = _section_versions(data, number, source, as_of)
    current = row["canonical_number"] or None
    chain, last = [], ""
    for r in versions:
        written = normalise_number(r["number_as_written"])
        if written != last:
            chain.append({"source_id": r["source_id"], "effective_date": data.sources[r["source_id"]]["effective_date"],
                          "number": written})
            last = written
    status = "removed" if current is None else "same" if current == n else "moved"
    return {"cited": n, "source_id": where, "lineage_id": None, "current": current, "status": status,
            "changed_in": _ended_in(data, versions) or None if current is None else None,
            # The chain's renumberings since the cited release.
            "moved_in": [c["source_id"] for c in chain[1:] if status == "moved"
                         and c["effective_date"] > data.sources.get(where, {}).get("effective_date", "")],
            "edited_in": [], "merged_into": None, "chain": chain}


def resolve(out: Path, number: str, source: str = "", as_of: str = "") -> dict[str, Any]:
    """An old citation -> its current number, what happened to it, and where.

    ``status`` is ``same``, ``moved``, ``edited``, ``moved+edited`` (compared with
    the cited version), ``split`` (pieces of it now live in other rules too),
    ``merged`` or ``removed``; ``changed_in`` is the release where that happened
    (for ``moved``/``edited``, the last release that changed it); ``moved_in``
    and ``edited_in`` list the releases that renumbered and that reworded it
    since the cited version (when the status says it was, or it was split).
    """
    data = Published(out)
    if _is_section(data, number, source, as_of):
        return _resolved_section(data, number, source, as_of)
    lid = data.find(number, source, as_of)
    return _resolved(data, lid, cited_number(number), source or (data.release_on(as_of) if as_of else ""))


def _resolved(data: Published, lid: str, number: str, source: str) -> dict[str, Any]:
    line = data.lineages[lid]
    # The chain's releases only: a dated copy (truncated, suspect) is no step of it.
    releases = set(data.releases)
    rows = [r for r in data.history_of(lid) if r["source_id"] in releases and r["number_as_written"]]
    cited = next((r for r in data.history_of(lid) if r["source_id"] == source), None)
    if cited is None:
        cited = next((r for r in rows if normalise_number(r["number_as_written"]) == number), rows[0] if rows else None)
    # An undated dump cites as the release whose numbering it shares.
    like = data.sources.get(cited["source_id"], {}).get("numbering_like", "") if cited else ""
    cited_date = (cited["effective_date"] or data.sources.get(like, {}).get("effective_date", "")) if cited else ""
    chain, last = [], ""
    for r in rows:
        if r["number_as_written"] != last:
            chain.append({"source_id": r["source_id"], "effective_date": r["effective_date"],
                          "number": normalise_number(r["number_as_written"])})
            last = r["number_as_written"]
    after = [r for r in rows if r["effective_date"] > cited_date]
    changed_in = ""
    # The releases that renumbered it and those that reworded it, since the citation.
    moved_in = [r["source_id"] for r in after if "moved" in r["change"]]
    edited_in = [r["source_id"] for r in after if "edited" in r["change"]]
    if line["ended"]:
        status, changed_in = line["ended"], line["ended_in"]
    elif cited is not None and (rows or line["canonical_number"]):
        now = rows[-1] if rows else cited
        current = data.rule_now(line["canonical_number"]) if line["canonical_number"] else None
        if current and normalise_number(now["number_as_written"]) != line["canonical_number"]:
            # The chain's later releases are not in the dataset (a run on dumps alone, mapped
            # through a history): compared with the rule as it stands now instead.
            now = {"number_as_written": current["number"], "text": current["text"]}
        status = change_of(cited["number_as_written"], cited["text"], now["number_as_written"], now["text"])
        status = "same" if status == "unchanged" else status
        for r in after:
            if r["change"] not in ("unchanged", "added"):
                changed_in = r["source_id"]
        pieces = [v for v in data.split_from(lid)
                  if data.sources.get(v["first_source"], {}).get("effective_date", "") > cited_date]
        if pieces:
            status = "split"
            changed_in = min((v["first_source"] for v in pieces), key=lambda s: data.sources[s]["effective_date"])
    else:
        status = "same"
    return {
        "cited": number, "source_id": source, "lineage_id": lid, "current": line["canonical_number"] or None,
        "status": status, "changed_in": changed_in or None,
        "moved_in": moved_in if "moved" in status or status == "split" else [],
        "edited_in": edited_in if "edited" in status or status == "split" else [],
        "merged_into": ending(lid, data.lineages.get)[2] or None if line["ended"] == "merged" else None,
        "chain": chain,
    }


def describe_resolved(found: dict[str, Any]) -> str:
    """One line for a resolved citation."""
    if found.get("error"):
        return f"{found['cited']}: {found['error']}"
    head = f"{found['cited']} ({found['source_id']}) -> {found['current'] or 'none'}: {found['status']}"
    # A rule moved and edited in several releases: each kind of change with its
    # releases ("moved+edited in" the last release alone read as if that one did both).
    kinds = [f"{kind} in {', '.join(found[f'{kind}_in'])}" for kind in ("edited", "moved") if found.get(f"{kind}_in")]
    if kinds and kinds[0].startswith(found["status"] + " in "):
        head += kinds[0].removeprefix(found["status"])  # "moved in A, B"
    else:
        if found["changed_in"] and (not kinds or found["status"] == "split"):
            head += f" in {found['changed_in']}"  # "split in C (edited in A; moved in A, B)"
        if kinds:
            head += " (" + "; ".join(kinds) + ")"  # "moved+edited (edited in A; moved in A, B)"
    if found["merged_into"]:
        head += f" (into {found['merged_into']})"
    numbers = " > ".join(f"{c['number']} ({c['effective_date']})" for c in found["chain"])
    return f"{head}; {numbers}" if numbers else head  # no chain: the dataset has none of its releases


def resolve_text(out: Path, text: str, source: str = "", as_of: str = "") -> list[dict[str, Any]]:
    """Every rule citation in a text (``502.32a``, ``rule 409.1``), resolved; a
    number the release did not have is reported with an ``error``."""
    from pipeline.numbers import citations

    data = Published(out)
    where = data.release_on(as_of) if as_of else data.known(source)
    results = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for number in citations(line):
            try:
                # A section ("rule 502.14", Vigilance's in 2004) as resolve answers it.
                found = (_resolved_section(data, number, where, "") if _is_section(data, number, where, "")
                         else _resolved(data, data.find(number, where), number, where))
            except TraceError as exc:
                found = {"cited": number, "source_id": where, "lineage_id": None, "current": None,
                         "status": "unknown", "changed_in": None, "moved_in": [], "edited_in": [],
                         "merged_into": None, "chain": [], "error": str(exc)}
            results.append({"line": lineno, **found})
    return results


def trace_json(out: Path, number: str, source: str = "", as_of: str = "") -> dict[str, Any]:
    """The lineage of a rule as one JSON-ready object: the lineage row and its
    history rows (a section: its renumber_map row, and those of the releases
    that have the section it is now)."""
    data = Published(out)
    if _is_section(data, number, source, as_of):
        _, _, row, versions = _section_versions(data, number, source, as_of)
        ended = {} if row["canonical_number"] else {"ended_in": _ended_in(data, versions) or None}
        return {"section": row, "history": versions, **ended}
    lid = data.find(number, source, as_of)
    return {"lineage": data.lineages[lid], "history": data.history_of(lid)}
