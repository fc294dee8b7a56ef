"""The site's index of one dataset: the anchors, names and relations every page and
script links by, worked out once before anything is rendered (``pages``, ``report``
and ``scripts`` read it; none of them needs another's rendering)."""

from __future__ import annotations

from collections import defaultdict

from pipeline.site.changes import Change, compare, presence
from pipeline.site.data import Dataset, Item, Source, anchor, slug
from pipeline.site.urls import release_file, term_id

NUMBERED = ("chapter", "section", "rule")


class SiteIndex:
    """What every page and script of the site needs to know of one dataset, worked
    out once: each release's anchors, the changes between neighbouring releases,
    the lineages' page names and relations, the years covered."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.presence = presence(ds)
        self.releases = ds.releases
        refs = [s.source_id for s in self.releases]
        reference = ds.run.get("reference")
        self.reference = reference if reference in refs else (refs[-1] if refs else "")
        self.unresolved = 0
        self.change_pages = 0
        self.ids: dict[str, list[str]] = {}
        self.idset: dict[str, set[str]] = {}
        self.element_anchor: dict[str, tuple[str, str]] = {}  # element id -> (source id, anchor)
        self.rule_items: dict[str, dict[str, Item]] = {}  # source id -> number -> its first rule
        self._assign_ids()
        self.changes: dict[str, tuple[str, list[Change]]] = {}  # new release -> (old release, changes)
        for old, new in zip(self.releases, self.releases[1:], strict=False):
            self.changes[new.source_id] = (old.source_id, compare(ds, old.source_id, new.source_id, self.presence))
        self.split_into: dict[str, list[str]] = defaultdict(list)
        self.absorbed: dict[str, list[str]] = defaultdict(list)
        for lin in ds.lineages.values():
            if lin.split_from:
                self.split_into[lin.split_from].append(lin.key)
            if lin.merged_into:
                self.absorbed[lin.merged_into].append(lin.key)
        # A lineage's page is named by its current number (lineage/702.89a.html), an ended
        # one by its id: the names are unique, so the scripts match lineages by name.
        self.folds: dict[str, int] = {}
        self.names: dict[str, str] = {}
        taken: set[str] = set()
        for lin in ds.lineages.values():
            name = slug(lin.canonical) if lin.canonical and slug(lin.canonical) not in taken else slug(lin.key)
            while name in taken:
                name += "_"
            taken.add(name)
            self.names[lin.key] = name
        self.years = sorted({int(s.effective_date[:4]) for s in ds.sources if s.effective_date[:4].isdigit()})

    # -- anchors and links -------------------------------------------------------------------

    def _assign_ids(self) -> None:
        for src in self.ds.sources:
            used: set[str] = set()
            ids = []
            for it in self.ds.items.get(src.source_id, []):
                base = ""
                if it.kind in NUMBERED and it.number:
                    base = anchor(it.number)
                elif it.kind == "glossary" and it.term:
                    base = term_id(it.term)
                if not base:
                    ids.append("")
                    continue
                found, n = base, 2
                while found in used:
                    found, n = f"{base}-{n}", n + 1
                used.add(found)
                ids.append(found)
                self.element_anchor[it.element_id] = (src.source_id, found)
            self.ids[src.source_id], self.idset[src.source_id] = ids, used

    def _src(self, source_id: str) -> Source:
        src = self.ds.source(source_id)
        assert src is not None, source_id
        return src

    def lineage_file(self, key: str) -> str:
        return f"lineage/{self.names[key]}.html"

    def number_link(self, source_id: str, number: str) -> str:
        """Root-relative link to a number on its source's page (the page itself when not anchored)."""
        target = anchor(number)
        page = release_file(source_id)
        return f"{page}#{target}" if number and target in self.idset.get(source_id, ()) else page

    def year_range(self) -> tuple[int, int]:
        return (self.years[0], self.years[-1]) if self.years else (2000, 2000)
