"""Every page and data file of the site, rendered from a ``Dataset``.

``Pages.all()`` yields (path inside the site, text). Links are relative; a
page one folder down reaches the root through ``../``. Anchors are given once
per source before any page is written, so a link into another page is only
made when its anchor exists there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from jinja2 import Environment
from markupsafe import Markup, escape

from pipeline.numbers import sort_key
from pipeline.publish.notice import FAN_CONTENT_POLICY, NOTICE
from pipeline.site import report as sitereport
from pipeline.site import scripts as sitescripts
from pipeline.site.changes import KINDS, Change
from pipeline.site.chart import Mark, timeline
from pipeline.site.data import Dataset, Lineage, Source, anchor, slug
from pipeline.site.html import Resolver, TermIndex, Terms, diff_html, linkify, script_json
from pipeline.site.index import SiteIndex
from pipeline.site.urls import changes_file, data_file, label, release_file, section_of


class Pages(SiteIndex):
    """The site of one dataset; ``all()`` renders it page by page."""

    def __init__(self, ds: Dataset, env: Environment) -> None:
        super().__init__(ds)
        self.env = env
        self._terms: dict[tuple[tuple[str, str], ...], Terms] = {}
        self._term_index = TermIndex([_term(it.term) for items in ds.items.values() for it in items
                                      if it.kind == "glossary" and it.term])

    def resolver(self, src: Source, root: str, here: str) -> Resolver:
        """Where a cross-reference of ``src`` leads: its own page, the release whose numbering
        a dump shares, the lineage of its canonical number, or the reference release."""
        own = self.idset[src.source_id]
        page = "" if here == release_file(src.source_id) else f"{root}{release_file(src.source_id)}"
        like = src.numbering_like if not src.official and src.numbering_like in self.idset else ""
        ref_ids = self.idset.get(self.reference, set())

        def resolve(target: str, canonical: str) -> str | None:
            name = anchor(target)
            if name in own:
                return f"{page}#{name}"
            if like and name in self.idset[like]:
                return f"{root}{release_file(like)}#{name}"
            if canonical:
                key = self.ds.by_canonical.get(canonical)
                if key:
                    return f"{root}{self.lineage_file(key)}"
                if anchor(canonical) in ref_ids:
                    return f"{root}{release_file(self.reference)}#{anchor(canonical)}"
            self.unresolved += 1
            return None

        return resolve

    def _common(self, root: str, title: str) -> dict[str, Any]:
        ref = self.ds.source(self.reference) if self.reference else None
        current = ({"page": release_file(ref.source_id), "date": ref.effective_date, "label": label(ref)}
                   if ref else None)
        generated = self.ds.run.get("finished_at") or self.ds.run.get("started_at", "")
        return {"root": root, "title": title, "current": current, "generated": generated, "notice": NOTICE,
                "policy": FAN_CONTENT_POLICY}

    def render(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    # -- the pages ---------------------------------------------------------------------------

    def all(self) -> Iterator[tuple[str, str]]:
        yield "index.html", self.index()
        yield "search.html", self.render("search.html", **self._common("", "Search"))
        yield "compare.html", self.compare_page()
        yield "run.html", self.render("run.html", **self._common("", "Run report"), **sitereport.run_context(self))
        yield "search-index.js", sitescripts.search_index(self)
        yield "data/lineages.js", sitescripts.lineage_data(self)
        for src in self.ds.sources:
            yield data_file(src.source_id), sitescripts.release_data(self, src)
            yield release_file(src.source_id), self.release(src)
        for new in self.changes:
            self.change_pages += 1
            yield changes_file(new), self.change_page(new)
        for lin in self.ds.lineages.values():
            yield self.lineage_file(lin.key), self.lineage(lin)

    def _neighbours(self, src: Source) -> tuple[Source | None, Source | None]:
        rel = self.releases
        if src.official:
            i = rel.index(src)
            return (rel[i - 1] if i else None), (rel[i + 1] if i + 1 < len(rel) else None)
        like = self.ds.source(src.numbering_like) if src.numbering_like else None
        return (like if like and like.official else None), None

    def release(self, src: Source) -> str:
        here = release_file(src.source_id)
        body, toc, counts = self._body(src, here)
        prev, nxt = self._neighbours(src)

        def ref(s: Source | None) -> dict[str, str] | None:
            return {"file": f"{slug(s.source_id)}.html", "label": label(s)} if s else None

        like = self.ds.source(src.numbering_like) if not src.official and src.numbering_like else None
        title = (f"Comprehensive Rules effective {src.effective_date}" if src.official
                 else f"{src.source_id}: {src.format or 'unknown'} copy")
        return self.render(
            "release.html", **self._common("../", title), src=src, body=body, toc=toc, counts=counts,
            warnings=warnings(src),
            prev=ref(prev), next=ref(nxt), like=ref(like) if like else None,
            changes_from_prev=f"../{changes_file(src.source_id)}" if src.source_id in self.changes else "",
            changes_to_next=f"../{changes_file(nxt.source_id)}" if nxt and nxt.source_id in self.changes else "",
        )

    def _body(self, src: Source, here: str) -> tuple[Markup, list[dict[str, str]], Counter[str]]:
        resolve = self.resolver(src, "../", here)
        xrefs, by_number = self.ds.xrefs, self.ds.by_number
        out, toc, counts = [], [], Counter[str]()
        sid = src.source_id
        terms = self.terms(src)
        items = self.ds.items.get(sid, [])
        # The document's own opening (title, introduction, its unlinked list of contents) is
        # folded, so the page opens with the rules; its contents lines link where they can.
        opening = next((i for i, it in enumerate(items) if it.kind not in ("front_matter", "prose")), len(items))
        folded = opening > 3
        if folded:
            out.append(f'<details class="front"><summary>The document\'s opening: title, introduction and '
                       f"contents ({opening} paragraphs)</summary>")
        for n, (it, id_) in enumerate(zip(items, self.ids[sid], strict=True)):
            if folded and n == opening:
                out.append("</details>")
            counts[it.kind] += 1
            if folded and n < opening:
                out.append(self._opening_line(sid, it.kind, it.text))
                continue
            refs = xrefs.get(it.element_id, ())
            num = escape(it.number)
            if it.kind in ("chapter", "section"):
                tag = "h2" if it.kind == "chapter" else "h3"
                attr = f' id="{id_}"' if id_ else ""
                dot = "" if not it.number or it.number.endswith(".") else "."
                head = f'<a class="self" href="#{id_}">{num}{dot}</a> ' if id_ else ""
                out.append(f'<{tag} class="{it.kind}"{attr}>{head}{escape(it.text)}</{tag}>')
                if id_:
                    toc.append({"id": id_, "number": it.number, "title": it.text,
                                "level": "1" if it.kind == "chapter" else "2"})
            elif it.kind == "rule":
                key = by_number.get((sid, it.number))
                text = linkify(it.text, refs, resolve, terms)
                if id_ and key:
                    out.append(f'<p class="rule" id="{id_}"><a class="num" href="../{self.lineage_file(key)}" '
                               f'title="History of this rule">{num}</a> {text} '
                               f'<a class="self" href="#{id_}" aria-label="Link to rule {num}">#</a></p>')
                elif id_:
                    out.append(f'<p class="rule" id="{id_}"><a class="num" href="#{id_}">{num}</a> {text}</p>')
                else:
                    out.append(f'<p class="rule">{text}</p>')
            elif it.kind == "example":
                out.append(f'<p class="example">{linkify(it.text, refs, resolve)}</p>')
            elif it.kind == "glossary":
                attr = f' id="{id_}"' if id_ else ""
                out.append(f'<div class="gloss"{attr}><dfn>{escape(it.term)}</dfn> '
                           f'<span>{linkify(it.text, refs, resolve)}</span></div>')
            elif it.kind == "qa":
                out.append(f'<div class="qa"><p class="q"><b>Q:</b> {linkify(it.question, refs, resolve)}</p>'
                           f'<p class="a"><b>A:</b> {linkify(it.answer, refs, resolve)}</p></div>')
            else:
                out.append(f'<p class="{it.kind.replace("_", "-")}">{linkify(it.text, refs, resolve)}</p>')
        if folded and opening == len(items):
            out.append("</details>")
        return Markup("\n".join(out)), toc, counts

    def _opening_line(self, sid: str, kind: str, text: str) -> str:
        """A paragraph of a document's opening: a line of its contents ("100. General") links
        to that section or chapter on the page."""
        m = _CONTENTS_LINE.fullmatch(text.strip())
        if m and anchor(m.group(1)) in self.idset[sid]:
            return (f'<p class="{kind.replace("_", "-")}"><a href="#{anchor(m.group(1))}">'
                    f"{escape(text.strip())}</a></p>")
        return f'<p class="{kind.replace("_", "-")}">{escape(text)}</p>'

    def terms(self, src: Source) -> Terms | None:
        """The glossary a source's rules link to: its own, else that of the release whose
        numbering it shares; one ``Terms`` for every page with the same glossary."""
        for sid, page in ((src.source_id, ""), (src.numbering_like, f"{slug(src.numbering_like)}.html")):
            entries = [(_term(it.term), f"{page}#{id_}")
                       for it, id_ in zip(self.ds.items.get(sid, []), self.ids.get(sid, []), strict=True)
                       if it.kind == "glossary" and id_ and it.term]
            if entries:
                key = tuple(entries)
                if key not in self._terms:
                    self._terms[key] = Terms(entries, self._term_index)
                return self._terms[key]
        return None

    def index(self) -> str:
        rules = {s.source_id: sum(1 for it in self.ds.items.get(s.source_id, []) if it.kind == "rule")
                 for s in self.ds.sources}
        releases = []
        for s in self.releases:
            row: dict[str, Any] = {"date": s.effective_date, "label": label(s), "page": release_file(s.source_id),
                                   "rules": rules[s.source_id], "current": s.source_id == self.reference,
                                   "changes_page": "", "changes_summary": ""}
            if s.source_id in self.changes:
                counts = Counter(c.kind for c in self.changes[s.source_id][1])
                row["changes_page"] = changes_file(s.source_id)
                row["changes_summary"] = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k]) or "none"
            releases.append(row)
        dumps = []
        for s in self.ds.sources:
            if not s.official:
                like = self.ds.source(s.numbering_like) if s.numbering_like else None
                dumps.append({"label": s.source_id, "page": release_file(s.source_id), "format": s.format,
                              "era": s.era, "rules": rules[s.source_id], "like": label(like) if like else "",
                              "like_page": release_file(like.source_id) if like else ""})
        marks = [Mark(s.effective_date or self._placed_date(s), label(s), release_file(s.source_id),
                      0 if s.official else 1, s.source_id == self.reference)
                 for s in self.ds.sources if s.effective_date or self._placed_date(s)]
        first, last = self.year_range()
        return self.render(
            "index.html", **self._common("", "Releases"), releases=releases, dumps=dumps, rules=self.ds.rules,
            timeline=timeline(marks, "Releases by year; square marks are other copies, placed by the "
                              "release whose numbering they share"),
            first_year=first, last_year=last, choices=self._choices(),
            default_a=self.releases[-2].source_id if len(self.releases) > 1 else "",
            default_b=self.reference,
        )

    def _placed_date(self, src: Source) -> str:
        like = self.ds.source(src.numbering_like) if src.numbering_like else None
        return like.effective_date if like else ""

    def _choices(self) -> list[dict[str, str]]:
        return [{"id": s.source_id, "label": label(s) + ("" if s.official else f" [{s.format}]")}
                for s in self.ds.sources]

    def compare_page(self) -> str:
        sources = [{"id": s.source_id, "label": label(s), "page": release_file(s.source_id),
                    "data": data_file(s.source_id), "official": s.official, "date": s.effective_date,
                    "placed": "" if s.official else self._placed_date(s)}
                   for s in self.ds.sources]
        return self.render("compare.html", **self._common("", "Compare releases"), choices=self._choices(),
                           sources_json=Markup(script_json(sources)))

    def change_page(self, new_id: str) -> str:
        old_id, changes = self.changes[new_id]
        old, new = self.ds.source(old_id), self.ds.source(new_id)
        assert old is not None and new is not None
        titles: dict[str, str] = {}
        for sid in (old_id, new_id):
            titles.update({it.number: it.text for it in self.ds.items.get(sid, []) if it.kind == "section"})
        sections = set(titles)
        groups: dict[str, list[dict[str, Any]]] = {}
        for c in changes:
            sec = section_of(c.new_number or c.old_number, sections)
            groups.setdefault(sec, []).append(self._change_row(c, old_id, new_id))
        counts = Counter(c.kind for c in changes)
        names = [r.source_id for r in self.releases]
        i = names.index(new_id)
        return self.render(
            "changes.html", **self._common("../", f"Changes from {label(old)} to {label(new)}"),
            old={"file": f"../{release_file(old_id)}", "label": label(old)},
            new={"file": f"../{release_file(new_id)}", "label": label(new)},
            counts=[(k, counts[k]) for k in KINDS],
            groups=[{"section": s, "title": titles.get(s, ""), "changes": groups[s]}
                    for s in sorted(groups, key=sort_key)],
            prev_changes=f"../{changes_file(names[i - 1])}" if names[i - 1] in self.changes else "",
            next_changes=f"../{changes_file(names[i + 1])}" if i + 1 < len(names) else "",
        )

    def _change_row(self, c: Change, old_id: str, new_id: str) -> dict[str, Any]:
        if c.kind in ("edited", "moved+edited") or (c.kind == "moved" and c.old_text != c.new_text):
            body = diff_html(c.old_text, c.new_text)
        else:
            body = escape(c.new_text or c.old_text)
        other_src = old_id if c.kind == "split" else new_id
        return {
            "kind": c.kind, "old_number": c.old_number, "new_number": c.new_number,
            "old_href": f"../{self.number_link(old_id, c.old_number)}",
            "new_href": f"../{self.number_link(new_id, c.new_number)}",
            "other_number": c.other_number, "other_href": f"../{self.number_link(other_src, c.other_number)}",
            "lineage_href": f"../{self.lineage_file(c.key)}", "body": body,
        }

    def lineage(self, lin: Lineage) -> str:
        root = "../"
        here = self.lineage_file(lin.key)
        rows: list[dict[str, Any]] = []
        run: list[str] = []  # unchanged versions since the last change, shown as one line of links
        previous = ""
        for v in lin.versions:
            src = self.ds.source(v.source_id)
            assert src is not None
            href = root + self.number_link(src.source_id, v.number)
            if v.number and v.change == "unchanged" and v.text == previous and rows:
                run.append(f'<a href="{escape(href)}">{escape(label(src))}</a>')
                continue
            if run:
                rows.append({"change": "unchanged", "run": Markup(", ".join(run))})
                run = []
            row: dict[str, Any] = {"date": v.date or self._placed_date(src), "change": v.change,
                                   "number": v.number, "source_label": label(src),
                                   "source_href": root + release_file(src.source_id), "href": href, "body": "",
                                   "run": ""}
            if v.number:
                if not previous:
                    row["body"] = self._text_with_links(src, v.number, v.text, here)
                elif v.text != previous:
                    row["body"] = diff_html(previous, v.text)
                    if v.change == "unchanged":
                        row["change"] = "unchanged (only quotes, dashes or cross-reference numbers differ)"
                previous = v.text
            else:
                previous = ""  # removed here: the next version is shown whole
            rows.append(row)
        if run:
            rows.append({"change": "unchanged", "run": Markup(", ".join(run))})
        present = [v for v in lin.versions if v.number]
        first, last = (present[0], present[-1]) if present else (None, None)
        # The wording it has now (or had last), from the last release that has it, else the last copy.
        wording = next((v for v in reversed(present) if self._src(v.source_id).official), last)
        now = None
        if wording is not None:
            src = self._src(wording.source_id)
            now = {"number": wording.number, "label": label(src), "href": root + self.number_link(
                src.source_id, wording.number), "text": self._text_with_links(src, wording.number, wording.text, here),
                "current": bool(lin.canonical) and not lin.ended}

        def other(key: str) -> dict[str, str] | None:
            o = self.ds.lineages.get(key)
            return {"href": f"{root}{self.lineage_file(key)}", "label": o.last_number} if o else None

        ended = ""
        if lin.ended or lin.ended_in:
            gone = self.ds.source(lin.ended_in) if lin.ended_in else None
            ended = (lin.ended or "ended") + (f" in {label(gone)}" if gone else "")
        elif lin.versions and lin.versions[-1].change == "removed":
            gone = self.ds.source(lin.versions[-1].source_id)
            ended = f"removed in {label(gone)}" if gone else "removed"
        title = f"Rule {lin.canonical}" if lin.canonical else f"Rule {lin.last_number} (ended)"
        numbers = lin.numbers
        changed = sum(1 for v in lin.versions if v.change not in ("unchanged", "added"))
        summary = (f"In {len({v.source_id for v in present})} sources"
                   + (f", numbered {', '.join(numbers)}" if len(numbers) > 1 else "")
                   + f"; {changed} change{'' if changed == 1 else 's'} of number or wording after it was added.")
        ref_link = self.number_link(self.reference, lin.canonical) if lin.canonical and self.reference else ""
        return self.render(
            "lineage.html", **self._common(root, title), lin=lin, summary=summary, numbers=numbers, now=now,
            versions=rows, section_title=self.ds.sections.get(lin.canonical.partition(".")[0], ""),
            current_href=root + ref_link if "#" in ref_link else "",
            first=f"{first.number} in {label(self._src(first.source_id))}" if first else "—",
            last=f"{last.number} in {label(self._src(last.source_id))}" if last else "—",
            ended=ended, split_from=other(lin.split_from) if lin.split_from else None,
            merged_into=other(lin.merged_into) if lin.merged_into else None,
            split_into=[o for k in self.split_into.get(lin.key, []) if (o := other(k))],
            absorbed=[o for k in self.absorbed.get(lin.key, []) if (o := other(k))],
        )

    def _text_with_links(self, src: Source, number: str, text: str, here: str) -> Markup:
        """A version's wording with the cross-references of its element on the source's page."""
        if src.source_id not in self.rule_items:
            self.rule_items[src.source_id] = {}
            for it in self.ds.items.get(src.source_id, []):
                if it.kind == "rule":
                    self.rule_items[src.source_id].setdefault(it.number, it)
        element = self.rule_items[src.source_id].get(number)
        refs = self.ds.xrefs.get(element.element_id, ()) if element and element.text == text else ()
        return linkify(text, refs, self.resolver(src, "../", here))


def _term(term: str) -> str:
    """A glossary term as rule text writes it: "Bury (Obsolete)" is "Bury"."""
    return re.sub(r"\s*\(.*\)$", "", term)


# A line of a document's own contents: "1. Game Concepts", "100. General", "702. Keyword Abilities".
_CONTENTS_LINE = re.compile(r"(\d{1,3})\.\s+\S.*")


def warnings(src: Source) -> list[str]:
    """What a reader of a source's page must know first: a truncated or suspect copy, a
    quarantined file (from ``sources.csv``'s status, flags, suspect and error)."""
    found = []
    flags = [f for f in src.row.get("flags", "").split(";") if f]
    if "truncated" in flags:
        found.append("This copy is truncated: it stops partway through the document, so the rules after its "
                     "last one are missing, and its last rule may end mid-sentence. It is not a whole release.")
    if src.row.get("suspect"):
        found.append(f"This source is suspect: a self-check failed ({src.row['suspect']}).")
    if src.status == "quarantined":
        found.append(f"This source was quarantined and not read: {src.row.get('error') or 'see the run report'}.")
    return found
