"""The generated site in a real headless browser: Debian's Chromium driven by Playwright
over file:// URLs, as someone would open the folder.

Marked slow: ``make check`` runs them, and installs Chromium first when it is missing (as
root); without it these tests skip locally and fail under CI, so CI never passes without
running them.
Screenshots go to ``SITE_SCREENSHOTS`` or a temp folder; ``SITE_SCREENSHOTS=docs`` refreshes
the README's.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.run import Corpus
from pipeline.site.build import SiteResult
from pipeline.site.changes import KINDS, compare, presence
from pipeline.site.data import load

# A browser and a site: for ``make check`` (``make test`` leaves them out).
pytestmark = pytest.mark.slow

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} not installed (make check installs it: apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            viewport={"width": 960, "height": 640},
        )
        context.set_default_timeout(90_000)  # the machine may be shared and busy
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any script error or console error."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    page.close()
    assert errors == []


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("SITE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def url(site: SiteResult, rel: str) -> str:
    return (site.dest / rel).resolve().as_uri() if "?" not in rel and "#" not in rel else (
        (site.dest / re.split(r"[?#]", rel)[0]).resolve().as_uri() + rel[len(re.split(r"[?#]", rel)[0]):])


def in_view(tab: Any, selector: str) -> bool:
    return bool(tab.eval_on_selector(
        selector, "e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }"))


def test_cross_reference_in_an_old_release_lands_on_its_anchor(site: SiteResult, tab: Any, shots: Path) -> None:
    tab.goto(url(site, "release/cr-2004-10-01.html#R5025b"))
    rule = tab.locator("#R5025b")
    assert rule.inner_text().startswith("502.5b A creature with haste")
    rule.locator("a.xref", has_text="212.3d").click()
    tab.wait_for_url("**/release/cr-2004-10-01.html#R2123d")
    assert in_view(tab, "#R2123d")
    assert tab.eval_on_selector("#R2123d", "e => e.matches(':target')")
    assert tab.locator("#R2123d").inner_text().startswith("212.3d A creature's activated ability")
    tab.screenshot(path=str(shots / "site-release-2004.png"))


def test_rule_number_opens_its_lineage(site: SiteResult, tab: Any, shots: Path) -> None:
    tab.goto(url(site, "release/cr-2011-06-17.html#R70287a"))
    tab.locator("#R70287a a.num").click()
    tab.wait_for_url("**/lineage/702.89a.html")
    assert tab.locator("h1").inner_text() == "Rule 702.89a"
    numbers = list(dict.fromkeys(tab.locator("ol.versions a.num").all_inner_texts()))
    wanted = ["702.87a", "702.88a", "702.89a"]
    assert [n for n in numbers if n in wanted] == wanted
    renamed = tab.locator("ol.versions li.edited", has=tab.locator("del", has_text="Totem"))
    assert renamed.locator(".change").text_content() == "edited"
    assert renamed.locator("del").first.inner_text() == "Totem"
    assert renamed.locator("ins").first.inner_text() == "Umbra"
    tab.screenshot(path=str(shots / "site-lineage.png"))
    # and back from a version to its place in that release
    moved = tab.locator("ol.versions li.moved", has=tab.locator("a.num", has_text="702.88a")).first
    release = moved.locator("p.vhead > a").first.get_attribute("href")
    moved.locator("a.num").click()
    tab.wait_for_url("**" + release.removeprefix("..") + "#R70288a")
    assert in_view(tab, "#R70288a")


def test_entwine_lineage_from_2003(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "release/cr-2003-10-01.html#R50232a"))
    tab.locator("#R50232a a.num").click()
    tab.wait_for_url("**/lineage/702.42a.html")
    assert tab.locator("h1").inner_text() == "Rule 702.42a"
    assert tab.locator("dl.facts dd").first.inner_text() == "502.32a → 702.39a → 702.40a → 702.41a → 702.42a"


def test_search_finds_an_old_name_and_an_old_number(site: SiteResult, tab: Any, shots: Path) -> None:
    tab.goto(url(site, "index.html"))
    tab.fill("#q-main", "totem armor")
    tab.press("#q-main", "Enter")
    tab.wait_for_url("**/search.html?q=totem+armor")
    tab.wait_for_selector("#results li")
    assert "search.html?q=totem+armor" in tab.url
    hits = tab.locator("#results li > a")
    assert "702.89a" in hits.all_inner_texts()
    tab.screenshot(path=str(shots / "site-search.png"))
    tab.fill("#q", "702.87a")  # Totem armor's number in 2011 (and other rules' since): found by lineage
    tab.wait_for_function("document.querySelector('#results li > a')?.textContent === '702.87a'")
    umbra = tab.locator("#results li", has=tab.locator("a", has_text="702.89a"))
    spans = umbra.locator(".numbers").inner_text()
    assert re.search(r"702\.87a 2011–\d{4}, 702\.88a \d{4}–\d{4}, 702\.89a 2021–2026$", spans), spans
    umbra.locator("a").click()
    tab.wait_for_url("**/lineage/702.89a.html")


def test_compare_any_two_matches_the_change_pages(site: SiteResult, bundled: tuple[Corpus, Path], tab: Any) -> None:
    changes = sorted((site.dest / "changes").glob("*.html"))
    assert len(changes) == site.releases - 1
    for path in changes:
        text = path.read_text(encoding="utf-8")
        table = text[text.index('<table class="counts">'):text.index("</table>")]
        expected = dict(zip(re.findall(r'<th scope="col">([a-z+]+)</th>', table),
                            re.findall(r"<td>(\d+)</td>", table), strict=True))
        old = re.search(r'From <a href="\.\./release/([^"]+)\.html"', text)
        assert old is not None
        tab.goto(url(site, f"compare.html?a={old.group(1)}&b={path.stem}"))
        tab.wait_for_function(f"document.body.dataset.compared === '{old.group(1)}..{path.stem}'")
        got = dict(zip(tab.locator("#compare-counts th").all_inner_texts(),
                       tab.locator("#compare-counts td").all_inner_texts(), strict=True))
        assert got == expected, path.stem
    # any two, not neighbours, and a copy: the same as the Python side (and so the diff command)
    ds = load(bundled[1])
    dump = next(s.source_id for s in ds.sources if not s.official and s.numbering_like)
    for a, b in (("cr-1999-11-01", "cr-2026-08-07"), (dump, "cr-2026-08-07"), ("cr-2013-05-01", dump)):
        tab.goto(url(site, f"compare.html?a={a}&b={b}"))
        tab.wait_for_function(f"document.body.dataset.compared === '{a}..{b}'")
        got = dict(zip(tab.locator("#compare-counts th").all_inner_texts(),
                       map(int, tab.locator("#compare-counts td").all_inner_texts()), strict=True))
        kinds = Counter(c.kind for c in compare(ds, a, b, presence(ds)))
        assert got == {k: kinds[k] for k in KINDS}, (a, b)
    # Totem armor 702.87a became Umbra armor 702.89a
    tab.goto(url(site, "compare.html?a=cr-2013-05-01&b=cr-2024-09-20"))
    tab.wait_for_function("document.body.dataset.compared === 'cr-2013-05-01..cr-2024-09-20'")
    umbra = tab.locator("#compare-results li", has=tab.locator('a.history[href="lineage/702.89a.html"]'))
    assert umbra.locator(".kind").text_content() == "moved+edited"
    assert umbra.locator("a.num").all_inner_texts() == ["702.87a", "702.89a"]


def test_index_and_run_report_render(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "index.html"))
    assert tab.locator("ol.timeline a.mark").count() == site.releases + site.dumps
    tab.goto(url(site, "run.html"))
    assert tab.locator("svg.chart").count() == 2
    assert tab.locator("svg.chart").first.bounding_box()["width"] > 300
    bars = tab.locator("svg.chart").first.locator("rect")
    assert bars.count() == site.releases


# -- issue 43: what a reader sees first, on a phone, with a screen reader ---------------------

AXE_PAGES = {  # every kind of page the site has, each with what its script shows
    "index": "index.html",
    "release": "release/001_a2791e0f90a089aa.html",  # a truncated copy: its warning, its opening, glossary links
    "dump": "release/000_eb8496d4591d3274.html",
    "lineage": "lineage/702.42a.html",
    "ended lineage": "",  # filled in below: the page of a lineage that ended
    "changes": "changes/cr-2026-08-07.html",
    "compare": "compare.html?a=cr-2024-09-20&b=cr-2026-08-07",
    "run report": "run.html",
    "search": "search.html?q=entwine",
}


def settle(tab: Any, site: SiteResult, rel: str) -> None:
    """Open ``rel`` and wait for what its script draws."""
    tab.goto(url(site, rel))
    if rel.startswith("compare.html?"):
        tab.wait_for_function("document.body.dataset.compared !== undefined")
    if rel.startswith("search.html?"):
        tab.wait_for_function("document.body.dataset.searched !== undefined")


def ended_lineage(site: SiteResult) -> str:
    for path in sorted((site.dest / "lineage").glob("*.html")):
        if "(ended)</h1>" in path.read_text(encoding="utf-8"):
            return f"lineage/{path.name}"
    raise AssertionError("no ended lineage")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("kind", list(AXE_PAGES))
def test_axe_finds_nothing_on_any_kind_of_page(site: SiteResult, tab: Any, kind: str, scheme: str) -> None:
    """axe-core (the copy axe-playwright-python ships) on each kind of page, in light and dark
    colours: no link inside an SVG image, no two unnamed search landmarks, <mark> at 4.5:1
    in the dark. A whole release (3,000 rules) takes axe minutes: the copy stands for it. No
    preload: axe would fetch the style sheets, which file:// refuses (a console error)."""
    from axe_playwright_python.base import AXE_SCRIPT

    rel = AXE_PAGES[kind] or ended_lineage(site)
    tab.emulate_media(color_scheme=scheme)
    settle(tab, site, rel)
    tab.evaluate(AXE_SCRIPT)
    result = tab.evaluate("axe.run(document, {resultTypes: ['violations'], preload: false})")
    found = [(v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["html"][:160]) for v in result["violations"]]
    assert found == [], rel
    assert result["testEngine"]["version"].startswith("4.")


def contrast(a: str, b: str) -> float:
    """WCAG contrast of two computed CSS colours (``rgb(r, g, b)``)."""
    def lum(css: str) -> float:
        r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in (r, g, b)]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_focus_ring_and_marks_stand_out(site: SiteResult, tab: Any, scheme: str) -> None:
    tab.emulate_media(color_scheme=scheme)
    tab.goto(url(site, "search.html?q=entwine"))
    tab.wait_for_function("document.body.dataset.searched === 'entwine'")
    background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
    tab.keyboard.press("Tab")  # the skip link, then the site's first link
    tab.keyboard.press("Tab")
    ring = tab.evaluate("(() => { const s = getComputedStyle(document.activeElement); "
                        "return [s.outlineStyle, s.outlineWidth, s.outlineColor]; })()")
    assert ring[0] == "solid" and float(ring[1].removesuffix("px")) >= 2
    assert contrast(ring[2], background) >= 3, (scheme, ring, background)
    mark = tab.locator("#results mark").first
    colours = mark.evaluate("m => [getComputedStyle(m).color, getComputedStyle(m).backgroundColor]")
    assert contrast(*colours) >= 4.5, (scheme, colours)


NARROW = ["index.html", "changes/cr-2026-08-07.html", "run.html", "release/cr-1999-11-01.html",
          "lineage/702.42a.html", "search.html?q=702.42", "compare.html?a=cr-1999-11-01&b=cr-2026-08-07",
          "release/001_a2791e0f90a089aa.html"]


@pytest.mark.parametrize("rel", NARROW)
def test_nothing_scrolls_sideways_at_400_px(site: SiteResult, tab: Any, rel: str) -> None:
    tab.set_viewport_size({"width": 400, "height": 800})
    settle(tab, site, rel)
    assert tab.evaluate("document.documentElement.scrollWidth") <= 400, rel
    if rel == "index.html":  # the timeline's marks are tap targets of 24 x 24 px at least, apart
        boxes = [tab.locator("ol.timeline a.mark").nth(i).bounding_box()
                 for i in range(tab.locator("ol.timeline a.mark").count())]
        assert len(boxes) == site.releases + site.dumps
        assert all(b["width"] >= 24 and b["height"] >= 24 and b["x"] + b["width"] <= 400 for b in boxes)
        spots = {(round(b["x"]), round(b["y"])) for b in boxes}
        assert len(spots) == len(boxes)  # none on top of another
        tab.screenshot(path=str(Path(tempfile.gettempdir()) / "site-index-400.png"))


def test_a_release_opens_with_rule_100_1(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "release/cr-2026-08-07.html"))
    top = tab.eval_on_selector("#R1001", "e => e.getBoundingClientRect().top + window.scrollY")
    assert top < 1200, top  # 7,182 px down before the CR's own contents were folded
    assert not tab.locator("details.front").get_attribute("open")
    tab.locator("details.front summary").click()  # and its contents lead to the sections
    tab.locator("details.front a", has_text="702. Keyword Abilities").click()
    tab.wait_for_url("**/release/cr-2026-08-07.html#R702")
    assert in_view(tab, "#R702")


def test_a_lineage_page_opens_with_the_wording(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "lineage/702.89a.html"))
    now = tab.locator("section.now")
    assert in_view(tab, "section.now")
    assert now.locator("h2").inner_text() == "Current wording, 702.89a in CR 2026-08-07"
    assert now.locator("p.now-text").inner_text().startswith("Umbra armor is a static ability")


def test_the_run_reports_bars_never_overlap(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "run.html"))
    for chart in range(2):
        bars = tab.locator("svg.chart").nth(chart).locator("g").evaluate_all(
            "gs => gs.map(g => { const r = g.getBoundingClientRect(); return [r.left, r.right, "
            "g.querySelector('title').textContent]; })")
        assert len(bars) == site.releases - chart  # the changes chart starts at the second release
        assert all(a[1] <= b[0] for a, b in zip(bars, bars[1:], strict=False)), "bars overlap"
    labels = [t for _, _, t in bars]
    close = [t for t in labels if t.startswith(("CR 2009-07-11", "CR 2009-09-04"))]
    assert len(close) == 2  # a week apart, two bars
    legend = tab.locator("ul.legend li").all_inner_texts()
    assert legend == list(KINDS)
    for i in range(len(KINDS)):  # each kind's colour is drawn where the table counts it
        assert tab.locator(f"svg.chart rect.s{i}").count() > 0 or KINDS[i] in ("merged", "split")


def test_search_ranks_current_and_exact_first_and_keeps_the_query(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "index.html"))
    tab.fill("#q-main", "702.42")
    tab.press("#q-main", "Enter")
    tab.wait_for_function("document.body.dataset.searched === '702.42'")
    first = tab.locator("#results li > a").all_inner_texts()[:3]
    assert first == ["702.42 Entwine", "702.42a", "702.42b"], first  # 2026's Entwine, not 2011's Bushido
    tab.fill("#q", "CR 702.42a")
    tab.press("#q", "Enter")
    tab.wait_for_function("document.body.dataset.searched === 'CR 702.42a'")
    assert "q=CR+702.42a" in tab.url
    assert tab.locator("#results li > a").first.inner_text() == "702.42a"
    tab.go_back()  # the earlier search comes back, query and results
    tab.wait_for_function("document.body.dataset.searched === '702.42'")
    assert tab.input_value("#q") == "702.42" and "q=702.42" in tab.url
    tab.go_forward()
    tab.wait_for_function("document.body.dataset.searched === 'CR 702.42a'")
    assert tab.input_value("#q") == "CR 702.42a"
    # "rule 502.32a", as resolve reads it: 2003's Entwine, now 702.42a, first
    tab.fill("#q", "rule 502.32a")
    tab.wait_for_function("document.body.dataset.searched === 'rule 502.32a'")
    assert tab.locator("#results li > a").first.inner_text() == "702.42a"
    # a glossary entry whose releases wrote ' and ’ is listed once
    tab.fill("#q", "attacks and isn't blocked")
    tab.wait_for_function("document.body.dataset.searched === \"attacks and isn't blocked\"")
    glossary = tab.locator("#results li", has=tab.locator(".kind", has_text="glossary"))
    assert [t.lower().replace("’", "'") for t in glossary.locator("> a").all_inner_texts()].count(
        "attacks and isn't blocked") == 1


def test_rule_text_links_its_glossary_terms(site: SiteResult, tab: Any) -> None:
    tab.goto(url(site, "release/cr-2026-08-07.html#R1011"))
    term = tab.locator("#R1011 a.term").first
    href = term.get_attribute("href")
    assert href.startswith("#G-")
    term.click()
    tab.wait_for_url("**" + href)
    assert in_view(tab, href) and tab.eval_on_selector(href, "e => e.matches(':target')")
