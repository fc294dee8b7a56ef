"""``run.html``: the run report for whoever runs the job, from ``run.json``,
``sources.csv`` and ``changes.md``, with SVG charts of rules and changes per release."""

from __future__ import annotations

from collections import Counter
from typing import Any

from markupsafe import Markup, escape

from pipeline.site.changes import KINDS
from pipeline.site.chart import Bar, bar_chart, legend
from pipeline.site.index import SiteIndex
from pipeline.site.urls import changes_file, label, release_file


def run_context(pages: SiteIndex) -> dict[str, Any]:
    """The run report's template context."""
    run = pages.ds.run
    rules_bars = [Bar(s.effective_date, label(s),
                      (sum(1 for it in pages.ds.items.get(s.source_id, []) if it.kind == "rule"),))
                  for s in pages.releases]
    change_rows, change_bars = [], []
    for new_id, (_, changes) in pages.changes.items():
        src = pages.ds.source(new_id)
        assert src is not None
        counts = Counter(c.kind for c in changes)
        change_rows.append({"label": label(src), "href": changes_file(new_id),
                            "counts": [counts[k] for k in KINDS]})
        change_bars.append(Bar(src.effective_date, label(src), tuple(counts[k] for k in KINDS)))
    columns = ["source_id", "format", "effective_date", "era", "status", "error", "suspect", "flags"]
    sources = [{"cells": [s.row.get(c, "") for c in columns], "page": release_file(s.source_id),
                "status_class": "bad" if s.status != "ok" else ""} for s in pages.ds.sources]
    names, checks, failed = self_checks(run)
    return dict(
        run=run,
        status_class="ok" if run.get("status") == "ok" else "bad",
        reference_page=release_file(pages.reference) if pages.reference else "",
        quarantined=sum(1 for s in pages.ds.sources if s.status != "ok"),
        source_columns=columns, sources=sources, changes_md=markdown_lite(pages.ds.changes_md),
        problems=[row for row, s in zip(sources, pages.ds.sources, strict=True)
                  if s.status != "ok" or s.row.get("error") or s.row.get("flags") or s.source_id in failed],
        run_problems=[", ".join(f"{k}: {v}" for k, v in _flatten(p)) if isinstance(p, dict | list) else str(p)
                      for p in run.get("problems", [])],
        check_names=names, check_rows=checks,
        failed_checks=[{"source_id": sid, "page": release_file(sid), "name": name, "detail": detail}
                       for sid, bad in failed.items() for name, detail in bad],
        rules_chart=bar_chart(rules_bars, ("rules",), "Rules per release",
                              "Number of numbered rules in each release, one bar per release in date order."),
        rules_bars=rules_bars,
        changes_chart=bar_chart(change_bars, KINDS, "Changes per release",
                                "Rules added, removed, renumbered, reworded, both, split off and merged in each "
                                "release against the one before, one bar per release in date order."),
        changes_legend=legend(KINDS), change_kinds=KINDS, change_rows=change_rows,
        stages=_flatten(run.get("stages", {})),
        outputs=[o for o in run.get("outputs", []) if isinstance(o, dict)],
        seconds=_flatten(run.get("seconds", {})),
    )


def self_checks(run: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], dict[str, list[tuple[str, str]]]]:
    """The self-checks of every input in ``run.json``: their names, one row per source
    (a (passed, detail) cell per name, None where the source had no such check), and per
    source the (name, detail) of the checks that failed.

    >>> self_checks({"inputs": [{"source_id": "a", "checks": {"order": {"passed": False, "detail": "2 late"}}}]})
    (['order'], [{'source_id': 'a', 'cells': [(False, '2 late')]}], {'a': [('order', '2 late')]})
    """
    found: list[tuple[str, dict[str, tuple[bool, str]]]] = []
    for item in run.get("inputs", []):
        checks = item.get("checks") if isinstance(item, dict) else None
        if isinstance(checks, dict):
            found.append((str(item.get("source_id", "")), {
                name: (bool(c.get("passed")), str(c.get("detail", ""))) if isinstance(c, dict) else (bool(c), "")
                for name, c in checks.items()}))
    names = list(dict.fromkeys(name for _, checks in found for name in checks))
    rows = [{"source_id": sid, "cells": [checks.get(name) for name in names]} for sid, checks in found]
    failed = {sid: bad for sid, checks in found
              if (bad := [(name, detail) for name, (passed, detail) in checks.items() if not passed])}
    return names, rows, failed


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


def markdown_lite(text: str, fold_after: int = 12) -> Markup:
    """``changes.md`` as HTML: headings, bullet lists and paragraphs, everything escaped;
    a list longer than ``fold_after`` items is folded into a ``<details>``.

    >>> str(markdown_lite("# Changes\\n\\n- <a>\\n- b\\n\\nDone."))
    '<h3>Changes</h3>\\n<ul><li>&lt;a&gt;</li><li>b</li></ul>\\n<p>Done.</p>'
    >>> str(markdown_lite("- a\\n- b\\n- c", fold_after=2))
    '<details><summary>3 items</summary><ul><li>a</li><li>b</li><li>c</li></ul></details>'
    """
    out: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if items:
            body = "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"
            out.append(f"<details><summary>{len(items)} items</summary>{body}</details>"
                       if len(items) > fold_after else body)
            items.clear()

    for line in text.splitlines():
        if line.startswith(("- ", "* ")):
            items.append(line[2:].strip())
            continue
        flush()
        if not line.strip():
            continue
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)
            out.append(f"<h{level}>{escape(line.lstrip('#').strip())}</h{level}>")
        else:
            out.append(f"<p>{escape(line.strip())}</p>")
    flush()
    return Markup("\n".join(out))
