"""What each kind of page shows first and links, on the small site (two releases and a
dump): a release page opens with its rules, a lineage page with the rule's wording, a
truncated copy with a warning; rule text links glossary terms; the charts' bars never
overlap and name every change kind; every page carries the data notice."""

from __future__ import annotations

import html
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.publish.notice import FAN_CONTENT_POLICY, NOTICE
from pipeline.site.build import SiteResult
from pipeline.site.changes import KINDS
from pipeline.site.chart import Bar, bands, bar_chart
from pipeline.site.data import Source, load
from pipeline.site.html import Terms, linkify
from pipeline.site.index import SiteIndex
from pipeline.site.pages import warnings
from pipeline.site.report import run_context
from tests.conftest import examples
from tests.site.sitecheck import broken_links


def page(site: SiteResult, rel: str) -> str:
    return (site.dest / rel).read_text(encoding="utf-8")


def test_a_release_page_opens_with_its_rules(small_site: SiteResult) -> None:
    text = page(small_site, "release/cr-2004-10-01.html")
    body = text[text.index('<article class="rules">'):]
    before = body[:body.index('id="R1001"')]
    # The document's own opening (88 paragraphs in 2004, 164 today) is folded: nothing of it
    # stands between the page's head and rule 100.1 but a closed <details>.
    opening = before[before.index('<details class="front">'):before.index("</details>")]
    assert opening.count('<p class="front-matter">') > 50
    assert "<details" not in opening[1:] and " open" not in opening[:40]
    assert '<p class="front-matter">' not in before.replace(opening, "")
    # and its list of contents links each chapter and section to the page's own anchor
    assert '<p class="front-matter"><a href="#R100">100. General</a></p>' in opening
    assert '<p class="front-matter"><a href="#R1">1. The Game</a></p>' in opening


def test_a_lineage_page_starts_with_the_wording(small_site: SiteResult, small_out: Path) -> None:
    ds = load(small_out)
    current = next(lin for lin in ds.lineages.values() if lin.canonical == "502.32a")
    text = page(small_site, "lineage/502.32a.html")
    now = text[text.index('<section class="now"'):text.index("</section>")]
    assert text.index('<section class="now"') < text.index('<ol class="versions">')
    assert "Current wording, " in now and ">502.32a in CR 2004-10-01</a>" in now
    shown = html.unescape(re.sub(r"<[^>]+>", "", now[now.index('<p class="now-text">'):])).strip()
    official = {s.source_id for s in ds.releases}
    wording = [v for v in current.versions if v.number and v.source_id in official][-1]
    assert wording.source_id == "cr-2004-10-01"  # the release's wording, not the later copy's
    assert shown == wording.text and shown.startswith("Entwine is a static ability")
    # A lineage that ended shows its last wording, said to be the last.
    ended = next(lin for lin in ds.lineages.values() if lin.ended)
    last = [v for v in ended.versions if v.number][-1]
    gone = page(small_site, SiteIndex(ds).lineage_file(ended.key))
    now = gone[gone.index('<section class="now"'):gone.index("</section>")]
    assert "Last wording, " in now
    assert html.unescape(re.sub(r"<[^>]+>", "", now[now.index('<p class="now-text">'):])).strip() == last.text


def test_rule_text_links_glossary_terms_once_each(small_site: SiteResult) -> None:
    text = page(small_site, "release/cr-2004-10-01.html")
    ids = set(re.findall(r'\sid="([^"]+)"', text))
    rules = re.findall(r'<p class="rule" id="[^"]+">.*?</p>', text)
    linked = [re.findall(r'<a class="term" href="#([^"]+)">([^<]+)</a>', rule) for rule in rules]
    assert sum(map(len, linked)) > 500
    for rule, found in zip(rules, linked, strict=True):
        hrefs = [href for href, _ in found]
        assert len(hrefs) == len(set(hrefs)), rule  # the first occurrence of each term only
        assert set(hrefs) <= ids
        assert not re.search(r"<a [^>]*>[^<]*<a ", rule), rule  # never a link inside a link
    # 101.1 links "player" at its first whole-word occurrence only ("players'" is another word);
    # 100.1 links nothing inside its web address ("default.asp?x=magic")
    first = next(r for r in rules if 'id="R1011"' in r)
    assert first.count('href="#G-player">') == 1 and "each <a class=\"term\" href=\"#G-player\">player</a>" in first
    assert 'class="term"' not in next(r for r in rules if 'id="R1001"' in r)


def test_terms_match_whole_words_and_not_inside_links() -> None:
    terms = Terms([("Tap", "#G-tap"), ("Player", "#G-player"), ("Active Player", "#G-ap"),
                   ("Assassin's Trick", "#G-at")])
    assert terms.spans("Tapped permanents untap.") == []
    assert terms.spans("TAP it, then tap it.") == [(0, 3, "#G-tap")]
    assert terms.spans("the active player and each player") == [(4, 17, "#G-ap"), (27, 33, "#G-player")]
    assert terms.spans("an Assassin’s  Trick") == [(3, 20, "#G-at")]  # quote style and spacing folded
    assert terms.spans("see www.example.com/tap?player=1 or mail tap@example.com") == []
    out = str(linkify("see rule 101.1 player", [("101.1", "101.1", "")], lambda t, c: "#R1011",
                      Terms([("rule 101.1 player", "#G-x"), ("player", "#G-p")])))
    # a term across a cross-reference is not linked: a link is never made inside another
    assert out == 'see rule <a class="xref" href="#R1011">101.1</a> player'


def _source(**row: str) -> Source:
    base = {"source_id": "x", "format": "cr_numbered", "effective_date": "", "era": "", "status": "ok",
            "flags": "", "suspect": "", "error": ""}
    base.update(row)
    return Source(base["source_id"], base["format"], base["effective_date"], base["era"], base["status"], "", base)


def test_warnings_of_a_truncated_suspect_or_quarantined_source() -> None:
    assert warnings(_source()) == []
    assert warnings(_source(flags="number_repaired")) == []
    (cut,) = warnings(_source(flags="words_split;truncated"))
    assert cut.startswith("This copy is truncated")
    (odd,) = warnings(_source(status="suspect", suspect="rule_count: 12 of 2900"))
    assert "self-check failed (rule_count: 12 of 2900)" in odd
    (bad,) = warnings(_source(status="quarantined", error="not text"))
    assert "quarantined" in bad and "not text" in bad


def test_the_warning_stands_at_the_top_of_its_page(small_site: SiteResult, small_out: Path) -> None:
    from pipeline.site.build import environment
    from pipeline.site.pages import Pages

    ds = load(small_out)
    cut = ds.sources[-1]
    cut.row["flags"] = "truncated"  # the small data has no truncated copy: this one is said to be
    text = Pages(ds, environment()).release(cut)
    warning = text.index('<p class="warning" role="note"><strong>Warning:</strong> This copy is truncated')
    assert text.index("</header>") < warning < text.index('<article class="rules">')
    assert '<p class="warning"' not in page(small_site, f"release/{cut.source_id}.html")


def test_every_page_carries_the_data_notice(small_site: SiteResult) -> None:
    pages = sorted(small_site.dest.rglob("*.html"))
    assert len(pages) == small_site.pages
    for path in pages:
        text = path.read_text(encoding="utf-8")
        footer = html.unescape(text[text.index('<footer class="site">'):])
        assert NOTICE in footer and f'href="{FAN_CONTENT_POLICY}"' in footer, path


def test_small_site_links_resolve(small_site: SiteResult) -> None:
    broken, checked = broken_links(small_site.dest)
    assert checked > 10_000 and broken == []


def test_search_landmarks_are_named_apart(small_site: SiteResult) -> None:
    for rel in ("index.html", "search.html", "release/cr-2004-10-01.html"):
        names = re.findall(r'<form [^>]*role="search"[^>]*aria-label="([^"]+)"', page(small_site, rel))
        assert len(names) == len(set(names)) == page(small_site, rel).count('role="search"'), rel


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.dates(), min_size=1, max_size=150), st.integers(min_value=120, max_value=2000))
def test_bars_never_overlap(dates: list[date], width: int) -> None:
    when = sorted(d.isoformat() for d in dates)  # many on one day or a week apart, as real releases are
    placed = bands(len(when), 56, width)
    assert all(w > 0 for _, w in placed)
    assert all(x1 + w1 <= x2 for (x1, w1), (x2, _) in zip(placed, placed[1:], strict=False))
    svg = str(bar_chart([Bar(d, d, (1, 2)) for d in when], ("a", "b"), "T", "D", width=width + 68))
    xs = [float(x) for x in re.findall(r'<rect class="s0" x="([\d.]+)"', svg)]
    assert len(xs) == len(when) and xs == sorted(xs) and len(set(xs)) == len(xs)


def test_the_changes_chart_shows_every_kind(small_out: Path) -> None:
    context = run_context(SiteIndex(load(small_out)))
    legend = str(context["changes_legend"])
    assert re.findall(r"</span>([^<]+)</li>", legend) == list(KINDS) and len(KINDS) == 7
    chart = str(context["changes_chart"])
    (row,) = context["change_rows"]
    for i, n in enumerate(row["counts"]):
        assert (f'<rect class="s{i}"' in chart) == (n > 0), KINDS[i]
    assert "<a " not in chart and "<a " not in str(context["rules_chart"])  # no links inside an image


@pytest.mark.parametrize("rel", ["index.html", "run.html"])
def test_no_link_inside_an_svg_image(small_site: SiteResult, rel: str) -> None:
    for svg in re.findall(r"<svg.*?</svg>", page(small_site, rel), re.S):
        assert "<a " not in svg


def test_the_build_is_deterministic(small_out: Path, small_site: SiteResult, tmp_path: Path) -> None:
    from pipeline.site.build import build_site

    again = build_site(small_out, tmp_path / "again")
    files = sorted(p.relative_to(small_site.dest) for p in small_site.dest.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again.dest) for p in again.dest.rglob("*") if p.is_file())
    for rel in files:
        if rel.name != ".rules-site":  # it names the folder it was built from
            assert (small_site.dest / rel).read_bytes() == (again.dest / rel).read_bytes(), rel
