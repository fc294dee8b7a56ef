"""A rule's life from the published tables: find its lineage from any number
(current, or as some source or date cited it), show every version with word
diffs, and resolve an old citation to its current number.

Everything here reads ``out/`` (``lineages.csv``, ``rule_history.csv``,
``renumber_map.csv``, ``sources.csv``); nothing re-runs the pipeline.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from pipeline.changes import change_of
from pipeline.corpus.dedupe import normalise_number
from pipeline.errors import TraceError
from pipeline.numbers import sort_key
from pipeline.records import WRITTEN_TWICE
from pipeline.text import fold, folded_title

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def checked_date(text: str) -> str:
    """``text`` if it is a real date written YYYY-MM-DD, else ValueError (a date
    is compared as text with the releases' dates: "2005-1-1" or "20050101" would
    pick another release than the one meant).

    >>> checked_date("2004-10-01")
    '2004-10-01'
    >>> checked_date("2005-02-30")
    Traceback (most recent call last):
    ...
    ValueError: not a date: '2005-02-30' (give YYYY-MM-DD, e.g. 2004-10-01)
    """
    try:
        if _ISO_DATE.fullmatch(text):
            date.fromisoformat(text)
            return text
    except ValueError:
        pass
    raise ValueError(f"not a date: {text!r} (give YYYY-MM-DD, e.g. 2004-10-01)")


def word_diff(old: str, new: str) -> str:
    """Inline word diff, ``[-removed-]{+added+}`` as ``git diff --word-diff`` shows it.

    Words that differ only in quote style are the same word (as they are no edit
    for the change function), shown as the new version writes them.

    >>> word_diff("Play this ability only", "Activate this ability only")
    '[-Play-] {+Activate+} this ability only'
    >>> print(word_diff("its “card” here", 'its "card" here now'))
    its "card" here {+now+}
    """
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, [fold(w) for w in a], [fold(w) for w in b],
                                              autojunk=False).get_opcodes():
        if op == "equal":
            out.append(" ".join(b[j1:j2]))
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


_LETTERED = re.compile(r"\d+\.\d*[A-Za-z]+")


def cited_number(text: str) -> str:
    """A citation as people write it: ``CR 502.32a``, ``rule 502.32a.``, ``502.32a``.

    Rules are lettered in lower case; a capital is taken as the letter it is.

    >>> cited_number("CR 502.32a"), cited_number("rule 702. 37a."), cited_number("702.42A")
    ('502.32a', '702.37a', '702.42a')
    >>> cited_number("702.19a,"), cited_number("(CR 702.19a)"), cited_number("７０２.１９a")
    ('702.19a', '702.19a', '702.19a')
    """
    # As it stood in a sentence ("702.19a,", "(702.19a)"), in full-width digits ("７０２.１９a").
    text = unicodedata.normalize("NFKC", text).strip().rstrip(",;:").strip("()[]")
    words = text.split(None, 1)
    if len(words) == 2 and words[0].casefold().rstrip(".") in ("cr", "rule", "rules", "section"):
        text = words[1]
    number = normalise_number(text.strip())
    return number.lower() if _LETTERED.fullmatch(number) else number


def missing(path: Path) -> str:
    """What to say of a published table that is not there (run from another folder, say)."""
    return (f"{path} not found: run `python -m pipeline ingest` first, or give the dataset's folder with --out "
            f"(looked in {path.parent.resolve()})")


def is_rule_row(row: dict[str, str]) -> bool:
    """Whether a ``renumber_map`` row maps a rule as its source numbered it (not
    a section's title, nor a cross-reference in another rule's text)."""
    return not row["title"] and row["method"] != "xref"


def _read(out: Path, name: str) -> list[dict[str, str]]:
    path = out / f"{name}.csv"
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    except FileNotFoundError:
        raise TraceError(missing(path)) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TraceError(f"{path} cannot be read ({exc}): run `python -m pipeline ingest` again") from None


@dataclass
class Dataset:
    """The published tables that lineage questions need, indexed."""

    lineages: dict[str, dict[str, str]]
    history: dict[str, list[dict[str, str]]]
    numbers: dict[tuple[str, str], str]  # (source, number) -> lineage id
    sections: dict[tuple[str, str], dict[str, str]]  # (source, number) -> renumber_map row
    sources: dict[str, dict[str, str]]
    releases: list[str] = field(default_factory=list)  # official releases in date order
    # (source, number) -> why it is no one rule: a number the source wrote for two (renumber_map's reason)
    twice: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def load(cls, out: Path) -> Dataset:
        lineages = {r["lineage_id"]: r for r in _read(out, "lineages")}
        history: dict[str, list[dict[str, str]]] = {}
        for r in _read(out, "rule_history"):
            history.setdefault(r["lineage_id"], []).append(r)
        numbers: dict[tuple[str, str], str] = {}
        sections: dict[tuple[str, str], dict[str, str]] = {}
        twice: dict[tuple[str, str], str] = {}
        for r in _read(out, "renumber_map"):
            key = (r["source_id"], normalise_number(r["number_as_written"]))
            if r["title"] and len(key[1]) < 3:
                continue  # a chapter ("5", Turn Structure): no rule, no section to trace
            if r["title"]:
                sections[key] = r
            elif r["lineage_id"]:
                numbers.setdefault(key, r["lineage_id"])
            elif r["reason"].startswith(WRITTEN_TWICE):
                twice[key] = r["reason"]
        sources = {r["source_id"]: r for r in _read(out, "sources")}
        # The chain's releases: each shares its own numbering. A copy of one, a
        # truncated or suspect one, shares another's, though it states a date too.
        chain = [s for s, r in sources.items() if r["effective_date"] and r.get("numbering_like", s) == s]
        releases = sorted(chain, key=lambda s: (sources[s]["effective_date"], s))
        return cls(lineages, history, numbers, sections, sources, releases, twice)

    def release_on(self, as_of: str) -> str:
        """The newest official release in effect on a date (YYYY-MM-DD)."""
        try:
            checked_date(as_of)
        except ValueError as exc:
            raise TraceError(str(exc)) from None
        before = [s for s in self.releases if self.sources[s]["effective_date"] <= as_of]
        if not before:
            first = f"the first is {self.releases[0]}" if self.releases else "the dataset has no dated release"
            raise TraceError(f"no release in effect on {as_of} ({first})")
        return before[-1]

    def known(self, source: str) -> str:
        """``source``, if the dataset has it (an empty one: none asked for)."""
        if source and source not in self.sources:
            raise TraceError(f"no source {source!r} in the published dataset")
        return source

    def find(self, number: str, source: str = "", as_of: str = "") -> str:
        """The lineage of a rule number: as ``source`` wrote it, as the release in
        effect on ``as_of`` numbered it, or else a current number (or an old one
        that only one lineage ever had)."""
        number = cited_number(number)
        if not number:
            raise TraceError("no rule number given")
        if as_of:
            source = self.release_on(as_of)
        if self.known(source):
            lid = self.numbers.get((source, number))
            if not lid and (source, number) in self.twice:
                raise TraceError(f"{source} has {number} {self.twice[source, number].removeprefix('written ')}: "
                                 "give the current number of the one you mean")
            if not lid:
                elsewhere = [sid for sid in self.releases if (sid, number) in self.sections]
                if elsewhere:  # a section number of other releases (702.42 in 2004)
                    raise TraceError(f"{source} has no rule or section {number} (a section of {elsewhere[0]} to "
                                     f"{elsewhere[-1]}: give a date or source in those years)")
                having = [sid for sid in self.releases if (sid, number) in self.numbers]
                if having:  # cited before it was written, or after it ended (502.32a in July 2003)
                    raise TraceError(f"{source} has no rule {number} (releases {having[0]} to {having[-1]} have "
                                     "one: give a date or source in those years)")
                raise TraceError(f"{source} has no rule {number}")
            return lid
        current = [lid for lid, r in self.lineages.items() if r["canonical_number"] == number]
        if current:
            return current[0]
        had = sorted({lid for (_, n), lid in self.numbers.items() if n == number})
        if len(had) == 1:
            return had[0]
        if not had:
            raise TraceError(f"no rule {number} in any source")
        spans = "; ".join(f"{lid} ({self._span(lid, number)})" for lid in had[:6])
        raise TraceError(f"{number} was {len(had)} different rules over the years: {spans}. "
                         "Say which with --source ID or --as-of YYYY-MM-DD")

    def _span(self, lid: str, number: str) -> str:
        dates = [r["effective_date"] for r in self.history.get(lid, [])
                 if normalise_number(r["number_as_written"]) == number and r["effective_date"]]
        return f"{dates[0]}..{dates[-1]}" if dates else "undated sources"


def trace(out: Path, number: str, source: str = "", as_of: str = "") -> Iterator[str]:
    """Lines describing a rule's lineage: every version, its number then, word diffs."""
    data = Dataset.load(out)
    if _is_section(data, number, source, as_of):
        yield from _trace_section(data, number, source, as_of)
        return
    lid = data.find(number, source, as_of)
    line = data.lineages[lid]
    rows = data.history.get(lid, [])
    now = line["canonical_number"] or f"ended ({line['ended']} in {line['ended_in']})"
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
            yield f"    merged into lineage {line['merged_into']}"
        if text:
            previous = text


def _is_section(data: Dataset, number: str, source: str, as_of: str) -> bool:
    n = cited_number(number)
    if n[-1:].isalpha():
        return False
    where = data.release_on(as_of) if as_of else source or (data.releases[-1] if data.releases else "")
    # A section of the release it is read in, though a rule has its number now (502.2, First Strike until 2009).
    if (where, n) in data.sections and (where, n) not in data.numbers:
        return True
    if any(r["canonical_number"] == n for r in data.lineages.values()):
        return False
    if not source and not as_of and not any(n == written for _, written in data.numbers):
        older = [sid for sid in data.releases if (sid, n) in data.sections]
        if older:
            raise TraceError(f"{n} is a section of older releases ({older[0]} to {older[-1]}), not of the newest: "
                             "say which with --source ID or --as-of YYYY-MM-DD")
    return False


def _section_versions(data: Dataset, number: str, source: str, as_of: str
                      ) -> tuple[str, str, dict[str, str], list[dict[str, str]]]:
    """(number, the release it is read in, its renumber_map row, its versions:
    a renumber_map row per release that has it, in date order). A section that
    ended has no number now: its versions are the sections that ended, release
    by release next to the one it is read in, under its number or title
    (Snow-Covered, 502.14 of 2001 to 2004)."""
    n = cited_number(number)
    where = data.release_on(as_of) if as_of else source or data.releases[-1]
    row = data.sections[where, n]
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
    for (s, _), r in sorted(data.sections.items(), key=lambda kv: sort_key(kv[0][1])):
        if s in order and r["canonical_number"] == current:
            alike.setdefault(s, []).append(r)
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


def _ended_in(data: Dataset, versions: list[dict[str, str]]) -> str:
    """The first release without an ended section's last version, or ''."""
    order = {sid: k for k, sid in enumerate(data.releases)}
    k = order.get(versions[-1]["source_id"], len(data.releases)) + 1 if versions else len(data.releases)
    return data.releases[k] if k < len(data.releases) else ""


def _trace_section(data: Dataset, number: str, source: str, as_of: str) -> Iterator[str]:
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


def _resolved_section(data: Dataset, number: str, source: str, as_of: str) -> dict[str, Any]:
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
    data = Dataset.load(out)
    if _is_section(data, number, source, as_of):
        return _resolved_section(data, number, source, as_of)
    lid = data.find(number, source, as_of)
    return _resolved(data, lid, cited_number(number), source or (data.release_on(as_of) if as_of else ""))


def _resolved(data: Dataset, lid: str, number: str, source: str) -> dict[str, Any]:
    line = data.lineages[lid]
    # The chain's releases only: a dated copy (truncated, suspect) is no step of it.
    releases = set(data.releases)
    rows = [r for r in data.history.get(lid, []) if r["source_id"] in releases and r["number_as_written"]]
    cited = next((r for r in data.history.get(lid, []) if r["source_id"] == source), None)
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
    elif cited is not None and rows:
        now = rows[-1]
        status = change_of(cited["number_as_written"], cited["text"], now["number_as_written"], now["text"])
        status = "same" if status == "unchanged" else status
        for r in after:
            if r["change"] not in ("unchanged", "added"):
                changed_in = r["source_id"]
        pieces = [k for k, v in data.lineages.items() if v["split_from"] == lid
                  and data.sources.get(v["first_source"], {}).get("effective_date", "") > cited_date]
        if pieces:
            status = "split"
            changed_in = min((data.lineages[k]["first_source"] for k in pieces),
                             key=lambda s: data.sources[s]["effective_date"])
    else:
        status = "same"
    return {
        "cited": number, "source_id": source, "lineage_id": lid, "current": line["canonical_number"] or None,
        "status": status, "changed_in": changed_in or None,
        "moved_in": moved_in if "moved" in status or status == "split" else [],
        "edited_in": edited_in if "edited" in status or status == "split" else [],
        "merged_into": data.lineages.get(line["merged_into"], {}).get("canonical_number") or None,
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
    return f"{head}; {numbers}"


def resolve_text(out: Path, text: str, source: str = "", as_of: str = "") -> list[dict[str, Any]]:
    """Every rule citation in a text (``502.32a``, ``rule 409.1``), resolved; a
    number the release did not have is reported with an ``error``."""
    from pipeline.corpus.xrefs import citations

    data = Dataset.load(out)
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
    data = Dataset.load(out)
    if _is_section(data, number, source, as_of):
        _, _, row, versions = _section_versions(data, number, source, as_of)
        ended = {} if row["canonical_number"] else {"ended_in": _ended_in(data, versions) or None}
        return {"section": row, "history": versions, **ended}
    lid = data.find(number, source, as_of)
    return {"lineage": data.lineages[lid], "history": data.history.get(lid, [])}
