"""The site search's rules (static/searchcore.js) run by Node and held to the Python they
repeat: ``fold`` to the key the index is built with (scripts.search_key: quote style, then
``pipeline.text.search_fold``), ``citedNumber`` to ``resolve``'s reading of a citation
(``pipeline.query.search.number_query``), on the small site's index and on generated
strings; and ``rank`` orders the current release and exact numbers first, then newer
before older."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.site
from pipeline.numbers import RULE_NUMBER
from pipeline.query.search import number_query
from pipeline.site.build import SiteResult
from pipeline.site.scripts import search_key
from tests.conftest import examples

CORE = Path(pipeline.site.__file__).parent / "templates" / "static" / "searchcore.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed: searchcore.js cannot be run")


def js(call: str, args: list[Any]) -> list[Any]:
    """``core.<call>(...arg)`` for each argument list in ``args``, run by Node."""
    assert NODE is not None
    script = (f"const core = require({json.dumps(str(CORE))});"
              "let s = ''; process.stdin.on('data', d => s += d);"
              "process.stdin.on('end', () => process.stdout.write(JSON.stringify("
              f"JSON.parse(s).map(a => core.{call}(...a)))));")
    done = subprocess.run([NODE, "-e", script], input=json.dumps(args), capture_output=True, text=True,
                          check=True, timeout=300)
    return list(json.loads(done.stdout))


def index_of(site: SiteResult) -> list[list[Any]]:
    lines = (site.dest / "search-index.js").read_text(encoding="utf-8").splitlines()
    line = next(line for line in lines if line.startswith("window.SEARCH_INDEX="))
    return list(json.loads(line.removeprefix("window.SEARCH_INDEX=").rstrip(";")))


def test_the_index_carries_the_grammars_number_shape(small_site: SiteResult) -> None:
    first = (small_site.dest / "search-index.js").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first.removeprefix("window.SEARCH_SHAPE=").rstrip(";")) == RULE_NUMBER


def test_fold_is_the_indexs_on_every_text_of_the_small_site(small_site: SiteResult) -> None:
    texts = list(dict.fromkeys(t for e in index_of(small_site) for t in (e[1], e[2], e[5]) if t))
    texts += ["Assassin’s Trick", "“As though”", "Dandân  Ærathi", "Juzám Djinn", "  spaced\tout  "]
    assert len(texts) > 1000
    assert js("fold", [[t] for t in texts]) == [search_key(t) for t in texts]


TEXT = st.text(alphabet=st.sampled_from(list("aAzZ09 .'\"-–—’‘“”ÆæâàéÉñüÁçß\t\n\u00a0\u2009xX")), max_size=30)


# Node starts once an example: many strings an example, few examples (2 in make test, 20 in make check).
@settings(max_examples=examples(20), deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=400))
def test_fold_agrees_on_generated_text(texts: list[str]) -> None:
    assert js("fold", [[t] for t in texts]) == [search_key(t) for t in texts]


CITATIONS = ["CR 702.42a", "rule 702.42a", "rule 702. 37a.", "702.42A", "(CR 702.19a)", "702.19a,", "702.",
             "702", "408.f", "７０２.１９a", "Rules 100.1", "section 702.42", "cr. 702.42b", "702.42 entwine",
             "entwine", "1000", "٧٠٢.٤٢", "", "  ", "CR", "R70242a", "702.42aa", "704.5aa", "702.175", "1.",
             "[702.42a]", "702.42a;", "702 .42a", "CR  702.42a"]


def test_cited_number_reads_what_resolve_reads() -> None:
    assert js("citedNumber", [[c, RULE_NUMBER] for c in CITATIONS]) == [number_query(c) for c in CITATIONS]
    assert number_query("CR 702.42a") == "702.42a"  # the case the site had missed


CITED = st.text(alphabet=st.sampled_from(list("0123456789.  aAbBzZ()[],;:CRrule\u3000７")), max_size=16)


@settings(max_examples=examples(20), deadline=None)
@given(st.lists(st.one_of(CITED, st.sampled_from(CITATIONS).map(lambda c: c + " ")), min_size=1, max_size=400))
def test_cited_number_agrees_on_generated_citations(texts: list[str]) -> None:
    assert js("citedNumber", [[t, RULE_NUMBER] for t in texts]) == [number_query(t) for t in texts]


def ranked(index: list[list[Any]], queries: list[str]) -> list[list[str]]:
    """The labels of each query's hits, in order, as searchcore.js ranks them."""
    script_args = [[q] for q in queries]
    assert NODE is not None
    script = (f"const core = require({json.dumps(str(CORE))});"
              "let s = ''; process.stdin.on('data', d => s += d);"
              "process.stdin.on('end', () => { const [index, shape, qs] = JSON.parse(s);"
              "const prepared = core.prepare(index);"
              "process.stdout.write(JSON.stringify(qs.map(([q]) => "
              "core.rank(index, prepared, q, shape).map(h => index[h[2]][1])))); });")
    done = subprocess.run([NODE, "-e", script], input=json.dumps([index, RULE_NUMBER, script_args]),
                          capture_output=True, text=True, check=True, timeout=300)
    return list(json.loads(done.stdout))


def _rule(label: str, nums: str, date: str, current: int, text: str = "t") -> list[Any]:
    return ["rule", label, text, "lineage/x.html", nums, "", "", date, current]


def test_rank_current_and_exact_first_then_newer() -> None:
    index = [
        _rule("702.42b (ended)", "70242b@2011-06-17", "2011-06-17", 0),        # an old holder of 702.42b
        _rule("702.43a", "70243a@2026-08-07 70242a@2013-07-13", "2026-08-07", 1),  # 702.42a in 2011-2013
        _rule("702.44a", "70244a@2026-08-07 70242a@2019-06-14", "2026-08-07", 1),  # 702.42a until 2019
        _rule("702.42b", "70242b@2026-08-07", "2026-08-07", 1),
        _rule("702.42a", "70242a@2026-08-07 70239a@2009-07-11", "2026-08-07", 1),
        ["section", "702.42 Entwine", "in CR 2026-08-07", "release/x.html#R70242", "70242@2026-08-07", "", "",
         "2026-08-07", 1],
        ["section", "702.42 Bushido", "in CR 2011-06-17", "release/y.html#R70242", "70242@2011-06-17", "", "",
         "2011-06-17", 0],
        ["glossary", "Entwine", "See rule 702.42, “Entwine.”", "release/x.html#G-entwine", "", "", "",
         "2026-08-07", 1],
        ["glossary", "Entwine", "See rule 502.32, “Entwine.”", "release/z.html#G-entwine", "", "", "",
         "2004-10-01", 0],
    ]
    by_number, cited, a_rule, words = ranked(index, ["702.42", "CR 702.42a", "702.42a", "entwine"])
    # the current section exactly, then the current rules under it, then the old section
    assert by_number[:4] == ["702.42 Entwine", "702.42a", "702.42b", "702.42 Bushido"]
    assert by_number[4:] == ["702.44a", "702.43a", "702.42b (ended)", "Entwine"]  # then what cites it
    # the current 702.42a first, then the rules that were 702.42a, the latest holder first
    assert cited == a_rule == ["702.42a", "702.44a", "702.43a"]
    assert words[:2] == ["Entwine", "702.42 Entwine"] and words[2] == "Entwine"  # current, then 2004's


def test_rank_on_the_small_site(small_site: SiteResult) -> None:
    index = index_of(small_site)
    number, cited, words = ranked(index, ["502.32", "rule 502.32a", "entwine"])
    assert number[:2] == ["502.32 Entwine", "502.32a"]
    assert cited[0] == "502.32a"
    assert words[0] == "Entwine" and "502.32a" in words[:4]
    glossary = [search_key(e[1]) for e in index if e[0] == "glossary"]
    assert len(glossary) == len(set(glossary))  # one entry per term, whatever its quotes
