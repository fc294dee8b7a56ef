"""search, trace --json and --version through click's CliRunner, on the bundled data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import pipeline
from pipeline.cli import main
from pipeline.query.search import fts_query, number_query
from pipeline.text import fold
from tests.conftest import Bundled

REFERENCE = "cr-2026-08-07"


def _run(out: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--out", str(out)])
    return result.exit_code, result.output


def _json(out: Path, *args: str) -> Any:
    code, output = _run(out, *args, "--json")
    assert code == 0, output
    return json.loads(output)


def test_entwine_ranks_the_current_rule_first(bundled: Bundled) -> None:
    _, out = bundled
    code, output = _run(out, "search", "entwine")
    assert code == 0
    lines = output.splitlines()
    assert lines[0].startswith("702.42a ") and "[Entwine] is a static ability of modal spells" in lines[0]
    assert lines[1].startswith("702.42b ")
    assert lines[2].startswith("glossary: Entwine") and lines[2].endswith(f"“[Entwine].”  [{REFERENCE}]")
    hits = _json(out, "search", "entwine", "--limit", "50")
    assert [h["current"] for h in hits] == sorted((h["current"] for h in hits), reverse=True)
    assert sum(h["current"] for h in hits) == 3
    old = [h for h in hits if not h["current"]]
    # The old glossary copies with stale numbers come after the current wordings,
    # each shown from the newest release that has that wording.
    stale = [h for h in old if h["kind"] == "glossary"]
    for number in ("702.39", "702.40", "702.41"):
        assert any(h["text"].endswith(f'See rule {number}, "Entwine."') for h in stale), number
    tables = pipeline.load(out)
    glossary, dates = tables.glossary, tables.sources.set_index("source_id").effective_date
    for hit in stale:
        same = glossary[(glossary.term.fillna("").map(fold) == fold(hit["title"]))
                        & (glossary.text.fillna("").map(fold) == fold(hit["text"]))]
        dated = [s for s in same.source_id if pd.notna(dates[s])]
        assert hit["source_id"] == max(dated, key=lambda s: dates[s]), hit
    assert {h["number_as_written"] for h in old if h["kind"] == "rule"} >= {"502.32a", "702.40a", "702.41a"}
    assert {h["number"] for h in old if h["kind"] == "rule" and h["number_as_written"] == "502.32a"} == {"702.42a"}


def test_search_json_has_named_fields(bundled: Bundled) -> None:
    _, out = bundled
    first = _json(out, "search", "Umbra armor", "--limit", "1")
    assert first == [{
        "kind": "rule", "number": "702.89a", "number_as_written": "702.89a", "title": "Umbra Armor",
        "snippet": "[Umbra] [armor] is a static ability that appears on some Auras. “[Umbra] [armor]” means “If "
                   "enchanted…",
        "text": "Umbra armor is a static ability that appears on some Auras. “Umbra armor” means “If enchanted "
                "permanent would be destroyed, instead remove all damage marked on it and destroy this Aura.”",
        "source_id": REFERENCE, "current": True, "ended": None, "merged_into": None,
    }]
    assert _json(out, "search", "xyzzyplugh") == []
    # A rule of no current release: how it ended, and the number its content stands under now.
    gone = _json(out, "search", "mana burn", "--release", "cr-2005-10-01", "--limit", "3")
    assert [(h["number_as_written"], h["number"], h["ended"], h["merged_into"]) for h in gone] == [
        ("300.3", None, "merged", "500.5"), ("507.4", None, "removed", None), ("408.2g", None, "removed", None)]


def test_release_searches_one_source_in_its_own_numbering(bundled: Bundled) -> None:
    _, out = bundled
    hits = _json(out, "search", "entwine", "--release", "cr-2004-10-01")
    assert {h["source_id"] for h in hits} == {"cr-2004-10-01"}
    assert [(h["number_as_written"], h["number"]) for h in hits if h["kind"] == "rule"][:2] == [
        ("502.32a", "702.42a"), ("502.32b", "702.42b")]
    assert hits[0]["text"].startswith("Entwine is a static ability that functions while the spell is on the stack.")
    code, output = _run(out, "search", "entwine", "--release", "cr-2004-10-01")
    assert code == 0 and output.startswith("502.32a → 702.42a ")
    # The reference's own wordings, current ones included.
    hits = _json(out, "search", "entwine", "--release", REFERENCE)
    assert [h["number_as_written"] for h in hits if h["kind"] == "rule"] == ["702.42a", "702.42b"]
    code, output = _run(out, "search", "entwine", "--release", "cr-2005-01-01")
    assert code == 1
    assert "no source 'cr-2005-01-01'" in output and "cr-2004-10-01" in output


def test_a_query_of_too_many_words_is_refused_at_once(bundled: Bundled) -> None:
    """The index's time grows with the square of the words: 4,000 took 31 s, 20,000 ran on for minutes."""
    _, out = bundled
    code, output = _run(out, "search", " ".join(["mana"] * 65))
    assert code == 1 and "a query of 65 words: at most 64" in output
    assert _run(out, "search", " ".join(["mana"] * 64))[0] == 0


@pytest.mark.parametrize("query", ["umbr*", "UMBR*", "umbra", "umbra arm*"])
def test_prefix_and_bare_word(bundled: Bundled, query: str) -> None:
    _, out = bundled
    hits = _json(out, "search", query)
    assert hits[0]["number"] == "702.89a" and hits[0]["current"]


def test_a_bare_stem_is_a_word_not_a_prefix(bundled: Bundled) -> None:
    _, out = bundled
    code, output = _run(out, "search", "umbr")
    assert code == 0
    assert output == "no match for 'umbr' (a word ending in * matches as a prefix: umbr*)\n"
    code, output = _run(out, "search", "dand*")
    assert "[Dandân]" in output  # prefixes ignore accents too


def test_fts_syntax_in_a_query_is_harmless(bundled: Bundled) -> None:
    _, out = bundled
    assert fts_query('NEAR(entwine) OR "x* - *') == '"NEAR" AND "entwine" AND "OR" AND "x"*'
    code, output = _run(out, "search", '"entwine" ( -')
    assert code == 0 and output.startswith("702.42a")


def test_trace_json_is_one_document(bundled: Bundled) -> None:
    _, out = bundled
    doc = _json(out, "trace", "702.89a")
    assert doc["lineage"]["canonical_number"] == "702.89a"
    versions = {v["source_id"]: v for v in doc["history"]}
    assert versions["cr-2011-06-17"]["number_as_written"] == "702.87a"  # Totem armor in 2011
    assert versions["cr-2011-06-17"]["text"].startswith("Totem armor is a static ability")
    assert (versions[REFERENCE]["number_as_written"], versions[REFERENCE]["text"][:11]) == ("702.89a", "Umbra armor")
    code, output = _run(out, "trace", "999.99z", "--json")
    assert code == 1 and "999.99z" in output


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"rules-pipeline {pipeline.__version__}\n"


def test_a_number_lists_the_rules_so_numbered_in_rule_order(bundled: Bundled) -> None:
    """``search 702.42`` used to list glossary entries that cite "rule 702.42"
    (Entwine's, then Bushido's and Sunburst's from the years each had it):
    the rules come first now, then what the words find."""
    _, out = bundled
    for query in ("702.42", "CR 702.42", "CR. 702.42", "rules 702.42", "rule 702.42.", "section 702.42"):
        hits = _json(out, "search", query)
        assert [(h["kind"], h["number"], h["current"]) for h in hits[:2]] == [
            ("rule", "702.42a", True), ("rule", "702.42b", True)], query
        assert not [h for h in hits[2:] if h["kind"] == "rule" and h["current"]], query
    hits = _json(out, "search", "702.42")
    assert hits[2]["kind"] == "glossary" and "See rule [702.42]" in hits[2]["snippet"]
    hits = _json(out, "search", "702.42A")
    assert [h["number"] for h in hits][:1] == ["702.42a"] and hits[0]["text"].startswith("Entwine is a static ability")
    assert [h["number"] for h in _json(out, "search", "702", "--limit", "3")] == ["702.1", "702.1a", "702.1b"]
    # A bare three-digit number still finds the words too ("exactly 100 cards", 903.5a).
    hits = _json(out, "search", "100", "--limit", "200")
    assert hits[0]["number"] == "100.1" and any(h["number"] == "903.5a" for h in hits)
    # A release's own numbers, as it wrote them: old Entwine; "702. 37a" in July 2009; 1999's "408.f".
    hits = _json(out, "search", "502.32", "--release", "cr-2004-10-01")
    assert [(h["number_as_written"], h["number"]) for h in hits[:2]] == [("502.32a", "702.42a"), ("502.32b", "702.42b")]
    assert [h["kind"] for h in hits[2:]] == ["glossary"] and "502.32" in hits[2]["text"]
    hits = _json(out, "search", "702.37", "--release", "cr-2009-07-11", "--limit", "2")
    assert [(h["number_as_written"], h["number"]) for h in hits] == [("702. 37a", "702.40a"), ("702. 37b", "702.40b")]
    hits = _json(out, "search", "408.f", "--release", "cr-1999-11-01", "--limit", "1")
    assert [h["number_as_written"] for h in hits] == ["408.f"]
    code, output = _run(out, "search", "502.32a")
    assert code == 0 and output.startswith("no rule 502.32a in the current rules;") and "resolve 502.32a" in output
    code, output = _run(out, "search", "702.42", "--release", "cr-2004-10-01")
    assert (code, output) == (0, "no rule 702.42 in cr-2004-10-01\n")
    assert _json(out, "search", "502.32a") == []
    code, output = _run(out, "search", "502.32a", "--release", "cr-2005-01-01")
    assert code == 1 and "no source 'cr-2005-01-01'" in output
    # Not numbers: other digits, too many digits, a number with words.
    for query in ("٧٠٢.٤٢", "1000", "702.42 modes"):
        assert number_query(query) == "", query


def test_ae_and_the_ligature_find_each_other(bundled: Bundled) -> None:
    """Read off the releases: the list of cards with "Ambush" (206.3c today)
    names Æther Storm in some releases, AEther Storm in ASCII copies and
    Aether Storm since 2017. The index keeps the ligature, so "aether" missed
    the first and "æther" found only it."""
    _, out = bundled
    for query in ("aether storm", "Æther storm", "AEther storm", "æth*"):
        hits = _json(out, "search", query, "--limit", "50")
        found = {h["text"].split("Abbey Matron; ")[1][:12].rstrip(";") for h in hits if "Abbey Matron; " in h["text"]}
        assert found == {"Æther Storm", "AEther Storm", "Aether Storm"}, query
    assert fts_query("maelstrom") == '("mælstrom" OR "maelstrom")'


def test_a_number_query_then_finds_the_texts_citing_it(bundled: Bundled) -> None:
    """After a number's rules, the texts that cite it, not every text holding its
    parts apart (``702.2`` had listed "2/2 creature" texts); filler words change
    nothing ("CR 702.42a" had found 1 hit, "702.42a" 9); --release is that
    release's numbers only (702.42a in 2004 had found Entwine, 702.42a now)."""
    _, out = bundled
    hits = _json(out, "search", "702.2", "--limit", "100")
    assert [h["number"] for h in hits[:6]] == ["702.2a", "702.2b", "702.2c", "702.2d", "702.2e", "702.2f"]
    assert all("702.2" in h["text"] for h in hits[6:]) and len(hits) < 40
    assert _json(out, "search", "CR 702.42a") == _json(out, "search", "702.42a")
    code, output = _run(out, "search", "702.42a", "--release", "cr-2004-10-01")
    assert (code, output) == (0, "no rule 702.42a in cr-2004-10-01\n")
    hits = _json(out, "search", "702.42a", "--release", "cr-2013-05-01")
    assert [(h["number_as_written"], h["text"][:8]) for h in hits] == [("702.42a", "Sunburst")]


def test_a_query_is_read_as_the_index_reads_text(bundled: Bundled) -> None:
    """A decomposed accent, full-width letters, a ligature or a zero-width space
    in a pasted query found nothing."""
    _, out = bundled
    composed = _json(out, "search", "Dandân")
    assert composed
    for query in ("Danda\u0302n", "ＤＡＮＤÂＮ", "Dan\u200bdân"):
        assert _json(out, "search", query) == composed, query
    assert _json(out, "search", "\ufb01rst strike", "--limit", "3") == _json(out, "search", "first strike",
                                                                             "--limit", "3")
    code, output = _run(out, "search", "  ")
    assert code == 2 and "give words or a rule number" in output
    code, output = _run(out, "search", "702.42", "--limit", "99999999999999999999")
    assert code == 2 and "Traceback" not in output and "OverflowError" not in output
