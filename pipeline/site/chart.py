"""Static charts: stacked bars, one per release, and the releases' timeline.

No script and no library: the bar chart is SVG markup, readable without
JavaScript, with a title per bar (the browser shows it on hover) and a text
description for screen readers; the pages put the same numbers, linked, in a
table beside it. Its x axis is a band per release, in date order, not a time
scale: releases weeks apart (2009-07-11 and 2009-09-04) each keep a bar of their
own, and no bar can cover another. The timeline is HTML, not SVG: a link per
release, each a tap target of at least 24 by 24 pixels, under its year; the
years wrap as the page narrows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from markupsafe import Markup, escape


@dataclass(frozen=True, slots=True)
class Bar:
    when: str  # ISO date
    label: str
    values: tuple[int, ...]  # one per series, stacked bottom up


def nice_step(top: int, ticks: int = 5) -> int:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks.

    >>> nice_step(9400), nice_step(7), nice_step(0)
    (2000, 2, 1)
    """
    rough = max(top, 1) / ticks
    power = 1
    while power * 10 <= rough:
        power *= 10
    for mult in (1, 2, 5, 10):
        if power * mult >= rough:
            return power * mult
    return power * 10


def bands(count: int, left: float, width: float, fill: float = 0.7) -> list[tuple[float, float]]:
    """(x, width) of ``count`` bars, each centred in its own equal band: never overlapping.

    >>> bands(2, 0, 100)
    [(7.5, 35.0), (57.5, 35.0)]
    """
    band = width / max(count, 1)
    return [(round(left + band * i + band * (1 - fill) / 2, 2), round(band * fill, 2)) for i in range(count)]


def bar_chart(bars: list[Bar], series: tuple[str, ...], title: str, description: str, *,
              width: int = 760, height: int = 260) -> Markup:
    """Stacked bars, one band each, in the order given (date order), with the year
    under the first bar of each year.

    >>> svg = bar_chart([Bar("2004-10-01", "x", (3, 1))], ("a", "b"), "T", "D")
    >>> svg.count("<rect"), "<title>x: a 3, b 1</title>" in svg, "<a " in svg
    (2, True, False)
    """
    left, right, top, bottom = 56, 12, 16, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max((sum(b.values) for b in bars), default=0)
    step = nice_step(peak)
    y_max = max(step * -(-peak // step), step)

    def y(value: float) -> float:
        return top + plot_h - value / y_max * plot_h

    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>",
    ]
    for value in range(0, y_max + 1, step):
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}"/>')
        out.append(f'<text class="tick" x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value}</text>')
    out.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>')
    placed = bands(len(bars), left, plot_w)
    for (x, w), bar in zip(placed, bars, strict=True):
        base = 0
        parts = ", ".join(f"{name} {value}" for name, value in zip(series, bar.values, strict=True))
        rects = []
        for i, value in enumerate(bar.values):
            if value:
                rects.append(f'<rect class="s{i}" x="{x:.1f}" y="{y(base + value):.1f}" '
                             f'width="{w:.1f}" height="{y(base) - y(base + value):.1f}"/>')
            base += value
        out.append(f"<g><title>{escape(bar.label)}: {escape(parts)}</title>{''.join(rects)}</g>")
    # A tick under the first bar of each year; its label only where it cannot touch the last one.
    labelled = -1e9
    for i, ((x, w), bar) in enumerate(zip(placed, bars, strict=True)):
        if i and bar.when[:4] == bars[i - 1].when[:4]:
            continue
        mid = x + w / 2
        out.append(f'<line class="axis" x1="{mid:.1f}" x2="{mid:.1f}" y1="{top + plot_h}" y2="{top + plot_h + 4}"/>')
        if mid - labelled >= 36:
            out.append(f'<text class="tick" x="{mid:.1f}" y="{height - 14}" text-anchor="middle">'
                       f"{escape(bar.when[:4])}</text>")
            labelled = mid
    out.append("</svg>")
    return Markup("".join(out))


def legend(series: tuple[str, ...]) -> Markup:
    """The colour key of a chart's series, as a list: every series, none left out."""
    items = "".join(f'<li><span class="swatch s{i}"></span>{escape(name)}</li>' for i, name in enumerate(series))
    return Markup(f'<ul class="legend">{items}</ul>')


@dataclass(frozen=True, slots=True)
class Mark:
    when: str  # ISO date
    label: str
    href: str
    row: int = 0  # 0: releases, 1: other copies
    current: bool = False


def timeline(marks: list[Mark], title: str) -> Markup:
    """Releases as links under their year, in date order; other copies marked apart.

    >>> html = timeline([Mark("2004-10-01", "CR 2004", "a.html")], "T")
    >>> '<a class="mark" href="a.html" title="CR 2004" aria-label="CR 2004">' in html
    True
    """
    years = []
    for year, found in groupby(sorted(marks, key=lambda m: (m.when, m.row)), key=lambda m: m.when[:4]):
        links = "".join(
            f'<li><a class="{"mark current" if m.current else "mark" if m.row == 0 else "mark dump"}" '
            f'href="{escape(m.href)}" title="{escape(m.label)}" aria-label="{escape(m.label)}"></a></li>'
            for m in found)
        years.append(f'<li><span class="year">{escape(year)}</span><ul>{links}</ul></li>')
    return Markup(f'<ol class="timeline" aria-label="{escape(title)}">{"".join(years)}</ol>')
