"""Static SVG charts on a time axis: stacked bars, one per dated release.

No script and no library: the chart is markup, readable without JavaScript,
with a title per bar (the browser shows it on hover) and a text description
for screen readers. The pages put the same numbers in a table beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from markupsafe import Markup, escape


@dataclass(frozen=True, slots=True)
class Bar:
    when: str  # ISO date
    label: str
    values: tuple[int, ...]  # one per series, stacked bottom up
    href: str = ""


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


def _year_fraction(iso: str) -> float:
    d = date.fromisoformat(iso)
    start = date(d.year, 1, 1)
    return d.year + (d - start).days / 365.25


def bar_chart(
    bars: list[Bar], series: tuple[str, ...], title: str, description: str, *,
    first_year: int, last_year: int, width: int = 760, height: int = 260,
) -> Markup:
    """Stacked bars at their dates between ``first_year`` and ``last_year`` inclusive.

    >>> svg = bar_chart([Bar("2004-10-01", "x", (3, 1))], ("a", "b"), "T", "D", first_year=2004, last_year=2005)
    >>> svg.count("<rect"), "<title>x: a 3, b 1</title>" in svg
    (2, True)
    """
    left, right, top, bottom = 56, 12, 16, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    span = max(last_year + 1 - first_year, 1)
    peak = max((sum(b.values) for b in bars), default=0)
    step = nice_step(peak)
    y_max = max(step * -(-peak // step), step)

    def x(year: float) -> float:
        return left + (year - first_year) / span * plot_w

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
    every = 1 if span <= 12 else 2 if span <= 30 else 5
    for year in range(first_year, last_year + 1):
        out.append(f'<line class="axis" x1="{x(year):.1f}" x2="{x(year):.1f}" y1="{top + plot_h}" '
                   f'y2="{top + plot_h + 4}"/>')
        if (year - first_year) % every == 0:
            out.append(f'<text class="tick" x="{x(year):.1f}" y="{height - 14}" text-anchor="middle">{year}</text>')
    out.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>')
    bar_w = max(min(plot_w / span * 0.6, 14), 3)
    for bar in bars:
        cx, base = x(_year_fraction(bar.when)), 0
        parts = ", ".join(f"{name} {value}" for name, value in zip(series, bar.values, strict=True))
        rects = []
        for i, value in enumerate(bar.values):
            if value:
                rects.append(f'<rect class="s{i}" x="{cx - bar_w / 2:.1f}" y="{y(base + value):.1f}" '
                             f'width="{bar_w:.1f}" height="{y(base) - y(base + value):.1f}"/>')
            base += value
        group = f"<g><title>{escape(bar.label)}: {escape(parts)}</title>{''.join(rects)}</g>"
        out.append(f'<a href="{escape(bar.href)}">{group}</a>' if bar.href else group)
    out.append("</svg>")
    return Markup("".join(out))


def legend(series: tuple[str, ...]) -> Markup:
    """The colour key of a chart's series, as a list."""
    items = "".join(f'<li><span class="swatch s{i}"></span>{escape(name)}</li>' for i, name in enumerate(series))
    return Markup(f'<ul class="legend">{items}</ul>')


@dataclass(frozen=True, slots=True)
class Mark:
    when: str  # ISO date
    label: str
    href: str
    row: int = 0  # 0: releases, 1: other copies
    current: bool = False


def timeline(marks: list[Mark], title: str, *, first_year: int, last_year: int, width: int = 760) -> Markup:
    """Releases as linked marks on a line of years; other copies on a second line.

    >>> svg = timeline([Mark("2004-10-01", "CR 2004", "a.html")], "T", first_year=2004, last_year=2005)
    >>> '<a href="a.html"' in svg and "<title>CR 2004</title>" in svg
    True
    """
    left, right = 20, 20
    rows = 1 + max((m.row for m in marks), default=0)
    height = 40 + 28 * rows
    plot_w = width - left - right
    span = max(last_year + 1 - first_year, 1)

    def x(year: float) -> float:
        return left + (year - first_year) / span * plot_w

    out = [
        f'<svg class="timeline" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
    ]
    base = 12 + 28 * rows
    out.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{base}" y2="{base}"/>')
    every = 1 if span <= 12 else 2 if span <= 30 else 5
    for year in range(first_year, last_year + 1):
        out.append(f'<line class="axis" x1="{x(year):.1f}" x2="{x(year):.1f}" y1="{base}" y2="{base + 4}"/>')
        if (year - first_year) % every == 0:
            out.append(f'<text class="tick" x="{x(year):.1f}" y="{base + 18}" text-anchor="middle">{year}</text>')
    for m in marks:
        cx, cy = x(_year_fraction(m.when)), 12 + 28 * (rows - 1 - m.row) + 8
        cls = "mark current" if m.current else "mark" if m.row == 0 else "mark dump"
        out.append(f'<a href="{escape(m.href)}"><title>{escape(m.label)}</title>'
                   f'<circle class="{cls}" cx="{cx:.1f}" cy="{cy}" r="{7 if m.current else 5}"/></a>')
    out.append("</svg>")
    return Markup("".join(out))
