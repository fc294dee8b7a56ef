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
    assert tab.locator("svg.timeline circle").count() == site.releases + site.dumps
    tab.goto(url(site, "run.html"))
    assert tab.locator("svg.chart").count() == 2
    assert tab.locator("svg.chart").first.bounding_box()["width"] > 300
    bars = tab.locator("svg.chart").first.locator("rect")
    assert bars.count() == site.releases
