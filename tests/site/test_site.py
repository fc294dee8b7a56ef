"""The static site built from the bundled data's published folder: pages, anchors, links,
escaping, the run report, and what the command refuses to do."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.errors import SiteError
from pipeline.query.diff import diff
from pipeline.run import Corpus
from pipeline.site.build import MARKER, SiteResult, build_site
from pipeline.site.changes import compare, presence
from pipeline.site.data import Dataset, anchor, load, slug
from pipeline.site.html import linkify
from tests.site.sitecheck import broken_links

TABLES = ("sources", "elements", "rule_history", "lineages", "xrefs", "glossary", "sections", "rules", "renumber_map")


def page(site: SiteResult, rel: str) -> str:
    return (site.dest / rel).read_text(encoding="utf-8")


def ids(text: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', text))


@pytest.fixture(scope="module")
def dataset(bundled: tuple[Corpus, Path]) -> Dataset:
    """The bundled data's published folder as the site reads it, loaded once for the
    module (about 6 s a load; nine tests read it): never to be changed."""
    return load(bundled[1])


@pytest.mark.slow  # the site of the full dataset
def test_every_source_and_lineage_has_its_page(site: SiteResult, dataset: Dataset) -> None:
    ds = dataset
    assert (site.releases, site.dumps) == (len(ds.releases), len(ds.sources) - len(ds.releases))
    assert site.releases >= 13 and site.dumps >= 5
    for src in ds.sources:
        assert (site.dest / "release" / f"{slug(src.source_id)}.html").is_file(), src.source_id
        assert (site.dest / "data" / f"{slug(src.source_id)}.js").is_file(), src.source_id
    assert len(list((site.dest / "lineage").glob("*.html"))) == len(ds.lineages) == site.lineages
    # Change pages between neighbouring releases: every release but the first.
    assert sorted(p.stem for p in (site.dest / "changes").glob("*.html")) == [s.source_id for s in ds.releases[1:]]
    assert (site.dest / MARKER).is_file()


@pytest.mark.slow  # the site of the full dataset
def test_whole_site_links_resolve(site: SiteResult) -> None:
    broken, checked = broken_links(site.dest)
    assert checked > 50_000
    assert broken == []


def test_link_checker_finds_what_does_not_resolve(tmp_path: Path) -> None:
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "a.html").write_text('<p id="R1001">x</p><a href="#R1002">', encoding="utf-8")
    (tmp_path / "index.html").write_text(
        '<a href="release/a.html#R1001"></a><a href="release/b.html"></a><a href="../outside.html"></a>'
        '<a href="https://example.org/"></a><a href="release/a.html?q=1#R1001"></a>', encoding="utf-8")
    (tmp_path / "search-index.js").write_text(
        'window.SEARCH_INDEX=[["rule","1","t","release/a.html#R9",""]];\n', encoding="utf-8")
    broken, checked = broken_links(tmp_path)
    assert checked == 7
    assert broken == [
        "index.html: release/b.html: no file release/b.html",
        "index.html: ../outside.html: no file ../outside.html",
        "index.html: not a link inside the site: https://example.org/",
        "release/a.html: #R1002: no id 'R1002' in release/a.html",
        "search.html: release/a.html#R9: no id 'R9' in release/a.html",
    ]


@pytest.mark.slow  # the site of the full dataset
def test_rules_are_anchored_in_the_established_style(site: SiteResult) -> None:
    current = ids(page(site, "release/cr-2026-08-07.html"))
    assert {"R70242a", "R70289a", "R702", "R1001", "R1"} <= current
    old = ids(page(site, "release/cr-2004-10-01.html"))
    assert {"R50232a", "R2123d", "R5025b"} <= old  # 2004 numbers, as 2004 wrote them


@pytest.mark.slow  # the site of the full dataset
def test_old_cross_reference_links_to_its_own_release(site: SiteResult) -> None:
    text = page(site, "release/cr-2004-10-01.html")
    rule = re.search(r'<p class="rule" id="R5025b">.*?</p>', text)
    assert rule is not None
    assert '<a class="xref" href="#R2123d">212.3d</a>' in rule.group(0)
    # and the rule number opens its lineage (canonical 702.10c)
    assert 'href="../lineage/702.10c.html"' in rule.group(0)


@pytest.mark.slow  # the site of the full dataset
def test_dump_cross_references_lead_to_the_release_it_shares_numbering_with(site: SiteResult) -> None:
    text = page(site, "release/000_eb8496d4591d3274.html")
    # the FAQ (numbering of 2013-05-01) cites 700.2 and 601.2b, which it does not contain itself
    assert 'href="cr-2013-05-01.html#R7002"' in text or 'href="../lineage/' in text
    assert 'class="xref missing"' not in text


@pytest.mark.slow  # the site of the full dataset
def test_lineage_pages_show_the_whole_history(site: SiteResult) -> None:
    umbra = page(site, "lineage/702.89a.html")
    assert re.search(r"702\.87a</span> → <span class=\"num\">702\.88a</span> → <span class=\"num\">702\.89a", umbra)
    for number in ("702.87a", "702.88a", "702.89a"):
        assert f">{number}</a>" in umbra
    assert "<del>Totem</del> <ins>Umbra</ins>" in umbra
    assert 'href="../release/cr-2011-06-17.html#R70287a"' in umbra
    entwine = page(site, "lineage/702.42a.html")
    assert re.search(r"502\.32a</span> → <span class=\"num\">702\.39a</span> → <span class=\"num\">702\.40a"
                     r"</span> → <span class=\"num\">702\.41a</span> → <span class=\"num\">702\.42a", entwine)
    assert 'href="../release/cr-2003-10-01.html#R50232a"' in entwine


@pytest.mark.slow  # the site of the full dataset
def test_change_pages_match_lineages(site: SiteResult, dataset: Dataset) -> None:
    ds = dataset
    have = presence(ds)
    # The release that renumbered Totem armor 702.87a to 702.88a (a keyword came in before it),
    # and the release before it: a move, not an add and a remove.
    umbra_key = ds.by_canonical["702.89a"]
    new = next(v.source_id for v in ds.lineages[umbra_key].versions if v.number == "702.88a")
    old = ds.releases[[r.source_id for r in ds.releases].index(new) - 1].source_id
    changes = compare(ds, old, new, have)
    umbra = next(c for c in changes if c.key == umbra_key)
    assert (umbra.kind, umbra.old_number, umbra.new_number) == ("moved", "702.87a", "702.88a")
    text = page(site, f"changes/{new}.html")
    table = text[text.index('<table class="counts">'):text.index("</table>")]
    counts = dict(zip(re.findall(r'<th scope="col">([a-z+]+)</th>', table),
                      map(int, re.findall(r"<td>(\d+)</td>", table)), strict=True))
    assert counts == {k: sum(1 for c in changes if c.kind == k) for k in counts}
    assert counts["moved"] > 10
    assert f'href="../release/{old}.html#R70287a">702.87a</a> → ' in text
    # the kinds agree with the pipeline's own rule_history.csv, row by row
    for c in changes:
        row = next(v for v in ds.lineages[c.key].versions if v.source_id == new) if c.new_number else None
        assert row is None or row.change == c.kind, (c, row)


@pytest.mark.parametrize("pair", ["neighbours", "far apart", "release to a copy", "a copy to a release"])
@pytest.mark.slow  # the full dataset loaded and diffed
def test_changes_are_the_diff_commands(pair: str, bundled: tuple[Corpus, Path], dataset: Dataset) -> None:
    _, out = bundled
    ds = dataset
    rel = [r.source_id for r in ds.releases]
    dump = next(s.source_id for s in ds.sources if not s.official and s.numbering_like)
    old, new = {"neighbours": (rel[-2], rel[-1]), "far apart": (rel[5], rel[-1]),
                "release to a copy": (rel[0], dump), "a copy to a release": (dump, rel[-1])}[pair]
    ours = compare(ds, old, new, presence(ds))
    theirs = diff(out, old, new)["changes"]
    assert len(ours) > 10
    assert sorted((c.kind, c.key) for c in ours) == sorted((c["change"], c["lineage_id"]) for c in theirs)


@pytest.mark.slow  # the site of the full dataset
def test_run_report(site: SiteResult, dataset: Dataset) -> None:
    text = page(site, "run.html")
    assert text.count("<svg") == 2
    rules_chart = text[text.index("Rules per release</title>"):]
    releases = dataset.releases
    assert rules_chart[:rules_chart.index("</svg>")].count("<rect") == len(releases)
    for sid in ("cr-1999-11-01", "cr-2026-08-07", "000_eb8496d4591d3274"):
        assert f'href="release/{sid}.html">{sid}</a>' in text
    assert "Status: <strong>ok</strong> (exit code 0)" in text
    assert "<h3>Changes</h3>" in text  # changes.md rendered
    # every source's self-checks from run.json, one row each; none failed on the bundled data
    checks = text[text.index('<table class="checks">'):]
    assert checks[:checks.index("</table>")].count("<tr><td>") == len(dataset.sources)
    assert "Every self-check passed on every source." in text


@pytest.mark.slow  # the site of the full dataset
def test_index_has_a_timeline_and_search(site: SiteResult) -> None:
    text = page(site, "index.html")
    timeline = text[text.index('<ol class="timeline"'):]
    timeline = timeline[:timeline.index("</ol>")]
    assert timeline.count('<a class="mark') == site.releases + site.dumps
    assert timeline.count('class="mark current"') == 1 and "<svg" not in timeline
    assert 'action="search.html"' in text and "(current)" in text


def test_everything_from_the_sources_is_escaped(tmp_path: Path, small_out: Path) -> None:
    out = small_out
    bad = tmp_path / "out"
    bad.mkdir()
    for name in TABLES:
        shutil.copy(out / f"{name}.csv", bad)
    shutil.copy(out / "run.json", bad)
    evil = '<script>alert("x")</script> & <blink>'
    with (out / "elements.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    text_col, kind_col = header.index("text"), header.index("kind")
    hit = next(r for r in rows[1:] if r[kind_col] == "rule" and r[0].startswith("cr-2004-10-01:"))
    hit[text_col] = evil + hit[text_col]
    term = next(r for r in rows[1:] if r[kind_col] == "glossary")
    term[header.index("term")] = evil
    with (bad / "elements.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    result = build_site(bad, tmp_path / "site")
    for path in result.dest.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<blink>" not in text, path
    release = (result.dest / "release" / "cr-2004-10-01.html").read_text(encoding="utf-8")
    assert html.escape(evil) in release.replace("&#34;", "&quot;").replace("&#39;", "&#x27;")
    assert "<script>alert" not in (result.dest / "search-index.js").read_text(encoding="utf-8")


@given(st.text(alphabet="<>&\"' ab1.-–", max_size=40), st.lists(st.sampled_from(["1.", "a", "b1", "<a"]), max_size=3))
def test_linkify_keeps_the_text_and_escapes_it(text: str, written: list[str]) -> None:
    refs = [(w, w, "") for w in written]
    out = str(linkify(text, refs, lambda t, c: "#" + t if t else None))
    assert "<" not in re.sub(r"</?(a|span)\b[^>]*>", "", out)
    assert html.unescape(re.sub(r"</?(a|span)\b[^>]*>", "", out)) == text


@pytest.mark.slow  # the site of the full dataset
def test_anchor_of_every_rule_number_is_unique_per_page(site: SiteResult) -> None:
    for path in (site.dest / "release").glob("*.html"):
        found = re.findall(r'\sid="([^"]+)"', path.read_text(encoding="utf-8"))
        assert len(found) == len(set(found)), path.name
    assert anchor("702.175") == "R702175"


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path, small_out: Path) -> None:
    out = small_out
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SiteError, match="did not write"):
        build_site(out, dest)
    assert (dest / "notes.txt").read_text(encoding="utf-8") == "keep me"
    with pytest.raises(SiteError, match="overlap"):
        build_site(out, out / "site")
    with pytest.raises(SiteError, match="overlap"):
        build_site(out, out.parent)
    assert (out / "rules.csv").is_file()
    # Inside the input folder: the next ingest would refuse raw/ (it was written, 146 MB).
    raw = tmp_path / "raw"
    raw.mkdir()
    with pytest.raises(SiteError, match="inside the input folder"):
        build_site(out, raw / "site", raw)
    assert not (raw / "site").exists()


def test_a_table_changed_since_it_was_published_is_refused(tmp_path: Path, small_out: Path) -> None:
    """Edited in a copy, rule_history.csv had been shown as it was edited, exit 0 (trace refused it)."""
    copy = tmp_path / "out"
    shutil.copytree(small_out, copy)
    history = copy / "rule_history.csv"
    text = history.read_text(encoding="utf-8")
    assert " the " in text
    history.write_text(text.replace(" the ", " teh ", 1), encoding="utf-8")
    with pytest.raises(SiteError, match=r"rule_history\.csv: does not match its sha256 in datapackage\.json"):
        build_site(copy, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_a_rebuild_replaces_its_own_files_and_refuses_over_a_users(tmp_path: Path, small_out: Path) -> None:
    """A site folder with a file of the user's in it had been replaced whole, the file lost."""
    dest = tmp_path / "site"
    build_site(small_out, dest)
    listed = set((dest / ".rules-site").read_text(encoding="utf-8").splitlines()[1:])
    assert "index.html" in listed and {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} == (
        listed | {".rules-site"})
    build_site(small_out, dest)  # its own files only: replaced
    (dest / "lineage" / "my-notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SiteError, match="holds lineage/my-notes.txt, which this command did not write"):
        build_site(small_out, dest)
    assert (dest / "lineage" / "my-notes.txt").read_text(encoding="utf-8") == "keep me"


@pytest.mark.slow  # the full dataset loaded again and again
def test_missing_or_malformed_tables_name_the_file(tmp_path: Path, bundled: tuple[Corpus, Path]) -> None:
    _, out = bundled
    with pytest.raises(SiteError, match="no such folder"):
        load(tmp_path / "nowhere")
    bad = tmp_path / "out"
    bad.mkdir()
    for name in TABLES:
        shutil.copy(out / f"{name}.csv", bad)
    with pytest.raises(SiteError, match=r"run\.json: not found"):  # it had failed in the template
        load(bad)
    (bad / "run.json").write_text("[]", encoding="utf-8")
    with pytest.raises(SiteError, match=r"run\.json: not a run report"):
        load(bad)
    shutil.copy(out / "run.json", bad)
    (bad / "xrefs.csv").unlink()
    with pytest.raises(SiteError, match=r"xrefs\.csv: not found"):
        load(bad)
    shutil.copy(out / "xrefs.csv", bad)
    history = bad / "rule_history.csv"
    header = history.read_text(encoding="utf-8").partition("\n")[0].split(",")
    lines = history.read_text(encoding="utf-8").count("\n")
    row = {"lineage_id": "L1", "canonical_number": "702.89a", "source_id": "cr-2099-01-01",
           "effective_date": "2099-01-01", "number_as_written": "702.89a", "change": "unchanged", "text": "t"}
    with history.open("a", encoding="utf-8") as fh:
        fh.write(",".join(row[c] for c in header) + "\n")
    unknown = rf"rule_history\.csv:{lines + 1}: source 'cr-2099-01-01' is not in sources\.csv"
    with pytest.raises(SiteError, match=unknown):
        load(bad)
    shutil.copy(out / "rule_history.csv", bad)
    with history.open("a", encoding="utf-8") as fh:
        fh.write("702.89a,short\n")
    with pytest.raises(SiteError, match=rf"rule_history\.csv:{lines + 1}: 2 fields, the header has {len(header)}"):
        load(bad)


def test_cli(tmp_path: Path, small_out: Path) -> None:
    out = small_out
    dest = tmp_path / "site"
    result = CliRunner().invoke(main, ["site", "--out", str(out), "--dest", str(dest)])
    assert result.exit_code == 0, result.output
    ds = load(out)
    n = len(ds.releases)
    assert f"{n} releases, {len(ds.sources) - n} other copies" in result.output and (dest / "index.html").is_file()
    # A page an earlier build wrote (its marker lists it) and this one does not: gone with the old site.
    (dest / "stale.html").write_text("old", encoding="utf-8")
    with (dest / ".rules-site").open("a", encoding="utf-8") as fh:
        fh.write("stale.html\n")
    again = CliRunner().invoke(main, ["site", "--out", str(out), "--dest", str(dest)])
    assert again.exit_code == 0, again.output
    assert not (dest / "stale.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no staging or old folder left
    missing = CliRunner().invoke(main, ["site", "--out", str(tmp_path / "nowhere"), "--dest", str(dest)])
    assert missing.exit_code == 1 and "nowhere: no such folder" in missing.output
    assert (dest / "index.html").is_file()  # a failed run leaves the previous site as it was


@pytest.mark.slow  # the site of the full dataset
def test_a_truncated_copy_says_so_first(site: SiteResult, dataset: Dataset) -> None:
    ds = dataset
    cut = [s.source_id for s in ds.sources if "truncated" in s.row.get("flags", "").split(";")]
    assert cut == ["001_a2791e0f90a089aa"]
    for src in ds.sources:
        text = page(site, f"release/{slug(src.source_id)}.html")
        warned = '<p class="warning" role="note"><strong>Warning:</strong> This copy is truncated' in text
        assert warned == (src.source_id in cut), src.source_id
        if warned:
            assert text.index('<p class="warning"') < text.index('<article class="rules">')


@pytest.mark.slow  # the site of the full dataset
def test_search_lists_each_glossary_term_once_whatever_its_quotes(site: SiteResult) -> None:
    from pipeline.site.scripts import search_key

    lines = page(site, "search-index.js").splitlines()
    index = json.loads(next(ln for ln in lines if ln.startswith("window.SEARCH_INDEX=")).split("=", 1)[1].rstrip(";"))
    terms = [e[1] for e in index if e[0] == "glossary"]
    assert len({search_key(t) for t in terms}) == len(terms) > 500
    # releases wrote both "Attacks and Isn't Blocked" and "Attacks and Isn’t Blocked": one entry
    assert sum(search_key(t) == "attacks and isn't blocked" for t in terms) == 1
