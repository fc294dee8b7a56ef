"""``run.html``: the run report for whoever runs the job, from ``run.json``,
``sources.csv`` and ``changes.md``, with SVG charts of rules and changes per release."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from pipeline.sitechanges import KINDS
from pipeline.siteurls import changes_file, label, release_file
from pipeline.svgchart import Bar, bar_chart, legend

if TYPE_CHECKING:
    from pipeline.sitepages import Pages

CHART_KINDS = ("added", "removed", "moved", "edited")  # split counts as added, merged as removed


def run_page(pages: Pages) -> str:
    run = pages.ds.run
    first, last = pages.year_range()
    rules_bars = [Bar(s.effective_date, label(s),
                      (sum(1 for it in pages.ds.items.get(s.source_id, []) if it.kind == "rule"),),
                      release_file(s.source_id)) for s in pages.releases]
    change_rows, change_bars = [], []
    for new_id, (_, changes) in pages.changes.items():
        src = pages.ds.source(new_id)
        assert src is not None
        counts = Counter(c.kind for c in changes)
        change_rows.append({"label": label(src), "href": changes_file(new_id),
                            "counts": [counts[k] for k in KINDS]})
        stacked = (counts["added"] + counts["split"], counts["removed"] + counts["merged"], counts["moved"],
                   counts["edited"] + counts["moved+edited"])
        change_bars.append(Bar(src.effective_date, label(src), stacked, changes_file(new_id)))
    columns = ["source_id", "format", "effective_date", "era", "status", "error", "flags"]
    extra = [c for s in pages.ds.sources for c in s.row if "check" in c and c not in columns]
    columns += list(dict.fromkeys(extra))
    sources = [{"cells": [s.row.get(c, "") for c in columns], "page": release_file(s.source_id),
                "status_class": "bad" if s.status != "ok" else ""} for s in pages.ds.sources]
    return pages.render(
        "run.html", **pages._common("", "Run report"), run=run,
        status_class="ok" if run.get("status") == "ok" else "bad",
        reference_page=release_file(pages.reference) if pages.reference else "",
        quarantined=sum(1 for s in pages.ds.sources if s.status != "ok"),
        source_columns=columns, sources=sources, changes_md=markdown_lite(pages.ds.changes_md),
        problems=[row for row, s in zip(sources, pages.ds.sources, strict=True)
                  if s.status != "ok" or s.row.get("error") or s.row.get("flags")],
        rules_chart=bar_chart(rules_bars, ("rules",), "Rules per release",
                              "Number of numbered rules in each release, by effective date.",
                              first_year=first, last_year=last),
        rules_bars=rules_bars,
        changes_chart=bar_chart(change_bars, CHART_KINDS, "Changes per release",
                                "Rules added (or split off), removed (or merged), renumbered and reworded in "
                                "each release against the one before.", first_year=first, last_year=last),
        changes_legend=legend(CHART_KINDS), change_kinds=KINDS, change_rows=change_rows,
        checks=_flatten(run.get("checks", {})), stages=_flatten(run.get("stages", {})),
        outputs=[o for o in run.get("outputs", []) if isinstance(o, dict)],
        seconds=_flatten(run.get("seconds", {})),
    )


def _flatten(value: object, prefix: str = "") -> list[tuple[str, str]]:
    """Nested mappings and lists as (dotted name, value) rows.

    >>> _flatten({"a": 1, "b": {"c": [2, 3]}})
    [('a', '1'), ('b.c', '2, 3')]
    """
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for key, sub in value.items():
            out += _flatten(sub, f"{prefix}{key}." if isinstance(sub, dict) else f"{prefix}{key}")
        return out
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return [(prefix.rstrip("."), ", ".join(str(v) for v in value))]
        return [row for i, v in enumerate(value) for row in _flatten(v, f"{prefix}[{i}].")]
    return [(prefix.rstrip("."), str(value))] if prefix else []


def markdown_lite(text: str) -> Markup:
    """``changes.md`` as HTML: headings, bullet lists and paragraphs, everything escaped.

    >>> str(markdown_lite("# Changes\\n\\n- <a>\\n- b\\n\\nDone."))
    '<h3>Changes</h3>\\n<ul>\\n<li>&lt;a&gt;</li>\\n<li>b</li>\\n</ul>\\n<p>Done.</p>'
    """
    out: list[str] = []
    in_list = False
    for line in text.splitlines():
        item = line.startswith(("- ", "* "))
        if in_list and not item:
            out.append("</ul>")
            in_list = False
        if not line.strip():
            continue
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)
            out.append(f"<h{level}>{escape(line.lstrip('#').strip())}</h{level}>")
        elif item:
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{escape(line[2:].strip())}</li>")
        else:
            out.append(f"<p>{escape(line.strip())}</p>")
    if in_list:
        out.append("</ul>")
    return Markup("\n".join(out))
