"""The data the site's scripts load: each source's rules for ``compare.js``, the
lineages' relations, and ``search-index.js`` for ``search.js``. Plain scripts that set
a global, so they load from file:// where ``fetch`` cannot."""

from __future__ import annotations

from pipeline.numbers import RULE_NUMBER, normalise
from pipeline.site.data import Lineage, Source, anchor
from pipeline.site.html import script_json
from pipeline.site.index import SiteIndex
from pipeline.site.urls import label, release_file
from pipeline.text import fold, folded, search_fold


def release_data(pages: SiteIndex, src: Source) -> str:
    found = pages.presence[src.source_id]
    # "f": the wording as compared (pipeline.text.folded), as a number shared by every
    # source, so the browser compares exactly as sitechanges.compare does.
    data = {"k": [pages.names[k] for k in found], "n": [v.number for v in found.values()],
            "t": [v.text for v in found.values()],
            "f": [pages.folds.setdefault(folded(v.text), len(pages.folds)) for v in found.values()]}
    return f"(window.SITE_DATA=window.SITE_DATA||{{}})[{script_json(src.source_id)}]={script_json(data)};\n"

def lineage_data(pages: SiteIndex) -> str:
    names, date = pages.names, {s.source_id: s.effective_date for s in pages.ds.sources}
    rel = {names[k]: [names.get(lin.split_from, ""), names.get(lin.merged_into, ""),
                      date.get(lin.first_source, ""), lin.ended, date.get(lin.ended_in, "")]
           for k, lin in pages.ds.lineages.items()}  # all: a comparison from a copy reads each one's first date
    return f"window.SITE_LINEAGES={script_json(rel)};\n"

def search_key(text: str) -> str:
    """Text as the search page folds it (``searchcore.js``'s ``fold``, held equal by a test):
    quote style (``pipeline.text.fold``), then accents, case and spacing (``search_fold``).

    >>> search_key("Assassin’s  Trick") == search_key("assassin's trick")
    True
    """
    return search_fold(fold(text))


def search_index(pages: SiteIndex) -> str:
    """``search-index.js``: one entry per lineage, section title, glossary term and source,
    each with its numbers and the date it last had each, its date and whether the current
    release has it (``searchcore.js`` ranks by them); and the grammar's rule-number shape."""
    ds = pages.ds
    date = {s.source_id: s.effective_date or _placed(pages, s) for s in ds.sources}
    entries: list[list[str | int]] = []
    for lin in ds.lineages.values():
        present = [v for v in lin.versions if v.number]
        if not present:
            continue
        latest = present[-1].text
        words = set(search_key(latest).split())
        older = dict.fromkeys(v.text for v in present[:-1])
        extra = dict.fromkeys(w for text in older for w in search_key(text).split() if w not in words)
        # Each number with the last date it was written; the number it has now (or had last) first.
        when: dict[str, str] = {}
        for v in present:
            key = anchor(normalise(v.number))[1:]
            when[key] = max(when.get(key, ""), date.get(v.source_id, ""))
        first = anchor(normalise(lin.last_number))[1:]
        nums = " ".join(f"{k}@{when.get(k, '')}" for k in dict.fromkeys([first, *reversed(when)]))
        current = bool(lin.canonical) and not lin.ended
        shown = lin.last_number + ("" if current else " (ended)")
        entries.append(["rule", shown, latest, pages.lineage_file(lin.key), nums, " ".join(extra),
                        _number_spans(pages, lin), max(when.values()), int(current)])
    sections: dict[tuple[str, str], list[str | int]] = {}
    for src in ds.sources:
        for it, id_ in zip(ds.items.get(src.source_id, []), pages.ids[src.source_id], strict=True):
            if it.kind == "section" and id_:
                key = anchor(normalise(it.number))[1:]
                # The newest release with the title, or a copy when no release has it.
                if not src.official and sections.get((key, search_key(it.text)), [""])[-1] != "":
                    continue
                sections[(key, search_key(it.text))] = [
                    "section", f"{it.number} {it.text}", f"in {label(src)}", f"{release_file(src.source_id)}#{id_}",
                    f"{key}@{date[src.source_id]}", "", "", date[src.source_id],
                    int(src.source_id == pages.reference), "official" if src.official else ""]
    entries.extend(entry[:-1] for entry in sections.values())
    order = {s.source_id: i for i, s in enumerate(ds.sources)}
    terms: dict[str, tuple[int, list[str | int]]] = {}
    for row in ds.glossary:
        at = pages.element_anchor.get(row.get("element_id", ""))
        if at is None or row["source_id"] not in order:
            continue
        rank, key = order[row["source_id"]], search_key(row["term"])
        if key not in terms or terms[key][0] <= rank:
            terms[key] = (rank, ["glossary", row["term"], row["text"], f"{release_file(at[0])}#{at[1]}", "", "", "",
                                 date.get(row["source_id"], ""), int(row["source_id"] == pages.reference)])
    entries.extend(entry for _, entry in terms.values())
    for src in ds.sources:
        entries.append(["release", label(src), f"{src.format} {src.era} {src.source_id}",
                        release_file(src.source_id), "", "", "", date[src.source_id],
                        int(src.source_id == pages.reference)])
    return (f"window.SEARCH_SHAPE={script_json(RULE_NUMBER)};\n"
            f"window.SEARCH_INDEX={script_json(entries)};\n")


def _placed(pages: SiteIndex, src: Source) -> str:
    like = pages.ds.source(src.numbering_like) if src.numbering_like else None
    return like.effective_date if like else ""

def _number_spans(pages: SiteIndex, lin: Lineage) -> str:
    """The numbers a lineage had and when: ``702.87a 2011-2013, 702.88a 2016-2019``."""
    spans: dict[str, list[str]] = {}
    for v in lin.versions:
        src = pages.ds.source(v.source_id)
        if v.number and src is not None and src.official:
            spans.setdefault(v.number, []).append(src.effective_date[:4])
    return ", ".join(f"{n} {y[0]}" + (f"–{y[-1]}" if y[-1] != y[0] else "") for n, y in spans.items())
