"""The data the site's scripts load: each source's rules for ``compare.js``, the
lineages' relations, and ``search-index.js`` for ``search.js``. Plain scripts that set
a global, so they load from file:// where ``fetch`` cannot."""

from __future__ import annotations

from pipeline.site.data import Lineage, Source, anchor
from pipeline.site.html import script_json
from pipeline.site.index import SiteIndex
from pipeline.site.urls import label, release_file
from pipeline.text import folded
from pipeline.text import search_fold as fold


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

def search_index(pages: SiteIndex) -> str:
    entries: list[list[str]] = []
    for lin in pages.ds.lineages.values():
        present = [v for v in lin.versions if v.number]
        if not present:
            continue
        latest = present[-1].text
        words = set(fold(latest).split())
        older = dict.fromkeys(v.text for v in present[:-1])
        extra = dict.fromkeys(w for text in older for w in fold(text).split() if w not in words)
        # The number it has now (or had last) first: a search for it ranks this lineage first.
        numbers = [lin.last_number, *reversed(lin.numbers)]
        nums = " ".join(dict.fromkeys(anchor(n)[1:] for n in numbers))
        shown = lin.last_number + ("" if lin.canonical else " (ended)")
        entries.append(["rule", shown, latest, pages.lineage_file(lin.key), nums, " ".join(extra),
                        _number_spans(pages, lin)])
    sections: dict[tuple[str, str], list[str]] = {}
    for src in pages.ds.sources:
        for it, id_ in zip(pages.ds.items.get(src.source_id, []), pages.ids[src.source_id], strict=True):
            if it.kind == "section" and id_:
                sections[(it.number, fold(it.text))] = [
                    "section", f"{it.number} {it.text}", f"in {label(src)}",
                    f"{release_file(src.source_id)}#{id_}", anchor(it.number)[1:], "", ""]
    entries.extend(sections.values())
    order = {s.source_id: i for i, s in enumerate(pages.ds.sources)}
    terms: dict[str, tuple[int, list[str]]] = {}
    for row in pages.ds.glossary:
        at = pages.element_anchor.get(row.get("element_id", ""))
        if at is None or row["source_id"] not in order:
            continue
        rank = order[row["source_id"]]
        if fold(row["term"]) not in terms or terms[fold(row["term"])][0] <= rank:
            terms[fold(row["term"])] = (rank, ["glossary", row["term"], row["text"],
                                               f"{release_file(at[0])}#{at[1]}", "", "", ""])
    entries.extend(entry for _, entry in terms.values())
    for src in pages.ds.sources:
        entries.append(["release", label(src), f"{src.format} {src.era} {src.source_id}",
                        release_file(src.source_id), "", "", ""])
    return f"window.SEARCH_INDEX={script_json(entries)};\n"

def _number_spans(pages: SiteIndex, lin: Lineage) -> str:
    """The numbers a lineage had and when: ``702.87a 2011-2013, 702.88a 2016-2019``."""
    spans: dict[str, list[str]] = {}
    for v in lin.versions:
        src = pages.ds.source(v.source_id)
        if v.number and src is not None and src.official:
            spans.setdefault(v.number, []).append(src.effective_date[:4])
    return ", ".join(f"{n} {y[0]}" + (f"–{y[-1]}" if y[-1] != y[0] else "") for n, y in spans.items())
