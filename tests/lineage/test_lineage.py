"""Lineages: rules followed release by release, judged against a hand-traced key.

``tests/data/lineage_key.csv`` was traced by reading the releases one after
another (never by running the pipeline); each row is a test. Rows the
pipeline gets wrong today are strict xfails with what it answers instead.
"""

from __future__ import annotations

import contextlib
import csv
import json
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cache import SourceCache
from pipeline.changes import KINDS
from pipeline.cli import main
from pipeline.corpus.clean import Vocabulary, clean
from pipeline.errors import TraceError
from pipeline.ingest.read import Settings, read_source
from pipeline.job import run_job
from pipeline.lineage import chain, context, evidence, leftovers, numbering, openings, pieces, renumbered
from pipeline.lineage.evidence import Release, Step, Subjects, similarity
from pipeline.lineage.step import align_pair
from pipeline.lineage.thresholds import MIN_FAR, MIN_NEAR, MIN_SAME_SECTION
from pipeline.numbers import section_of, sort_key
from pipeline.publish import sqlite
from pipeline.publish.rows import CITED, cited_rows
from pipeline.publish.tables import TABLES
from pipeline.query.dataset import Published
from pipeline.query.dataset import rows as table_rows
from pipeline.query.diff import diff
from pipeline.query.trace import resolve
from pipeline.records import Element, Source
from pipeline.site import data as sitedata
from pipeline.tools.lineage_report import HELDOUT_KEY, STEP_KEY, judge, judge_step, read_key, report, restarts
from tests.conftest import DATA, RAW, ROOT, Bundled, Table, examples

KEY = read_key()

# Rows the pipeline gets wrong today, and what it answers (checked against the releases).
KNOWN_WRONG = {
    "A028": "ended: snow-covered's keyword rule became a supertype rule in 2004",
}
KNOWN_WRONG |= {
    # The key's own row is undecided here ("?", leaning to the content); two blind readers
    # (held-out H29 and step S212, both "clear") have 705.2 go on, as the pipeline does since.
    "C069": "ended: 705.1 is merged into 705.2 (2022-07), which kept its number and opens with 705.2's text",
}


@pytest.fixture(scope="module")
def data(bundled: Bundled) -> Published:
    return Published.load(bundled[1])


@pytest.mark.parametrize("row", [
    pytest.param(row, id=row["key_id"], marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[row["key_id"]]))
    if row["key_id"] in KNOWN_WRONG else pytest.param(row, id=row["key_id"])
    for row in KEY
])
def test_hand_traced_rule(row: dict[str, str], data: Published) -> None:
    verdict = judge(row, data)
    assert verdict.right, f"{row['source_id']} {row['number']}: expected {verdict.expected}, got {verdict.got}"


# Held-out rows the pipeline gets wrong today (drawn at random and traced at 04db367 and 03ee67b).
HELDOUT_WRONG = {
    "H01": "ended: the 2009 phasing rewrite 702.23e is read as a new rule (the reader's judgement call)",
    # The second draw, traced at 03ee67b.
    "G16": "ended: 214.8h (2003 rewrite) is read as removed, not as the new 415.3 (the reader's judgement call)",
    # The fourth draw, traced at 085edb6 (M31, wrong then, was put right after it was traced).
    "M23": "ended: 401.4 (an object's ability letting it be played from another zone) ends in 2009, where the "
           "reader has it go on as the new exception 112.5e (a judgement call naming this answer)",
    "M34": "ended: the end step's 513.1 ends in 2016-09, as the three readers of that step have it (S105), where "
           "the three readers of the whole trace have it go on as the new 513.1 (a judgement call)",
    # The sixth draw, traced at ccba8a9 (the pipeline's answers recorded first).
    "Q09": "ended: 313.1 (the end step's triggers, 2001) is read as removed in 2016-09, where 513.1 was "
           "rewritten with 513.2 and dropped its trigger sentence; the three readers of the whole trace "
           "continue it there, the three of that step (S105) end it",
    # The seventh draw, traced at 25ffaf8 (the pipeline's answers recorded first; R20 and R04, wrong
    # then, were put right after it was traced: _whole_before_piece, _parent_opens).
    "R05": "113.2: the ability definition 402.1 goes on in its piece on what abilities affect (112.2), as both "
           "readers of that step have it (S447); the three readers of the whole trace have 112.1a, which "
           "continues 400.1 (S337, clear)",
    # Adjudicated 2026-12-06 (readings/adjudicate-1): two fresh readers of three continue it.
    "R03": "ended: 217.8c (the phased-out zone) ends in July 2009, where two readers of three continue it in the "
           "new phasing rule 702.23d, which opens with its point (a judgement call)",
    # The eighth draw, traced at 9184877 (the pipeline's answers recorded first); all three judgement calls.
    "T10": "205.2a: 1999's 212.1 goes on in the list of card types (2003's 205.2a, its opening), where the reader "
           "has 205.2b, the multiple-types sentences, most of its words (naming 205.2a the alternative)",
    "T17": "112.1b: 2006's spell definition 213.3 goes on in the copy-of-a-card clause 111.1b of July 2009, as two "
           "readers of three of that step have it (S37), where the three readers of the whole trace have it merged "
           "into 111.1",
}


@pytest.mark.parametrize("row", [
    pytest.param(row, id=row["key_id"], marks=pytest.mark.xfail(strict=True, reason=HELDOUT_WRONG[row["key_id"]]))
    if row["key_id"] in HELDOUT_WRONG else pytest.param(row, id=row["key_id"])
    for row in read_key(HELDOUT_KEY)
])
def test_held_out_rule(row: dict[str, str], data: Published) -> None:
    """A rule drawn at random from the 1999-2025 releases and traced blind."""
    verdict = judge(row, data)
    assert verdict.right, f"{row['source_id']} {row['number']}: expected {verdict.expected}, got {verdict.got}"


# Steps the pipeline takes otherwise today, and what it answers (the key's readers judged these).
STEP_WRONG = {
    "S02": "415.2: old 401.2 is read as going on in the ability-targeting rule (402.10's sentence)",
    "S09": "603.3a: the controller rule goes on in the triggered-ability piece (a cascade of the greedy pairing)",
    # Rewritten in place (_leftovers_in_place): 27 of the 36 pairs it made on raw/ were judged right, these not.
    "S35": "202.1a: a redundant cross-reference to the copy rules pairs with the mana cost rule",
    "S41": "702.19k: 'bands with other' 502.11b pairs with the blocking half of 502.11c, not merged into 702.19c",
    "S44": "107.4c: the numeral-symbols rule keeps its number though it moved to the new 106.10",
    # Round 6, judged after the change that made the rows' steps come out as they do.
    "S76": "115.1b instead of 115.1a: the timing rule goes on in its activated-ability clause",
    "S83": "607.2k: 401.7 goes on in the rule it opens, which the reader has continuing 413.2i (judgement call)",
    # Round 8, judged after 7a18201 moved these steps.
    "S95": "ended: 200.6a (a permanent's owner) is merged into the spell rule 111.2, not continued as 110.2",
    "S99": "703.4e: 308.1 goes on in the turn-based-action summary that opens as it did, not in 508.1",
    # Round 10 (2015-2021, asked open: no candidates shown), judged at 3d59936.
    "S117": "ended: 701.25b (to transform, 2016-04) is merged into 701.25a, which the reader has it opening "
            "(judgement call)",
    "S118": "711.1a: the front-face mana cost rule keeps its number, where the reader has it dropped "
            "(judgement call)",
    "S138": "ended: split cards' colours (708.3) end removed; the reader has them go on in 708.4b (judgement call)",
    # Round 11: the steps that _say_the_same (a weak pair must keep the longer words) moved on raw/.
    "S171": "ended: 104.3c ({X}) no longer pairs with 107.3a, which keeps too few of its longer words "
            "(judgement call)",
    "S172": "ended: 406.4 (mana abilities don't use the stack) no longer pairs with 605.3b, which keeps too few "
            "of its longer words (judgement call)",
    # Round 12: the steps the two changes after the fourth held-out draw moved on raw/, and a neighbour.
    "S176": "712.13a: 713.1a (a meld card is no double-faced card) pairs with the rule on entering transformed",
    # Round 13 (2009-09 to 2014 and 2022 to 2026, asked open), judged at cbc997d; S188 (808.6) put right after.
    "S182": "ended: 301.6 (2010-02) is merged into 300.2, where the reader has it go on in 300.2a (judgement call)",
    "S192": "810.2: the two-headed giant header 806.4 goes on by position, where the reader has it removed "
            "(judgement call)",
    "S201": "702.12a: 700.4a (indestructible is no ability) pairs with 'indestructible is a static ability', "
            "which reverses it (judgement call)",
    "S220": "ended: the meld rule 713.4c is removed where the reader has it restated as 712.4b (judgement call)",
    "S165": "201.2c: 201.2b (objects with several names) pairs with the new different-name rule, more alike word "
            "for word than 201.2a, into which the reader has it merged",
}


# Round 14 (1999 to July 2009, asked open), judged at b85a200: the steps the pipeline
# takes otherwise, one a row (most are rules the July 2009 renumbering rewrote so far,
# or moved so far, that the pipeline ends them: no number, rather than a wrong one).
with (DATA / "step_key_wrong.csv").open(encoding="utf-8", newline="") as _fh:
    STEP_WRONG |= {row["step_id"]: row["why"] for row in csv.DictReader(_fh)}


def _step_param(row: dict[str, str]) -> object:
    wrong = STEP_WRONG.get(row["step_id"])
    marks = [pytest.mark.xfail(strict=True, reason=wrong)] if wrong else []
    return pytest.param(row, id=row["step_id"], marks=marks)


@pytest.mark.parametrize("row", [_step_param(row) for row in read_key(STEP_KEY, "step_id")])
def test_hand_judged_step(row: dict[str, str], data: Published) -> None:
    """One step of a lineage, judged by readers of the two releases who were shown
    two candidates (blind to which the pipeline chose) and could name another:
    ``tests/data/step_key.csv``. ``expected`` is the rule of the newer release that
    continues the old one, or ``ended``."""
    verdict = judge_step(row, data)
    assert verdict.right, verdict


@pytest.mark.parametrize(("old_release", "old_number", "new_release", "expected"), [
    # Two rules that open with the same eight words ("At the end of a subgame of a ...") each stay themselves.
    ("cr-2017-08-25", "718.5a", "cr-2018-07-13", "719.5a"),
    ("cr-2017-08-25", "718.5b", "cr-2018-07-13", "719.5b"),
])
def test_rules_opening_alike_are_not_swapped(old_release: str, old_number: str, new_release: str, expected: str,
                                             data: Published) -> None:
    row = {"step_id": old_number, "old_release": old_release, "old_number": old_number,
           "new_release": new_release, "expected": expected, "confidence": "clear"}
    assert judge_step(row, data).right, judge_step(row, data)


def test_key_is_large_and_stratified() -> None:
    categories = {row["category"] for row in KEY}
    assert len(KEY) >= 150
    assert {"renumbered", "renumbered+reworded", "moved", "split", "merged", "removed"} <= categories
    assert min(row["source_id"] for row in KEY) < "cr-2001" and max(row["source_id"] for row in KEY) >= "cr-2013"


@pytest.mark.slow  # the report over the full dataset
def test_report_scores_the_key(bundled: Bundled) -> None:
    verdicts, text = report(bundled[1])
    right = sum(v.right for v in verdicts)
    assert right == len(KEY) - len(KNOWN_WRONG)
    assert text.startswith(f"lineage answer key: {right} of {len(KEY)} right")
    held = read_key(HELDOUT_KEY)
    assert f"held-out key (drawn at random, traced blind): {len(held) - len(HELDOUT_WRONG)} of {len(held)}" in text


def test_report_refuses_a_dataset_without_the_keys_releases(tmp_path: Path) -> None:
    """A trial user's (2026-12-04): a dataset of other releases was scored "0 of 180 right", exit 0."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(RAW / "cr-2021-02-15.txt", raw)
    run_job(raw, tmp_path / "out", Settings(jobs=1), full=True)
    with pytest.raises(TraceError, match=r"out lacks 3\d of the releases the key's rules are from \(cr-1999-04-23"):
        report(tmp_path / "out")
    done = subprocess.run([sys.executable, "-m", "pipeline", "lineage-report", str(tmp_path / "nowhere")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr.startswith(f"Error: {tmp_path / 'nowhere'} holds no published dataset")


@pytest.mark.slow  # the report over the full dataset
def test_report_counts_what_starts_and_ends_in_each_release(bundled: Bundled, table: Table) -> None:
    _, text = report(bundled[1])
    per = {}
    for line in text.split("per release:")[1].split("undated sources:")[0].splitlines()[1:]:
        sid, rules, _, started, _, ended, *_ = line.split()
        per[sid] = (int(rules), int(started), int(ended))
    lines = table("lineages")
    official = set(per)
    assert sum(s for _, s, _ in per.values()) == lines.first_source.isin(official).sum()
    assert sum(e for _, _, e in per.values()) == (lines.ended != "").sum()
    assert per["cr-2026-08-07"][0] == len(table("rules")) and per["cr-2026-08-07"][2] == 0
    # The July 2009 rewrite ends more lineages than any other release.
    assert max(per, key=lambda sid: per[sid][2]) == "cr-2009-07-11"
    undated = text.split("undated sources:")[1]
    assert "000_eb8496d4591d3274" in undated and "cr-" not in undated


def test_history_never_stops_and_restarts(table: Table) -> None:
    history = table("rule_history")
    official = history[history.effective_date != ""]
    for lid, rows in official.groupby("lineage_id", sort=False):
        changes = list(rows.change)
        if "removed" in changes or "merged" in changes:
            assert changes[-1] in ("removed", "merged"), lid
        assert changes[0] in ("added", "split"), lid
        assert list(rows.effective_date) == sorted(rows.effective_date), lid


@pytest.mark.slow  # job runs
def test_no_lineage_stops_and_restarts(bundled: Bundled) -> None:
    """No rule is removed and then added again as a lineage of its own (the
    issue's measure): 115.1e was, in 2020-06-01, before keyword names in common
    made two wordings one rule's."""
    _, out = bundled
    assert restarts(Published.load(out)) == []


def test_a_restart_is_the_same_rule_removed_and_added_again(tmp_path: Path) -> None:
    """What ``restarts`` counts, on a history made for it: a wording removed and
    added again under its number, not a rule about another keyword worded alike."""
    out = tmp_path / "out"
    out.mkdir()
    releases = ["cr-2001-01-01", "cr-2002-01-01", "cr-2003-01-01"]
    _write(out / "sources.csv", ["source_id", "effective_date", "format", "numbering_like"],
           [[sid, sid[3:], "cr_document", sid] for sid in releases])
    _write(out / "renumber_map.csv", ["source_id", "number_as_written", "title", "canonical_number", "lineage_id"],
           [[sid, "702.5", "Flying", "", ""] for sid in releases] + [[sid, "702.6", "Banding", "", ""]
                                                                        for sid in releases])
    history = [
        ["a", "cr-2001-01-01", "702.5b", "added", "Multiple instances of flying are redundant."],
        ["a", "cr-2002-01-01", "", "removed", ""],
        ["b", "cr-2003-01-01", "702.5b", "added", "Multiple instances of flying are redundant!"],
        ["c", "cr-2001-01-01", "702.6b", "added", "Multiple instances of banding are redundant."],
        ["c", "cr-2002-01-01", "", "removed", ""],
        ["d", "cr-2002-01-01", "702.6b", "added", "Multiple instances of flying are redundant."],
    ]
    _write(out / "rule_history.csv", ["lineage_id", "source_id", "effective_date", "number_as_written", "change",
                                      "text"], [[lid, sid, sid[3:], n, change, text]
                                                for lid, sid, n, change, text in history])
    _write(out / "lineages.csv", ["lineage_id", "canonical_number", "ended", "ended_in"],
           [["a", "", "removed", "cr-2002-01-01"], ["b", "702.5b", "", ""], ["c", "", "removed", "cr-2002-01-01"],
            ["d", "702.6b", "", ""]])
    _database(out)
    found = restarts(Published.load(out))
    # a restarts as b (and as d, worded as it was); c about banding is not d about flying.
    assert [(r.ended, r.started) for r in found] == [("a", "b"), ("a", "d")]


def _write(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows(rows)


def _database(out: Path) -> None:
    """``rules.sqlite`` of the hand-made CSVs in ``out`` (the contract's other tables and
    columns empty), built as the job builds it: the queries read the database."""
    tables: dict[str, list[tuple[object, ...]]] = {}
    for table in TABLES:
        path = out / f"{table.name}.csv"
        with contextlib.suppress(FileNotFoundError), path.open(encoding="utf-8", newline="") as fh:
            tables[table.name] = [tuple(r.get(c, "") for c in table.columns) for r in csv.DictReader(fh)]
        tables.setdefault(table.name, [])
    tables[CITED] = cited_rows(tables["renumber_map"])
    sqlite.build(tables, out / "rules.sqlite")


def test_every_rule_of_every_release_has_one_lineage(table: Table) -> None:
    sources = table("sources")
    releases = set(sources[(sources.format == "cr_document") & (sources.effective_date != "")].source_id)
    rmap = table("renumber_map")
    # Every rule a release contains (numbers it only cites have rows of their own, method xref or unmapped;
    # a number a release writes for two rules maps to neither, and each has its own lineage in elements).
    twice = rmap.reason.str.startswith("written for")
    rules = rmap[rmap.source_id.isin(releases) & (rmap.title == "") & (rmap.method != "xref")
                 & ~rmap.reason.str.contains("cross-reference") & ~twice]
    assert (rules.lineage_id != "").all()
    assert set(zip(rmap[twice].source_id, rmap[twice].number_as_written, strict=True)) == {
        ("cr-2006-05-01", "501.2"), ("cr-2006-05-01", "501.3"), ("cr-2009-09-04", "702.30d"),
        ("cr-2024-09-20", "702.175"), ("cr-2024-09-20", "702.175a")}
    history = table("rule_history")
    per_source = history[history.number_as_written != ""].groupby("source_id").lineage_id
    assert all(ids.is_unique for _, ids in per_source)


def test_lineages_table_is_consistent(table: Table) -> None:
    lines = table("lineages")
    current = lines[lines.canonical_number != ""]
    assert current.canonical_number.is_unique
    assert set(current.canonical_number) == set(table("rules").number)
    ended = lines[lines.ended != ""]
    assert set(ended.ended) <= {"removed", "merged"}
    assert (ended.ended_in != "").all() and (ended.canonical_number == "").all()
    merged = ended[ended.ended == "merged"]
    assert set(merged.merged_into) <= set(lines.lineage_id)


def test_rules_and_sections_list_the_sources_that_have_them(table: Table) -> None:
    """A rule's sources are those with an element mapped to it; a section's, those
    with it or a rule in it. 103.2 is a rule and the section of 103.2a-c: in 2011-2022
    the rule written 103.2 is today's 103.1, so those releases are not 103.2's."""
    els = table("elements")
    mapped = els[els.canonical_number != ""]
    have = mapped.groupby("canonical_number").source_id.agg(set)
    rules = table("rules")
    listed = dict(zip(rules.number, rules.sources.str.split(";").map(set), strict=True))
    assert all(listed[n] == have[n] for n in rules.number)
    assert "cr-2011-06-17" not in listed["103.2"] and "cr-2026-08-07" in listed["103.2"]
    sections = table("sections").set_index("number")
    assert "cr-2011-06-17" in sections.loc["702.42", "sources"]  # Entwine's rules are there then


# The cases the issue names, traced by hand.
@pytest.mark.parametrize(("source", "number", "current"), [
    ("cr-2009-07-11", "110.5", "111.1"),  # the token rule moved to its own section in 2019
    ("cr-2013-05-01", "406.3", "406.3"),  # split in 2021: the rule that kept the number carries on
    ("cr-2012-06-01", "112.10", "113.10"),  # split in 2018, then the section moved
    ("cr-2003-10-01", "409.1", "601.2"),
    ("cr-2004-10-01", "409.1", "601.2"),
    ("cr-2006-10-01", "409.1", "601.2"),
    ("cr-2007-05-01", "409.1", "601.2"),
    ("cr-2016-04-08", "711.8a", "712.14a"),  # not its neighbour 712.14b
    ("cr-2004-10-01", "502.32a", "702.42a"),  # Entwine
    ("cr-2011-06-17", "702.87a", "702.89a"),  # Totem armor, now Umbra armor
    # In 2020-06-01 it named other keywords as examples ("equip and modular", not
    # "equip and provoke"): the same rule, not two about different keywords.
    ("cr-2020-01-24", "115.1e", "115.1e"),
])
def test_issue_cases(source: str, number: str, current: str, data: Published) -> None:
    assert data.lineages[data.find(number, source=source)]["canonical_number"] == current


def test_a_number_a_release_wrote_for_two_rules_is_asked_which(data: Published) -> None:
    """2024-09 wrote 702.175a for Offspring's and Impending's definitions: trace and
    resolve neither pick the first (as they did) nor say it has no such rule."""
    with pytest.raises(TraceError, match=r"^cr-2024-09-20 has 702\.175a for 2 rules in this source, now "
                                         r"702\.175a, 702\.176a: give the current number of the one you mean$"):
        data.find("702.175a", source="cr-2024-09-20")
    assert data.lineages[data.find("702.175b", source="cr-2024-09-20")]["canonical_number"] == "702.175b"


def test_a_rule_goes_on_in_the_whole_not_in_a_piece_cut_from_it(data: Published) -> None:
    """Held-out R20 (traced clear): July 2009's combat damage rule 310.1 is 510.1,
    which opens with its announcements in other words, not 510.3, its trigger
    sentence word for word, which was split from it (seven rules away)."""
    line = data.lineages[data.find("310.1", source="cr-2007-09-07")]
    assert line["canonical_number"] == "510.1"
    piece = data.lineages[data.find("510.3", source="cr-2009-07-11")]
    assert piece["split_from"] == line["lineage_id"] and piece["first_source"] == "cr-2009-07-11"


def test_a_rule_goes_on_whole_not_as_a_subrule_holding_it(data: Published) -> None:
    """Held-out M40 and step key S175 (two readers, judgement calls): June 2023
    folded the meld rules (713) into the double-faced card rules; the meld head
    rule 713.1 is 712.4 ("meld cards have a Magic card face on one side and half
    of an oversized card face on the other"), not the subrule 712.1g that pointed
    to rule 713 in the same words and more; 712.1g was merged into it. Between
    two rules of one kind the closer wording decides nothing: 712.7 still goes
    on in 712.11, and the meld rule 713.8 ends."""
    meld = data.lineages[data.find("713.1", source="cr-2023-02-03")]
    assert (meld["canonical_number"], meld["first_source"], meld["first_number"]) == ("712.4", "cr-2016-08-26", "712.1")
    pointer = data.lineages[data.find("712.1g", source="cr-2023-02-03")]
    assert (pointer["ended"], pointer["ended_in"], pointer["merged_into"]) == (
        "merged", "cr-2023-06-16", meld["lineage_id"])
    assert data.lineages[data.find("712.7", source="cr-2023-02-03")]["canonical_number"] == "712.11"
    assert data.lineages[data.find("713.8", source="cr-2023-02-03")]["ended"] == "removed"


def test_a_rule_goes_on_in_the_rule_it_and_its_subrule_became(data: Published) -> None:
    """Held-out R04 (clear) and step key S78 (clear) and S363: July 2009 made the
    blocking check 500.3 and its subrule 500.3a, the evasion rule, one rule,
    509.1b, which opens with 500.3's check in other words and goes on with
    500.3a word for word: 500.3 goes on there, 500.3a is merged in, and 500.4
    (how a requirement conflicts) goes on in the requirements check 509.1c."""
    check = data.lineages[data.find("500.3", source="cr-2009-02-01")]
    assert check["canonical_number"] == "509.1b"
    evasion = data.lineages[data.find("500.3a", source="cr-2009-02-01")]
    assert (evasion["ended"], evasion["ended_in"], evasion["merged_into"]) == (
        "merged", "cr-2009-07-11", check["lineage_id"])
    assert data.lineages[data.find("500.4", source="cr-2009-02-01")]["canonical_number"] == "509.1c"


def test_a_rule_moves_into_a_new_keyword_section_only_if_it_names_the_keyword(data: Published) -> None:
    """2001's banding section 502.10 was new (502.9 in 1999); 1999's trample rule
    502.9d ("an attacking creature with trample ignores any blocking creatures
    ...") had gone on in its 502.10e ("if an attacking creature becomes blocked
    ..."), so that its current number was banding's. It ends in 2001, where
    502.9d reads "Ignore this rule." (step key S100)."""
    trample = data.lineages[data.find("502.9d", source="cr-1999-11-01")]
    assert (trample["canonical_number"], trample["ended_in"]) == ("", "cr-2001-09-24")
    banding = data.lineages[data.find("502.10e", source="cr-2001-09-24")]
    assert banding["first_source"] == "cr-2001-09-24"


@pytest.mark.xfail(strict=True, reason="merged into 502.9b, whose trample words it shares; the reader has it removed "
                   "(502.9b took in none of its content)")
def test_trample_502_9d_ends_removed(data: Published) -> None:
    assert data.lineages[data.find("502.9d", source="cr-1999-11-01")]["ended"] == "removed"


@pytest.mark.parametrize(("source", "number"), [
    ("cr-2010-10-01", "118.8"),  # "... can't lose life ...", worded after 117.7's "... can't gain life ..."
    ("cr-2016-04-08", "117.7d"),  # colorless mana, worded after 117.7b's colored mana
    ("cr-2020-01-24", "111.10c"),  # the gold token, worded after 111.10a's treasure token
    ("cr-2023-06-16", "210.1"),  # a battle's defense, worded after 209.1's planeswalker loyalty
])  # each judged a new rule by a blind reader too (tests/data/readings/steps-8-*.md, cases 8-12)
def test_no_rule_is_split_from_one_that_went_on_word_for_word(source: str, number: str, data: Published) -> None:
    line = data.lineages[data.find(number, source=source)]
    assert (line["first_source"], line["split_from"]) == (source, "")


def test_no_rule_is_merged_into_one_that_went_on_word_for_word(data: Published) -> None:
    """2020-06's layer 7c took in layer 7d (counters); 7a, next to it, went on unchanged."""
    counters = data.lineages[data.find("613.3d", source="cr-2020-01-24")]
    assert (counters["ended"] != "", counters["ended_in"]) == (True, "cr-2020-06-01")
    assert counters["merged_into"] != data.find("613.4a", source="cr-2020-06-01")


@pytest.mark.xfail(strict=True, reason="ends removed: the merge passes find 7d's words in 7c's new "
                   "wording ('effects and counters that modify power ...') too loosely")
def test_layer_7d_merged_into_7c(data: Published) -> None:
    counters = data.lineages[data.find("613.3d", source="cr-2020-01-24")]
    assert counters["merged_into"] == data.find("613.4c", source="cr-2020-06-01")


def test_a_rule_goes_on_where_the_releases_own_citations_say() -> None:
    """Rules that stay word for word and cite an old rule under a new number say
    where it went; a citation left as it was, or narrowed to a subrule, says nothing."""
    old = _release([
        "A player announces the targets of the spell, then chooses how many. The same target can't be "
        "chosen twice for one instance of the word target.",
        "Splice is a static ability. To splice, follow the steps of rule 601.2.",
        "Kicker is a static ability. See rule 601.2.",
    ], ["601.2", "702.5a", "702.6a"])
    new = _release([
        "The same target can't be chosen twice for one instance of the word target.",
        "A player announces the targets of the spell, then chooses how many, as rule 601.2b says.",
        "Splice is a static ability. To splice, follow the steps of rule 601.3c.",
        "Kicker is a static ability. See rule 601.3c.",
    ], ["115.3", "601.3c", "702.5a", "702.6a"])
    a, b = Release.build("a", old), Release.build("b", new)
    step = align_pair(a, b)
    assert b.numbers[step.pairs[0]] == "601.3c"
    # The same, but the citing rules leave "601.2" as it was: the subset score decides.
    stale = _release([t.replace("601.3c", "601.2") for t in [el.text for el in new]], b.numbers)
    step = align_pair(a, Release.build("c", stale))
    assert b.numbers[step.pairs[0]] == "115.3"


def test_identical_releases_pair_every_rule_with_itself() -> None:
    els = _release(["Entwine is a static ability.", "Flying is evasion.", "Multiple instances are redundant."])
    a = Release.build("a", els)
    step = align_pair(a, a)
    assert step.pairs == {0: 0, 1: 1, 2: 2}


def _release(texts: list[str], numbers: list[str] | None = None, sid: str = "r") -> list[Element]:
    numbers = numbers or [f"702.{i + 2}a" for i in range(len(texts))]
    return [Element(sid, i + 1, i + 1, "rule", f"{n} {t}", body=t, number_as_written=n, text=t)
            for i, (n, t) in enumerate(zip(numbers, texts, strict=True))]


# The 2016 transform rewrite, shortened: the one-sentence rule b moved to the
# front of rule a, which kept its number; rule c is new.
_TRANSFORM_OLD = [
    "Only permanents represented by double-faced cards can transform. If a spell tells a player to "
    "transform any other permanent, nothing happens.",
    "To transform a permanent, turn it over so that its other face is up.",
    "Transforming a permanent is not the same game action as turning it face down.",
]
_TRANSFORM_NEW = [
    "To transform a permanent, turn it over so that its other face is up. Only permanents represented "
    "by double-faced cards can transform.",
    "Transforming a permanent is not the same game action as turning it face down.",
    "If a spell tells a player to transform a permanent into an instant card face, nothing happens.",
]


def test_a_weak_pair_must_keep_the_longer_words_of_one_of_the_two() -> None:
    """2009's phasing rewrite dropped 502.15e (damage removed as a permanent phases
    out). Its short and common words all stand in the new phased-out status rule, a
    subset score of 60 or so: not enough without its longer words ("damage",
    "dealt", "removed"). A rule that keeps them pairs all the same."""
    kept = ["Phasing is a static ability that modifies the rules of the untap step.",
            "Multiple instances of phasing on the same permanent are redundant."]
    dropped = "When a permanent phases out, all damage dealt to it is removed."
    status = ("If a permanent phases out, its status changes to phased out. Except for rules and effects that "
              "specifically mention phased-out permanents, a phased-out permanent is treated as though it "
              "does not exist.")
    old = Release.build("old", _release([kept[0], dropped, kept[1]], ["502.15a", "502.15e", "502.15p"]))
    new = Release.build("new", _release([kept[0], status, kept[1]], ["702.23a", "702.23b", "702.23m"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 2: 2} and 1 not in step.merged_into
    reworded = "When a permanent phases out, the damage that was dealt to it is removed from it."
    step = align_pair(old, Release.build("new", _release([kept[0], reworded, kept[1]], new.numbers)))
    assert step.pairs == {0: 0, 1: 1, 2: 2}


def test_of_two_pieces_opening_alike_a_rule_goes_on_in_the_one_with_its_very_first_sentence() -> None:
    """2009's 419.1a ("effects that use the word 'instead' ...", with a clause on
    "skip") was cut into 613.1a, which opens with its first sentence, and 613.1b,
    on "skip", which opens almost alike and holds a few more of its words."""
    old = Release.build("old", _release([
        'Effects that use the word "instead" are replacement effects. Most replacement effects use the word '
        '"instead" to indicate what events will be replaced with other events and use the word "skip" to '
        'indicate what events, steps, phases, or turns will be replaced with nothing.'], ["419.1a"]))
    new = Release.build("new", _release([
        'Effects that use the word "instead" are replacement effects. Most replacement effects use the word '
        '"instead" to indicate what events will be replaced with other events.',
        'Effects that use the word "skip" are replacement effects. These replacement effects use the word '
        '"skip" to indicate what events, steps, phases, or turns will be replaced with nothing.'],
        ["613.1a", "613.1b"]))
    assert align_pair(old, new).pairs == {0: 0}


def test_a_rule_goes_on_under_its_number_and_opening_not_in_a_longer_piece_cut_from_it() -> None:
    """2023-06: 712.1 ("a double-faced card has a magic card face on each side
    ... there are two kinds ...") kept its number and its opening words,
    reworded; its sentences on transforming cards became 712.2, which holds
    more of its words (a subset score of 90). It goes on as 712.1."""
    transforming = ("include abilities on one or both of their faces that allow the card to either transform or "
                    "convert (turn over to its other face) and/or allow the card to be cast or enter the battlefield "
                    "transformed or converted (with its back face up).")
    kept = ["Each face of a double-faced card has its own set of characteristics."]
    old = Release.build("old", _release([
        "A double-faced card has a Magic card face on each side rather than a Magic card face on one side and "
        "a Magic card back on the other. There are two kinds of double-faced cards. Transforming double-faced "
        f"cards {transforming} Modal double-faced cards have two faces that are independent from one another, "
        "and they can't transform or convert.", *kept], ["712.1", "712.4"]))
    new = Release.build("new", _release([
        "A double-faced card has a Magic card face on one side and either a Magic card face or half of an "
        "oversized card face on the other. (It does not have a Magic card back.) There are three kinds of "
        "double-faced cards: transforming double-faced cards, modal double-faced cards, and meld cards.",
        f"Transforming double-faced cards have a Magic card face on each side and {transforming}", *kept],
        ["712.1", "712.2", "712.5"]))
    assert align_pair(old, new).pairs == {0: 0, 1: 2}


def test_a_rule_moves_into_a_new_section_only_from_its_own_chapter() -> None:
    """2010-02 added the Commander variant (903) and dropped Grand Melee's
    win/lose rule 808.6, worded much as the new 903.12: not a move across chapters."""
    kept = ["Grand Melee is a variant for ten or more players.", "Each player has their own turn."]
    teams = "The Teams variant is a multiplayer variant played among teams."
    dropped = "The Grand Melee variant uses the normal rules for winning and losing the game."
    added = "The Commander variant includes the following specification for winning and losing the game."
    old = Release.build("old", _release([*kept, dropped, teams], ["808.1", "808.2", "808.6", "809.1"]))

    def new(number: str) -> Release:
        title = Element("r", 100, 100, "section", f"{section_of(number)}. Commander", body="Commander",
                        number_as_written=section_of(number), text="Commander")
        return Release.build("new", _release([*kept, teams, added], ["808.1", "808.2", "809.1", number])
                                     + [title])

    assert align_pair(old, new("903.12")).pairs == {0: 0, 1: 1, 3: 2}
    # Into a new section of its own chapter, it may go.
    assert align_pair(old, new("812.12")).pairs == {0: 0, 1: 1, 2: 3, 3: 2}


def test_a_rule_keeps_its_number_only_if_it_keeps_some_of_its_words() -> None:
    """2009-02 dropped the modal replacement effect rule 419.6g and gave its
    number to a new rule on skipping a step, then taking another action: 42 alike
    by the letters, but with hardly a longer word in common. Removed, not reworded."""
    skipped = ("Anything scheduled for a skipped step, phase, or turn won't happen. Anything scheduled for the "
               "next occurrence of something waits for the first occurrence that isn't skipped.")
    draws = "Some effects replace card draws. These effects are applied even if no cards could be drawn."
    old = Release.build("old", _release([
        skipped, 'Some replacement effects say "instead choose one -- ." Such effects are called modal replacement '
        "effects. The mode is chosen as the replacement effect is applied. If a modal replacement effect would "
        "apply to multiple events, a different mode may be chosen for each event.", draws],
        ["419.6f", "419.6g", "419.6h"]))
    new = Release.build("new", _release([
        skipped, "Some effects cause a player to skip a step, phase, or turn, then another action. That action is "
        "considered to be the first thing that happens during the next step, phase, or turn to actually occur.",
        draws], ["419.6f", "419.6g", "419.6h"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 2: 2} and 1 not in step.merged_into


def test_a_rule_absorbed_by_its_neighbour_is_merged_not_paired_loosely() -> None:
    # Rules before it that kept their numbers (a release whose numbering stands).
    kept = ["To exile an object, move it to the exile zone.", "To scry N, look at the top N cards.",
            "To sacrifice a permanent, its controller moves it to its owner's graveyard."]
    numbers = ["701.22a", "701.23a", "701.24a", "701.25a", "701.25b", "701.25c", "701.25d"]
    titles = [Element("r", 100 + k, 100 + k, "section", f"701.{k}. {t}", body=t, number_as_written=f"701.{k}", text=t)
              for k, t in ((22, "Exile"), (23, "Scry"), (24, "Sacrifice"), (25, "Transform"))]
    old = Release.build("old", _release(kept + _TRANSFORM_OLD, numbers[:6]) + titles)
    new = Release.build("new", _release(kept + _TRANSFORM_NEW, numbers[:6]) + titles)
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 2, 3: 3, 5: 4}
    assert step.merged_into == {4: 3}
    # Restated by a free rule as well as absorbed: then it continues there.
    restated = [*_TRANSFORM_NEW, "To transform a permanent, turn it over so its other face is up."]
    new = Release.build("new", _release(kept + restated, numbers) + titles)
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 2, 3: 3, 4: 6, 5: 4} and not step.merged_into


def _section_release(sid: str, section: str, title: str, rules: list[tuple[str, str]]) -> Release:
    """A release of one section: its title line, then its rules under it."""
    elements = [Element(sid, 1, 1, "section", f"{section}. {title}", body=title, number_as_written=section,
                        text=title)]
    elements += [Element(sid, k + 2, k + 2, "rule", f"{n} {t}", body=t, number_as_written=n, parent_line=1, text=t)
                 for k, (n, t) in enumerate(rules)]
    return Release.build(sid, elements)


def test_a_keywords_definition_goes_on_in_its_definition() -> None:
    """July 2009 rewrote lifelink from a triggered ability to a static one:
    502.68a and 702.13a are as alike letter by letter as any two rules, but
    each is the rule of its section that says what lifelink is."""
    old = _section_release("old", "502.68", "Lifelink", [
        ("502.68a", 'Lifelink is a triggered ability. "Lifelink" means "Whenever this permanent deals damage, '
                    'you gain that much life."'),
        ("502.68b", "If a permanent has multiple instances of lifelink, each triggers separately.")])
    new = _section_release("new", "702.13", "Lifelink", [
        ("702.13a", "Lifelink is a static ability. Damage dealt by a source with lifelink causes that source's "
                    "controller, or its owner if it has no controller, to gain that much life (in addition to "
                    "any other results that damage causes). See rule 118.3."),
        ("702.13b", "Multiple instances of lifelink on the same object are redundant.")])
    assert align_pair(old, new).pairs.get(0) == 0


def test_two_definitions_for_one_keyword_section_are_neither_paired() -> None:
    """Two old keyword sections paired with one new one (bands with other went
    into banding) each have a definition left over: the new definition was
    paired with both (one new rule, two lineages). Now with neither."""
    def release(sid: str, sections: list[tuple[str, str, list[tuple[str, str]]]]) -> Release:
        elements, line = [], 1
        for number, title, rules in sections:
            head = line
            elements.append(Element(sid, line, line, "section", f"{number}. {title}", body=title,
                                    number_as_written=number, text=title))
            for n, text in rules:
                line += 1
                elements.append(Element(sid, line, line, "rule", f"{n} {text}", body=text, number_as_written=n,
                                        parent_line=head, text=text))
            line += 1
        return Release.build(sid, elements)

    old = release("old", [("502.10", "Banding", [("502.10a", "Banding is an ability of old creatures, quirky.")]),
                          ("502.11", "Bands with other", [("502.11a", "Bands with other is a variant of banding.")])])
    new = release("new", [("702.21", "Banding", [("702.21a", "Banding is a static ability that modifies combat.")])])
    step = Step(sections={"502.10": "702.21", "502.11": "702.21"})
    leftovers.keyword_defined(old, new, step)
    assert step.pairs == {}
    step = Step(sections={"502.10": "702.21"})
    leftovers.keyword_defined(old, new, step)
    assert step.pairs == {0: 0}


def test_a_rule_goes_on_in_the_rule_it_opens_word_for_word() -> None:
    """2003-07-01: 214.9d ("The basic land types are ...") and 214.9e (their
    mana abilities) became one rule, 212.6d, which opens with 214.9d's first
    sentence; 214.9e is closer to it word for word, but was taken in after it."""
    old = _section_release("old", "214.9", "Lands", [
        ("214.9d", "The basic land types are plains, island, swamp, mountain, and forest. A land with one of "
                   "these words as its name is a basic land. Other lands can state that they are lands of one "
                   "or more basic land types. A land that has one or more basic land types is not necessarily "
                   "a basic land. Moreover, the name of a land with a single land type that's basic becomes "
                   "that basic land-type word."),
        ("214.9e", "A land with a basic land type has an intrinsic ability to produce colored mana. (See rule "
                   '406.1, "Mana Abilities.") The card is treated as if its text box read, "T: Add [mana '
                   'symbol] to your mana pool," even if the text box doesn\'t actually contain text. Plains '
                   "produce white mana; islands, blue; swamps, black; mountains, red; and forests, green.")])
    new = _section_release("new", "212.6", "Land", [
        ("212.6d", 'The basic land types are Plains, Island, Swamp, Mountain, and Forest. If an object uses '
                   'the words "basic land type," it\'s referring to one of these subtypes. A land with a basic '
                   "land type has an intrinsic ability to produce colored mana. (See rule 406, \"Mana "
                   'Abilities.") The land is treated as if its text box included, "{oT}: Add [mana symbol] to '
                   'your mana pool," even if the text box doesn\'t actually contain text. Plains produce white '
                   "mana; Islands, blue; Swamps, black; Mountains, red; and Forests, green.")])
    step = align_pair(old, new)
    assert step.pairs == {0: 0} and step.merged_into == {1: 0}


_COIN_FLIP = ("An effect that instructs a player to flip a coin may care whether that player wins or loses the "
              "flip. To flip a coin for such an effect, the player flips the coin and calls \u201cheads\u201d or "
              "\u201ctails.\u201d If the call matches the result, the player wins the flip. Otherwise, the player "
              "loses the flip. Only the player who flips the coin wins or loses the flip; no other players are "
              "involved.")


@pytest.mark.parametrize(("old_rules", "new_rules", "pairs", "merged"), [
    # 2022-07-08: 705.2 kept its number and opens the new 705.2 in other words; 705.1's call follows.
    ([("705.1", _COIN_FLIP),
      ("705.2", "If an effect instructs a player to flip a coin and that effect cares only whether the coin "
                "comes up heads or tails without specifying a winner or loser of the flip, that player flips a "
                "coin without making a call. No player wins or loses this kind of flip.")],
     [("705.1", "Some cards refer to flipping a coin."),
      ("705.2", "Some effects that instruct a player to flip a coin care only about whether the coin comes up "
                "heads or tails. No player wins or loses a coin flip for this kind of effect. For all other "
                "effects that instruct a player to flip a coin, the player that flips the coin calls "
                "\u201cheads\u201d or \u201ctails.\u201d If the call matches the result, the player wins the "
                "flip. Otherwise, the player loses the flip. Only the player who flips the coin wins or loses "
                "the flip; no other players are involved.")],
     {1: 1}, {0: 1}),
    # 2019-05-03: the new 701.26b is the old 701.26c, which only took the number of the dropped 701.26b.
    ([("701.26b", "If a permanent or player chosen this way has more than one kind of counter, the player who "
                  "is proliferating chooses which kind of counter to add."),
      ("701.26c", "In a Two-Headed Giant game, poison counters are shared by the team. If more than one player "
                  "on a team is chosen this way, only one of those players can be given an additional poison "
                  "counter. See rule 810, \u201cTwo-Headed Giant Variant.\u201d")],
     [("701.26b", "In a Two-Headed Giant game, poison counters are shared by the team. If more than one player "
                  "on a team is chosen this way, only one of those players can be given an additional poison "
                  "counter. The player who proliferates chooses which player that is. See rule 810, "
                  "\u201cTwo-Headed Giant Variant.\u201d")],
     {1: 0}, {}),
    # A few words put before a rule ("in a two-headed giant game, ") are no opening that says
    # what the removed rule under that number said, however many of its words they are.
    ([("810.9", "In a Two-Headed Giant game, each player has his or her own library, graveyard, and "
                "sideboard, and the players on a team can't share cards."),
      ("810.10", "Each team has a shared poison counter total. If an effect causes a player to get poison "
                 "counters, that player's team gets those poison counters. A team with fifteen or more poison "
                 "counters loses the game.")],
     [("810.9", "In a Two-Headed Giant game, each team has a shared poison counter total. If an effect causes a "
                "player to get poison counters, that player's team gets those poison counters. A team with "
                "fifteen or more poison counters loses the game.")],
     {1: 0}, {}),
], ids=["coin-flip-2022", "proliferate-2019", "two-headed-giant"])
def test_a_rule_goes_on_where_its_number_opens_with_it_in_other_words(
        old_rules: list[tuple[str, str]], new_rules: list[tuple[str, str]],
        pairs: dict[int, int], merged: dict[int, int]) -> None:
    """A rule left over whose number a new rule kept goes on there when that
    rule opens with what it said (in other words) and then takes in the rule
    paired with it; not when the new rule opens with its partner's text. (A
    rule that keeps its number and words in both: numbers were kept.)"""
    section = old_rules[0][0].split(".")[0]
    kept = (f"{section}.20", "This rule keeps its number and its words from one release to the next.")
    old = _section_release("old", section, "Flipping a Coin", [*old_rules, kept])
    new = _section_release("new", section, "Flipping a Coin", [*new_rules, kept])
    step = align_pair(old, new)
    assert (step.pairs, step.merged_into) == ({**pairs, len(old_rules): len(new_rules)}, merged)


def test_of_two_rules_gone_into_one_the_one_that_opens_it_goes_on() -> None:
    """2007-05-01: 501.1 (what evasion abilities are) and 501.2 ("evasion abilities
    are cumulative", with an example) became 500.3a, which opens with 501.1's
    definition in other words and ends with 501.2's sentence; 501.2 had taken
    it by their shared example and 501.1 was merged in. 501.1 goes on there."""
    blocks = ("As part of declaring blockers, the defending player checks each creature he or she controls to "
              "see whether it must block, can't block, or has some other blocking restriction or requirement.")
    old = Release.build("old", _release([
        blocks,
        "Evasion abilities restrict what can block an attacking creature. These are static abilities that modify "
        "the declare blockers step of the combat phase.",
        "Evasion abilities are cumulative."], ["500.3", "501.1", "501.2"]))
    new = Release.build("new", _release([
        blocks,
        "An evasion ability is an ability an attacking creature has that restricts what can block it. Evasion "
        "abilities are static abilities that modify the declare blockers step of the combat phase. If a creature "
        "gains or loses an evasion ability after a legal block has been declared, it doesn't affect that block. "
        "Evasion abilities are cumulative."], ["500.3", "500.3a"]))
    step = Step(pairs={0: 0, 2: 1}, scores={0: 100.0, 2: 70.0}, merged_into={1: 1})
    step.sections = {"500": "500", "501": "500"}
    openings.kept_number_opens(old, new, step)
    assert (step.pairs, step.merged_into) == ({0: 0, 1: 1}, {})  # 501.2 is left over ...
    pieces.splits_and_merges(old, new, step, Subjects.of(old, new))
    assert step.merged_into == {2: 1}  # ... and merged in by the pass after


@given(st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=5), min_size=2, max_size=5)
       .filter(lambda rows: len({len(r) for r in rows}) == 1))
def test_each_others_best_pairs_one_to_one_only_clear_winners(rows: list[list[int]]) -> None:
    """``each_others_best``: each cell it returns is the best of its row and of
    its column, no row or column twice, and a tie for the best is never clear."""
    import numpy as np

    scores = np.array(rows, dtype=np.float32)
    found = renumbered.each_others_best(scores, lambda top, second: top > second)
    assert len({r for r, _ in found}) == len(found) == len({c for _, c in found})
    for r, c in found:
        others = [*np.delete(scores[r], c), *np.delete(scores[:, c], r)]
        assert scores[r, c] > max(others)


def test_a_rule_cut_into_a_list_goes_on_in_the_header_that_announces_it() -> None:
    """2006-05-01: 402.8 (where abilities function, and the exceptions in one
    sentence) became the header 402.8, "the exceptions are as follows:", and
    the list 402.8a-g. Its last sentence stands word for word in 402.8g and its
    first has more words in 402.8a than in the header; the rule goes on in the header."""
    old = _section_release("old", "402", "Abilities", [
        ("402.7", "An activated or triggered ability of a permanent is a separate object from its source."),
        ("402.8", "Abilities function only while the permanent with the ability is in play unless the ability is "
                  "a characteristic-setting ability that sets type, subtype, supertype, or color; an ability of an "
                  "instant or sorcery; an additional cost; an alternative cost; or a play restriction. Abilities "
                  "can also function in other zones if they state otherwise or if the ability can only trigger or "
                  "be played in a zone other than the in-play zone. An ability whose cost or effect specifies that "
                  "it moves the object it's on out of a particular zone functions only in that zone.")])
    new = _section_release("new", "402", "Abilities", [
        ("402.7", "An activated or triggered ability of a permanent is a separate object from its source."),
        ("402.8", "Abilities of an instant or sorcery usually function only while the object is on the stack. "
                  "Abilities of all other objects usually function only while that object is in play. The "
                  "exceptions are as follows:"),
        ("402.8a", "A characteristic-setting ability that sets type, subtype, supertype, or color functions in "
                   "all zones."),
        ("402.8b", "An ability that states which zones it functions in functions only from those zones."),
        ("402.8g", "An ability whose cost or effect specifies that it moves the object it's on out of a "
                   "particular zone functions only in that zone.")])
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1} and step.split_from.get(4) == 1


def test_a_rule_gone_whole_into_the_one_item_under_a_new_header_goes_on_there() -> None:
    """The colon is no list when the old rule went whole into one item under it:
    the rule goes on in that item, and the header is new."""
    old = _section_release("old", "103", "Starting the Game", [
        ("103.3", "Each player begins the game with a starting life total of 20."),
        ("103.4", "Each player draws a number of cards equal to his or her starting hand size, which is "
                  "normally seven.")])
    new = _section_release("new", "103", "Starting the Game", [
        ("103.3", "Each player begins the game with a starting life total of 20."),
        ("103.4", "Each player draws a number of cards as follows:"),
        ("103.4a", "Each player draws a number of cards equal to his or her starting hand size, which is "
                   "normally seven cards.")])
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 2}


def test_a_rule_cut_into_subrules_goes_on_in_the_rule_over_them_that_keeps_its_opening() -> None:
    """July 2009: the planeswalker rule 212.9f became 306.7 (when a loyalty
    ability may be activated) over 306.7a (its cost) and 306.7b (a negative
    cost), each holding words of it; it goes on in 306.7, not in the last piece."""
    old = _section_release("old", "212.9", "Planeswalkers", [
        ("212.9e", "Planeswalker subtypes are always a single word and are listed after a long dash."),
        ("212.9f", "Each planeswalker has a number of activated abilities. A player may play an activated ability "
                   "of a planeswalker only during a main phase of his or her turn, when he or she has priority and "
                   "the stack is empty, and only if none of its activated abilities have been played that turn. The "
                   "cost to play an activated ability of a planeswalker is to put on or remove from that "
                   "planeswalker a certain number of loyalty counters, as shown by the loyalty symbol in the "
                   "ability's cost. An ability with a negative loyalty cost can't be played unless the planeswalker "
                   "has at least that many loyalty counters on it.")])
    new = _section_release("new", "306", "Planeswalkers", [
        ("306.6", "Planeswalker subtypes are always a single word and are listed after a long dash."),
        ("306.7", "A player may activate an ability of a planeswalker any time he or she has priority and the "
                  "stack is empty during a main phase of his or her turn, but only if none of its activated "
                  "abilities have been activated that turn."),
        ("306.7a", "The cost to activate an ability of a planeswalker is to put on or remove from that planeswalker "
                   "a certain number of loyalty counters, as shown by the loyalty symbol in the ability's cost."),
        ("306.7b", "An ability with a negative loyalty cost can't be activated unless the planeswalker has at "
                   "least that many loyalty counters on it.")])
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1}


def test_a_rule_whose_inline_items_became_subrules_goes_on_in_the_rule_over_them() -> None:
    """July 2009: the mana ability rule 406.1 ("either (a) an activated ability
    ... or (b) a triggered ability ..., can generate other effects") became
    605.1 (what mana abilities are, "regardless of what other effects they may
    generate") over 605.1a and 605.1b, one item each. The activated item scores
    highest, as every word of it stands in 406.1, and its opening is mostly the
    items; what 406.1 says outside them is in 605.1, where it goes on (held-out
    H23); the activated item is split from it."""
    old = _section_release("old", "406", "Mana Abilities", [
        ("406.1", "A mana ability is either (a) an activated ability without a target that could put mana into a "
                  "player's mana pool when it resolves or (b) a triggered ability without a target that triggers "
                  "from a mana ability and could produce additional mana. A mana ability can generate other "
                  "effects at the same time it produces mana."),
        ("406.3", "A mana ability remains a mana ability even if the game state doesn't allow it to produce mana.")])
    new = _section_release("new", "605", "Mana Abilities", [
        ("605.1", "Some activated abilities and some triggered abilities are mana abilities, which are subject to "
                  "special rules. Only abilities that meet either of the following two sets of criteria are mana "
                  "abilities, regardless of what other effects they may generate or what timing restrictions "
                  "(such as \"Activate this ability only any time you could cast an instant\") they may have."),
        ("605.1a", "An activated ability without a target that could put mana into a player's mana pool when it "
                   "resolves is a mana ability."),
        ("605.1b", "A triggered ability without a target that triggers from activating a mana ability and could put "
                   "mana into a player's mana pool when it resolves is a mana ability."),
        ("605.2", "A mana ability remains a mana ability even if the game state doesn't allow it to produce mana.")])
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 3}
    assert step.split_from.get(1) == 0


def test_an_identical_copy_in_a_new_section_does_not_take_a_rule_restated_at_home() -> None:
    """July 2009: the card types list 205.2a went on in the type line rules as
    204.2a (its words and "See section 3"); the new section 3 opens with 300.1,
    worded as 205.2a was, a copy."""
    types = "The card types are artifact, creature, enchantment, instant, land, planeswalker, sorcery, and tribal."
    old = Release.build("old", [
        Element("old", 1, 1, "section", "205.2. Type Line", body="Type Line", number_as_written="205.2",
                text="Type Line"),
        Element("old", 2, 2, "rule", f"205.2a {types}", body=types, number_as_written="205.2a", parent_line=1,
                text=types)])
    home = f'{types} See section 3, "Card Types."'
    new = Release.build("new", [
        Element("new", 1, 1, "section", "204.2. Type Line", body="Type Line", number_as_written="204.2",
                text="Type Line"),
        Element("new", 2, 2, "rule", f"204.2a {home}", body=home, number_as_written="204.2a", parent_line=1,
                text=home),
        Element("new", 3, 3, "section", "300. General", body="General", number_as_written="300", text="General"),
        Element("new", 4, 4, "rule", f"300.1. {types}", body=types, number_as_written="300.1", parent_line=3,
                text=types)])
    step = align_pair(old, new)
    assert step.pairs == {0: 0}


def test_a_split_rule_goes_on_in_the_piece_that_kept_its_first_sentence() -> None:
    """2008-02-01: the illustration credit rule 209.1 became the general 210.1
    (closer in words: it took "no effect on game play") and 210.1a, which kept
    its first sentence; the lineage goes on in 210.1a."""
    kept = ["The expansion symbol indicates the set the card is from.",
            "Legal text lists the copyright information. It has no effect on game play."]
    old = Release.build("old", _release(
        [*kept, "The illustration credit for a card is printed directly below the text box. "
                "The credit has no effect on game play."], ["208.1", "209.2", "209.1"]))
    new = Release.build("new", _release(
        [*kept, "Each card features text printed below the text box that has no effect on game play.",
         "The illustration credit for a card is printed on the first line below the text box. "
         "It follows the abbreviation Illus."], ["208.1", "209.2", "210.1", "210.1a"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 3}


def test_a_rule_split_into_pieces_it_wholly_holds_goes_on_in_the_one_with_its_first_sentence() -> None:
    """2009-07-11: the card-draw replacement rule 419.6h was cut into 613.11,
    613.11a and 613.11b, each a sentence or two of it word for word, so each
    scores alike. The piece that opens with the old first sentence continues
    it, though a longer piece is closer in raw characters; the others are split
    from it. (A first sentence two rules share still decides this tie.)"""
    head = "Some effects replace card draws."
    tail_1 = "If an effect replaces a draw within a sequence of card draws, the replacement is completed first."
    tail_2 = ("If an effect would have a player both draw a card and perform an additional action on that card, "
              "and the draw is replaced, the additional action is not performed on any cards that are drawn.")
    other = f"{head} Those effects are applied even if no cards could be drawn."
    old = Release.build("old", _release(
        ["Hexproof is a static ability.", other, f"{head} {tail_1} {tail_2}"], ["101.1", "101.2", "101.3"]))
    new = Release.build("new", _release(
        ["Hexproof is a static ability.", other, head, tail_1, tail_2],
        ["101.1", "101.2", "201.1", "201.1a", "201.1b"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 2}
    assert step.split_from == {3: 2, 4: 2}


def test_a_rule_cut_into_a_list_goes_on_in_the_piece_that_opens_as_it_did() -> None:
    """2017-01-20: the look-back rule 603.6d became 603.10 (its opening, with
    the next sentence joined on, then "The list of exceptions is as follows:")
    and one short rule per exception. Each exception holds all of its words in
    the old rule and so scores as a subset above 603.10; the lineage still goes
    on in 603.10, and the exceptions are split from it."""
    opening = ("Normally, objects that exist immediately after an event are checked to see if the event matched "
               "any trigger conditions")
    effects = ("continuous effects that exist at that time are used to determine what the trigger conditions are "
               "and what the objects involved in the event look like")
    exceptions = ["Abilities that trigger when a permanent phases out look back in time.",
                  "Abilities that trigger when a player planeswalks away from a plane look back in time."]
    old_text = (f"{opening}. {effects[0].upper()}{effects[1:]}. However, some triggered abilities must be treated "
                "specially. " + " ".join(exceptions))
    new_text = (f"{opening}, and {effects}. However, some triggered abilities are exceptions to this rule; the game "
                "looks back in time to determine if those abilities trigger. The list of exceptions is as follows:")
    kept = ["Hexproof is a static ability.", "Flanking is a triggered ability."]
    old = Release.build("old", _release([*kept, old_text], ["603.5", "603.6c", "603.6d"]))
    new = Release.build("new", _release([*kept, new_text, *exceptions],
                                                ["603.5", "603.6c", "603.10", "603.10a", "603.10b"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 2}
    assert step.split_from == {3: 2, 4: 2}


def test_a_rule_split_into_its_exceptions_goes_on_in_the_piece_that_opens_with_its_words() -> None:
    """2009-07-11: the timestamp rule 418.5e (its opening, then three exceptions)
    became 612.6c, which opens with the same words and is reworded after them,
    and two pieces that each hold one exception word for word. Two rules that
    open with the same words ("At the end of a subgame of a ...") each stay
    where they were. (That opening outranks only pieces, never a rule far
    closer letter by letter: this case does not reach that guard, the real
    2017 pair in ``test_rules_opening_alike_are_not_swapped`` does.)"""
    aura = ("Whenever an Aura, Equipment, or Fortification becomes attached to an object or player, the Aura, "
            "Equipment, or Fortification receives a new timestamp.")
    together = ("If two or more objects would receive a timestamp simultaneously, such as by entering a zone "
                "simultaneously, the active player determines their timestamp order at that time.")
    old_text = ("An object's timestamp is the time it entered the zone it's currently in, with two exceptions: "
                f"(a) {aura[0].lower()}{aura[1:]} (b) {together[0].lower()}{together[1:]}")
    new_text = ("An object's timestamp is the time it entered the zone it's currently in, unless it's an Aura, "
                "Equipment, or Fortification that's attached to another object or player.")
    subgames = ["At the end of a subgame of a Planechase game, each face-up plane card is turned face down and put "
                "on the bottom of its owner's planar deck.",
                "At the end of a subgame of a Vanguard game, each player moves his or her vanguard card from the "
                "subgame command zone to the main-game command zone."]
    kept = ["Hexproof is a static ability.", "Flanking is a triggered ability."]
    old = Release.build("old", _release([*kept, old_text, *subgames], ["612.5", "612.6a", "612.6b",
                                                                                "612.7a", "612.7b"]))
    new = Release.build("new", _release(
        [*kept, new_text, aura, together, subgames[0].replace("face-up ", ""),
         subgames[1].replace("his or her", "their")],
        ["612.5", "612.6a", "612.6c", "612.6d", "612.6e", "612.7a", "612.7b"]))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 2: 2, 3: 5, 4: 6}
    assert step.split_from == {3: 2, 4: 2}


def _titled(sid: str, *sections: tuple[str, str]) -> list[Element]:
    return [Element(sid, 900 + k, 900 + k, "section", f"{n}. {t}", body=t, number_as_written=n, text=t)
            for k, (n, t) in enumerate(sections)]


def test_a_rule_cut_into_itself_and_new_subrules_goes_on_under_its_number() -> None:
    """2026-01-16: 500.5 kept its opening ("As a step or phase ends, ... effects
    expire", reworded) and gave its combat and turn sentences to the new 500.5a
    and 500.5b, each a subset of it that scores above 500.5 itself; it also took
    in 500.4's mana sentence. The lineage goes on in 500.5, the pieces are split
    from it, and 500.4 is merged into it."""
    begins = "When a phase or step begins, any effects scheduled to last until that phase or step expire."
    combat = ("Effects that last until end of combat expire at the end of the combat phase, not at the beginning "
              "of the end of combat step.")
    turn = "Effects that last until end of turn are subject to special rules; see rule 514.2."
    mana = "any unused mana left in a player's mana pool empties. This turn-based action doesn't use the stack."
    kept = ["A step in which no players receive priority ends when all specified actions are completed.",
            "When a phase or step begins, any abilities that trigger at the beginning of that phase trigger."]
    old = Release.build("old", _release(
        [kept[0], f"When a step or phase ends, {mana}",
         f"When a phase or step ends, any effects scheduled to last until end of that phase or step expire. "
         f"{begins} {combat} {turn}", kept[1]],
        ["500.3", "500.4", "500.5", "500.6"], "old") + _titled("old", ("500", "General")))
    new = Release.build("new", _release(
        [kept[0], "As a step or phase begins, if there are effects that last until that step or phase, those "
                  "effects expire.",
         "As a step or phase ends, if there are effects that last until the end of that step or phase, those "
         f"effects expire. Then {mana.replace('unused', 'unspent')}", combat, turn, kept[1]],
        ["500.3", "500.4", "500.5", "500.5a", "500.5b", "500.6"], "new") + _titled("new", ("500", "General")))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 2: 2, 3: 5}
    assert step.split_from == {3: 2, 4: 2}
    assert step.merged_into == {1: 2}


def test_a_rule_whose_opening_went_to_a_new_subrule_goes_on_there() -> None:
    """2016-09-30: 508.2 ("Second, any abilities that triggered on attackers
    being declared go on the stack") became 508.2 "Second, the active player
    gets priority" and the new 508.2b, which holds its opening: the lineage
    goes on in 508.2b, not under the number."""
    kept = ["First, the active player declares attackers. This turn-based action doesn't use the stack.",
            "Abilities that trigger on a creature attacking trigger only at the point the creature is declared "
            "as an attacker."]
    old = Release.build("old", _release(
        [kept[0], "Second, any abilities that triggered on attackers being declared go on the stack. (See rule "
                  "603, Handling Triggered Abilities.)", kept[1]], ["508.1", "508.2", "508.2a"], "old")
        + _titled("old", ("508", "Declare Attackers Step")))
    new = Release.build("new", _release(
        [kept[0], "Second, the active player gets priority. (See rule 117, Timing and Priority.)", kept[1],
         "Any abilities that triggered on attackers being declared or that triggered during the process are put "
         "onto the stack before the active player gets priority; the order in which they triggered doesn't matter."],
        ["508.1", "508.2", "508.2a", "508.2b"], "new") + _titled("new", ("508", "Declare Attackers Step")))
    step = align_pair(old, new)
    assert step.pairs[1] == 3


def test_a_rule_goes_with_its_block_when_that_is_closer_letter_by_letter() -> None:
    """2010-02-01: 306.7 and its subrules moved from Planeswalkers into the new
    606 Loyalty Abilities ("an ability of a planeswalker" -> "a loyalty ability
    of a permanent"), and the new summary 306.5d took 306.7's words and more.
    The subset score put 306.7 in 306.5d; it goes on in 606.3, beside where
    306.7a went, which is closer letter by letter."""
    activate = ("A player may activate {} he or she controls any time he or she has priority and the stack is "
                "empty during a main phase of his or her turn, but only if none of its activated abilities have "
                "been activated that turn.")
    cost = ("The cost to activate {0} is to put on or remove from that {1} a certain number of loyalty counters, "
            "as shown by the loyalty symbol in the ability's cost.")
    kept = ["Loyalty is a characteristic only planeswalkers have.", "Planeswalkers can be attacked.",
            "Damage dealt to a planeswalker results in that many loyalty counters being removed from it."]
    old = Release.build("old", _release(
        [kept[0], kept[1], activate.format("an ability of a planeswalker"),
         cost.format("an ability of a planeswalker", "planeswalker"), kept[2]],
        ["306.5", "306.6", "306.7", "306.7a", "306.8"], "old")
        + _titled("old", ("306", "Planeswalkers")))
    new = Release.build("new", _release(
        [kept[0], "Each planeswalker has a number of loyalty abilities. Loyalty abilities follow special rules: "
                  + activate.format("an ability of a planeswalker"), kept[1], kept[2],
         "Some activated abilities are loyalty abilities.",
         activate.format("a loyalty ability of a permanent").replace(
             "none of its activated abilities have been activated", "no player has previously activated a loyalty "
             "ability of that permanent"),
         cost.format("a loyalty ability of a permanent", "permanent")],
        ["306.5", "306.5a", "306.6", "306.7", "606.1", "606.2", "606.3"], "new")
        + _titled("new", ("306", "Planeswalkers"), ("606", "Loyalty Abilities")))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 2, 2: 5, 3: 6, 4: 3}


def test_a_rule_follows_its_section_mates_into_a_section_of_another_title() -> None:
    """2009-07-11: the loop rules of 421 went into 713, Taking Shortcuts; only
    two of the six kept their words (the others gave way to the shortcut
    procedure), too few to pair the sections. The opening 421.1, reworded
    ("repeated forever" -> "repeated indefinitely (thus creating a loop)"),
    is 60 alike letter by letter: it goes where its section-mates went."""
    draw = "If a loop contains only mandatory actions, the game ends in a draw."
    unless = ('If a loop contains an effect that says "[A] unless [B]," where [A] and [B] are each actions, no '
              "player can be forced to perform [B] to break the loop.")
    gone = ["If the loop contains one or more optional actions and one player controls them all, that player "
            "chooses a number.", "If a loop contains optional actions controlled by two players, the active player "
            "chooses a number and the other player then has two choices.",
            "If the loop contains more than one set of optional, independent actions, each player in turn order "
            "chooses a number for his or her sets of actions."]
    # Three rules that kept their words, first in the old release and last in
    # the new, so that 713 is far from where 421.1 stood.
    kept = ["These Magic rules apply to any Magic game.", "There is no maximum deck size.",
            "A subgame can be created within a subgame."]
    old = Release.build("old", _release(
        [*kept, "Occasionally the game can get into a state in which a set of actions could be repeated forever. These "
         'rules (sometimes called the "infinity rules") govern how to break such loops.', gone[0], gone[1], draw,
         gone[2], unless], ["100.1", "100.2", "100.3", "421.1", "421.2", "421.3", "421.4", "421.5", "421.6"], "old")
        + _titled("old", ("100", "General"), ("421", "Handling Infinite Loops")))
    new = Release.build("new", _release(
        ["The rules for taking shortcuts are largely unformalized.",
         "Occasionally the game gets into a state in which a set of actions could be repeated indefinitely (thus "
         'creating a "loop"). In that case, the shortcut rules can be used to determine how many times those '
         "actions are repeated without having to actually perform them.", draw, unless, *kept],
        ["713.1", "713.2", "713.4", "713.6", "800.1", "800.2", "800.3"], "new")
        + _titled("new", ("713", "Taking Shortcuts"), ("800", "General")))
    step = align_pair(old, new)
    assert step.pairs == {0: 4, 1: 5, 2: 6, 3: 1, 6: 2, 8: 3}


def test_a_rule_moved_far_goes_on_in_one_that_cites_what_it_cited() -> None:
    """2004-10-01: 212.4j ("An object that is an enchant world is a global
    enchantment ... (See rule 420.5i.)") went into the supertype rules as
    205.4d ("Any permanent with the supertype world is subject to ... the world
    rule (see rule 420.5i)"): 62 alike letter by letter, too little for a rule
    moved far, but both cite the world rule."""
    legend = ('Any permanent with the supertype "legendary" is subject to the state-based effect for legendary '
              "permanents (see rule 420.5e).")
    world_sba = "If two or more permanents have the supertype world, all except the newest are put into the graveyard."
    global_ench = 'A global enchantment simply has "enchantment" as its type.'

    def release(sid: str, rules: list[tuple[str, str]], *sections: tuple[str, str]) -> Release:
        titles = _titled(sid, *sections)
        at = {el.number_as_written: el.line_start for el in titles}
        els = [Element(sid, k + 1, k + 1, "rule", f"{n} {t}", body=t, number_as_written=n, text=t,
                       parent_line=at[n.partition(".")[0]]) for k, (n, t) in enumerate(rules)]
        return Release.build(sid, els + titles)

    sections = (("205", "Type Line"), ("212", "Enchantments"), ("420", "State-Based Effects"))
    old = release("old", [("205.4c", legend), ("212.4c", global_ench),
                          ("212.4j", 'An object that is an "enchant world" is a global enchantment. It\'s subject '
                                     "to the state-based effect for enchant worlds. (See rule 420.5i.)"),
                          ("420.5i", world_sba)], *sections)
    new = release("new", [("205.4c", legend),
                          ("205.4d", 'Any permanent with the supertype "world" is subject to the state-based effect '
                                     'for world permanents, also called the "world rule" (see rule 420.5i).'),
                          ("212.4c", global_ench), ("420.5i", world_sba)], *sections)
    assert MIN_NEAR <= similarity([old.keys[2]], [new.keys[1]], 0.0)[0][0, 0] < MIN_FAR
    assert align_pair(old, new).pairs == {0: 0, 1: 2, 2: 1, 3: 3}


def test_a_rule_moved_far_and_split_goes_on_in_the_piece_with_its_first_sentence() -> None:
    """2009-07-11: 200.7 ("An ability can be one of two things. First, it can be
    an activated or triggered ability on the stack. Second, ...") became 112.1,
    its first sentence alone ("An ability can be one of two things:"), with
    the subrules 112.1a-b. Far from where it stood, the piece with its second
    sentence scored a little higher; the one that opens as it did goes on."""
    kept = ["These Magic rules apply to any Magic game.", "There is no maximum deck size.",
            "A subgame can be created within a subgame."]
    old = Release.build("old", _release(
        [*kept, "An ability can be one of two things. First, it can be an activated or triggered ability on the "
                "stack. Second, it can be text on an object that explains what the object does. (See rule 402, "
                '"Abilities," and section 4, "Spells, Abilities, and Effects.")'], ["100.1", "100.2", "100.3", "200.7"],
        "old")
        + _titled("old", ("100", "General"), ("200", "Characteristics")))
    new = Release.build("new", _release(
        ["An ability can be one of two things:",
         "An ability is a characteristic an object has that lets it affect the game. An object's abilities are "
         "defined by its rules text.",
         "An ability can be an activated or triggered ability on the stack. This kind of ability is an object. "
         '(See section 6, "Spells, Abilities, and Effects.")',
         *kept], ["112.1", "112.1a", "112.1b", "800.1", "800.2", "800.3"], "new")
        + _titled("new", ("112", "Abilities"), ("800", "General")))
    step = align_pair(old, new)
    assert step.pairs == {0: 3, 1: 4, 2: 5, 3: 0}


def test_a_number_taken_by_a_neighbours_piece_is_no_rewording() -> None:
    """2010-02-01: 702.12b ("Landwalk is an evasion ability. A creature with
    landwalk is unblockable as long as ...") kept its number and its first
    sentence; its second sentence became the new 702.12c. The old 702.12c
    ("If a player is allowed to choose any landwalk ability, ...") was removed:
    under the same number, 48 alike, it is still no rewording of that piece."""
    generic = "Landwalk is a generic term that appears within an object's rules text as [type]walk."
    unblockable = ("A creature with landwalk is unblockable as long as the defending player controls at least one "
                   'land with the specified subtype (as in "islandwalk"), with the specified supertype (as in '
                   '"legendary landwalk"), without the specified supertype (as in "nonbasic landwalk"), or with '
                   'both the specified subtype and the specified supertype (as in "snow swampwalk"). (See rule '
                   '509, "Declare Blockers Step.")')
    cancel = "Landwalk abilities don't cancel one another."
    titles = ("702.12", "Landwalk")
    old = Release.build("old", _release(
        [generic, f"Landwalk is an evasion ability. {unblockable}",
         "If a player is allowed to choose any landwalk ability, that player chooses a landwalk ability that "
         "includes one land subtype and/or one supertype. The chosen ability doesn't need to have been printed "
         "on a card.", cancel],
        ["702.12a", "702.12b", "702.12c", "702.12d"], "old") + _titled("old", titles))
    new = Release.build("new", _release(
        [generic, "Landwalk is an evasion ability.", unblockable, cancel],
        ["702.12a", "702.12b", "702.12c", "702.12d"], "new") + _titled("new", titles))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 3: 3}
    assert step.split_from == {2: 1}


def test_a_rule_rewritten_round_its_examples_goes_on_where_they_went() -> None:
    """2016-04-08: the double-faced card rule 711.5 was rewritten round its two
    examples (Clone, Cytoshape); it goes on in the rule that kept them, not in a
    new rule about as close in words (both too far for the first passes)."""
    kept = ["Each face of a double-faced card has its own set of characteristics.",
            "If a double-faced card is cast as a spell, it's put on the stack with its front face up."]
    example = ("Example: Clone copies a double-faced permanent with its back face up; "
               "the copy has the back face's characteristics but can't transform.")
    title = Element("r", 90, 90, "section", "711. Double-Faced Cards", body="Double-Faced Cards",
                    number_as_written="711", text="Double-Faced Cards")

    def release(sid: str, texts: list[str], numbers: list[str]) -> Release:
        els = _release(texts, numbers, sid)
        at = next(el.line_start for el in els if el.number_as_written == "711.5")
        return Release.build(sid, [title._replace(source_id=sid), *els, Element(
            sid, 50, 50, "example", example, body=example, parent_line=at, text=example)])

    old = release("old", [*kept, "Except for determining whether a permanent can transform, an effect that needs "
                                 "information about a double-faced permanent sees only the face that is up."],
                  ["711.3", "711.4", "711.5"])
    reworded = ("Transforming is for double-faced cards only. Everything else about one is read off the face "
                "showing.")
    closer = ("If a spell tells a player to transform a permanent whose other face is an instant card, nothing "
              "happens to that double-faced permanent.")
    new = release("new", [*kept, reworded, closer], ["711.3", "711.4", "711.5", "711.6"])
    # In words the old rule is closer to the new 711.6, and too far from both for the first passes ...
    matrix = similarity([old.keys[2]], [new.keys[2], new.keys[3]], 0.0)[1]
    assert MIN_SAME_SECTION < matrix[0, 0] < matrix[0, 1] < MIN_NEAR
    # ... but it goes on in 711.5, which kept its example.
    assert align_pair(old, new).pairs == {0: 0, 1: 1, 2: 2}


def test_a_rule_left_over_whose_example_went_into_another_was_merged_there() -> None:
    """2009-07-11: trample's 502.9e ("it's legal to assign damage from those
    without trample so as to maximize the damage of those with trample") is
    too unlike 702.17b in words to be merged by them, and 51 alike to the new
    planeswalker rule 702.17d, which took it as a rule rewritten in place. Its
    example, reworded a little, went into 702.17b, which continues 502.9b: it
    was merged there."""
    title = Element("r", 90, 90, "section", "702.17. Trample", body="Trample", number_as_written="702.17",
                    text="Trample")
    assign = ("The controller of an attacking creature with trample first assigns damage to the creature(s) "
              "blocking it. If all those blocking creatures are assigned lethal damage, any remaining damage is "
              "assigned as its controller chooses.")
    example = ("Example: A 2/2 creature that can block multiple attackers blocks two attackers: a 1/1 with no "
               "special abilities and a 3/3 with trample. The attacking player could assign 1 damage from the "
               "first attacker and 1 damage from the second to the blocking creature, and 2 damage to the "
               "defending player from the creature with trample.")

    def release(sid: str, texts: list[str], numbers: list[str], with_example: str, text: str) -> Release:
        els = _release(texts, numbers, sid)
        at = next(el.line_start for el in els if el.number_as_written == with_example)
        return Release.build(sid, [title._replace(source_id=sid), *els, Element(
            sid, 50, 50, "example", text, body=text, parent_line=at, text=text)])

    redundant = "Multiple instances of trample on the same creature are redundant."
    old = release("old", [assign, "When there are several attacking creatures, it's legal to assign damage "
                                  "from those without trample so as to maximize the damage of those with "
                                  "trample.", redundant], ["702.17a", "702.17b", "702.17c"], "702.17b", example)
    new = release("new", [assign.replace("If all", "Once all"),
                          "If a creature with trample is attacking a planeswalker, none of its combat damage can "
                          "be assigned to the defending player.", redundant],
                  ["702.17a", "702.17b", "702.17c"], "702.17a",
                  example.replace("special abilities", "abilities").replace("attacking player", "active player"))
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 2: 2}
    assert step.merged_into == {1: 0}


def test_a_new_subrule_of_an_unchanged_rule_is_no_rule_rewritten_in_place() -> None:
    """2016-08-26: the face-down commander rule 903.10 was removed, and 903.9,
    word for word as it was, gained the new subrule 903.9a (melded
    commanders). Each was the only rule left over in the section, 55 alike;
    the new subrule elaborates 903.9 and is no rewording of 903.10."""
    cast = "A player may cast a commander he or she owns from the command zone."
    replace = ("If a commander would be exiled from anywhere or put into its owner's hand, graveyard, or library "
               "from anywhere, its owner may put it into the command zone instead.")
    ending = "The Commander variant includes the following specification for winning and losing the game."
    face_down = ("If a card is put into the exile zone face down from anywhere, and a player is allowed to look at "
                 "that card in exile, the player must immediately do so. If it's a commander owned by another "
                 "player, the player that looked at it turns it face up and puts it into the command zone.")
    melded = ("If a commander is a melded permanent and its owner chooses to put it into the command zone this "
              "way, that permanent and the card representing it that isn't a commander are put into the "
              "appropriate zone, and the commander is put into the command zone.")

    def release(sid: str, texts: list[str], numbers: list[str]) -> Release:
        # Every rule under the section's heading (line 900), as in a real release.
        rules = [el._replace(parent_line=900) for el in _release(texts, numbers, sid)]
        return Release.build(sid, rules + _titled(sid, ("903", "Commander")))

    old = release("old", [cast, replace, face_down, ending], ["903.8", "903.9", "903.10", "903.11"])
    new = release("new", [cast, replace, melded, ending], ["903.8", "903.9", "903.9a", "903.10"])
    assert similarity([old.keys[2]], [new.keys[2]], 0.0)[1][0, 0] > MIN_SAME_SECTION
    step = align_pair(old, new)
    assert step.pairs == {0: 0, 1: 1, 3: 3}
    assert not step.merged_into


_VOCABULARY = [
    "creature", "player", "spell", "ability", "target", "counter", "damage", "library", "graveyard",
    "battlefield", "token", "mana", "cost", "attacking", "blocking", "controller", "opponent", "permanent",
    "card", "turn", "step", "phase", "combat",
]
_WORDS = st.lists(st.sampled_from(_VOCABULARY), min_size=6, max_size=14).map(" ".join)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(_WORDS, min_size=3, max_size=12, unique=True), st.integers(0, 11), _WORDS)
def test_an_inserted_rule_shifts_the_numbers_after_it(texts: list[str], at: int, new: str) -> None:
    """A rule inserted anywhere renumbers every later rule; each old rule still
    pairs with its own wording, and the new one starts a lineage of its own."""
    at = min(at, len(texts))
    if new in texts:
        return
    old = _release(texts, sid="old")
    later = texts[:at] + [new] + texts[at:]
    after = _release(later, sid="new")
    step = align_pair(Release.build("old", old), Release.build("new", after))
    assert step.pairs == {i: (i if i < at else i + 1) for i in range(len(texts))}


@pytest.mark.slow  # a job run
def test_a_partial_copy_never_ends_a_lineage(tmp_path: Path) -> None:
    """A truncated copy of a release is attached to a release, not chained:
    nothing ends in it, and its rules keep their lineages."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("cr-2011-06-17.txt", "cr-2016-08-26.txt"):
        shutil.copy(RAW / name, raw / name)
    shutil.copy(DATA / "damaged" / "cr-2011-09-30__pit142857.txt", raw)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "-q", "--raw", str(raw), "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = Published.load(out)
    assert not [lid for lid, r in data.lineages.items() if r["ended_in"] == "cr-2011-09-30__pit142857"]
    assert data.sources["cr-2011-09-30__pit142857"]["numbering_like"] in ("cr-2011-06-17", "cr-2016-08-26")
    assert data.lineages[data.find("702.87a", source="cr-2011-09-30__pit142857")]["canonical_number"] == "702.88a"


@pytest.mark.slow  # a job run
def test_a_suspect_half_release_is_mapped_through_the_release_it_matches(tmp_path: Path) -> None:
    """Half of a release fails the rule-count check (suspect, exit 3), but what
    it holds is rules of a release: mapped through it, not left unmapped with
    the reason "no official release in the run" (there were two)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("cr-2011-06-17.txt", "cr-2016-08-26.txt"):
        shutil.copy(RAW / name, raw / name)
    data = (RAW / "cr-2016-08-26.txt").read_bytes()
    (raw / "half.txt").write_bytes(data[:len(data) // 4 * 2])  # UTF-16: whole code units
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "-q", "--raw", str(raw), "--out", str(out)])
    assert result.exit_code == 3, result.output
    data_out = Published.load(out)
    assert data_out.sources["half"]["status"] == "suspect"
    assert "rule_count: 1074 rules; around it: cr-2016-08-26 1974" in data_out.sources["half"]["suspect"]
    assert data_out.sources["half"]["numbering_like"] == "cr-2016-08-26"
    rows = [r for r in table_rows(out, "renumber_map") if r["source_id"] == "half" and not r["title"]]
    assert rows and not [r for r in rows if r["method"] == "unmapped" and "no official release" in r["reason"]]
    assert sum(r["method"] == "same" for r in rows) > 0.9 * len(rows)
    assert not [lid for lid, r in data_out.lineages.items() if r["ended_in"] == "half"]
    # Diffed from, the half copy lacks rules without their being added since (it had
    # given 900 "added"); from the release before, what the half holds is new.
    half = diff(out, "half", "cr-2016-08-26")
    assert "added" not in half["counts"] and half["note"].startswith("half is not a whole release")
    whole = diff(out, "cr-2011-06-17", "cr-2016-08-26")
    assert whole["note"] is None and whole["counts"]["added"] > diff(out, "cr-2011-06-17", "half")["counts"]["added"]


def test_a_copy_cut_before_its_rules_is_read_as_the_release_of_its_date(tmp_path: Path) -> None:
    """The first 3,000 bytes of cr-2026-04-17 (its front matter: no rule to match)
    are attached to the release of the date they state, not to the newest one."""
    (tmp_path / "cut.txt").write_bytes((RAW / "cr-2026-04-17.txt").read_bytes()[:3000])
    read = [read_source(RAW / f"{name}.txt", RAW, Settings(jobs=1))[:2]
            for name in ("cr-2026-01-16", "cr-2026-04-17", "cr-2026-08-07")]
    read.append(read_source(tmp_path / "cut.txt", tmp_path, Settings(jobs=1))[:2])
    assert read[-1][0].effective_date == "2026-04-17" and not [el for el in read[-1][1] if el.kind == "rule"]
    vocab = Vocabulary.build([])
    numbered = numbering.number([src for src, _ in read], [clean(els, vocab) for _, els in read])
    assert numbered.attached == {"cr-2026-01-16": "cr-2026-01-16", "cr-2026-04-17": "cr-2026-04-17",
                                 "cr-2026-08-07": "cr-2026-08-07", "cut": "cr-2026-04-17"}


@pytest.mark.slow  # job runs
def test_adding_a_release_aligns_only_the_new_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps are cached by the content of both releases: a re-run with one release
    more aligns one pair, and gives the lineages a cold run gives."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("cr-1999-04-23.txt", "cr-1999-11-01.txt"):
        shutil.copy(RAW / name, raw / name)
    aligned: list[tuple[str, str]] = []
    real = align_pair

    def counting(a: Release, b: Release) -> Step:
        aligned.append((a.source_id, b.source_id))
        return real(a, b)

    monkeypatch.setattr(chain, "align_pair", counting)
    args = ["ingest", "-q", "--jobs", "1", "--raw", str(raw), "--cache-dir", str(tmp_path / "cache")]
    assert CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")]).exit_code == 0
    assert aligned == [("cr-1999-04-23", "cr-1999-11-01")]
    shutil.copy(RAW / "cr-2001-09-24.txt", raw)
    aligned.clear()
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert aligned == [("cr-1999-11-01", "cr-2001-09-24")]
    # Both steps stay in the pruned cache; a cold run agrees with the cached one.
    assert len([p for p in (tmp_path / "cache").iterdir() if p.suffix == ".pickle"]) == 3 + 2
    cold = CliRunner().invoke(main, [*args[:-2], "--full", "--out", str(tmp_path / "cold")])
    assert cold.exit_code == 0, cold.output
    assert aligned[1:] == [("cr-1999-04-23", "cr-1999-11-01"), ("cr-1999-11-01", "cr-2001-09-24")]
    for name in ("lineages.csv", "renumber_map.csv", "rule_history.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes()


def test_resolve_old_citations(bundled: Bundled) -> None:
    out = bundled[1]
    entwine = resolve(out, "CR 502.32a", as_of="2004-12-01")
    assert entwine["current"] == "702.42a"
    assert entwine["status"] == "moved+edited"
    assert [c["number"] for c in entwine["chain"]] == ["502.32a", "702.39a", "702.40a", "702.41a", "702.42a"]
    # Each kind of change with its releases (the text had said "moved+edited in cr-2021-04-22",
    # which only renumbered it); read in the releases: reworded in July 2009 and 2019-06-14.
    assert entwine["edited_in"] == ["cr-2009-07-11", "cr-2019-06-14"]
    assert entwine["moved_in"] == ["cr-2009-07-11", "cr-2011-06-17", "cr-2013-07-13", "cr-2021-04-22"]
    # An undated dump (numbered as cr-2012-02-01) cites as that release: it had listed every move since 2009.
    dump = resolve(out, "702.40a", source="000_eb8496d4591d3274")
    assert (dump["moved_in"], dump["edited_in"]) == (["cr-2013-07-13", "cr-2021-04-22"], ["cr-2019-06-14"])
    totem = resolve(out, "702.87a", source="cr-2011-06-17")
    assert totem["current"] == "702.89a" and totem["status"] == "moved+edited"  # renumbered and renamed


def test_cli_trace_and_resolve(bundled: Bundled) -> None:
    out = str(bundled[1])
    runner = CliRunner()
    result = runner.invoke(main, ["trace", "502.32a", "--as-of", "2005-01-01", "--out", out])
    assert result.exit_code == 0, result.output
    assert "now 702.42a" in result.output.splitlines()[0]
    assert "702.39a    moved+edited" in result.output
    # A capital letter is the rule's letter ("no rule 702.42A" had been the answer).
    capital = runner.invoke(main, ["trace", "502.32A", "--as-of", "2005-01-01", "--out", out])
    assert (capital.exit_code, capital.output) == (0, result.output)
    result = runner.invoke(main, ["resolve", "rule 502.32a", "--as-of", "2005-01-01", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["current"] == "702.42a" and found["chain"][0] == {
        "source_id": "cr-2003-10-01", "effective_date": "2003-10-01", "number": "502.32a"}
    result = runner.invoke(main, ["trace", "502.14a", "--out", out])  # Snow-Covered's slot, then Vigilance's
    assert result.exit_code == 1 and "different rules over the years" in result.output
    result = runner.invoke(main, ["trace", "702.89", "--out", out])
    assert result.exit_code == 0 and "Totem Armor" in result.output and "Umbra Armor" in result.output


@pytest.mark.slow  # job runs
def test_a_date_names_the_release_not_a_copy_or_a_truncated_one(tmp_path: Path) -> None:
    """A date is the official release in effect then: not a truncated copy that
    states the same date (it had answered "z-partial has no rule 702.19a"), nor
    a copy in a sub-folder, whichever id sorts last."""
    raw = tmp_path / "raw"
    (raw / "sub").mkdir(parents=True)
    for name in ("cr-2024-09-20.txt", "cr-2026-08-07.txt"):
        shutil.copy(RAW / name, raw / name)
    data = (RAW / "cr-2026-08-07.txt").read_bytes()
    (raw / "z-partial.txt").write_bytes(data[: len(data) // 2])  # ends in 701: no 702 at all
    shutil.copy(RAW / "cr-2026-08-07.txt", raw / "sub" / "cr-2026-08-07.txt")
    # The same release saved again with other line ends: other bytes, the same date.
    (raw / "sub" / "crlf.txt").write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["ingest", "--raw", str(raw), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 3 and "z-partial.txt" in result.output, result.output  # suspect, published
    assert Published.load(out).releases == ["cr-2024-09-20", "cr-2026-08-07"]
    assert [r.source_id for r in sitedata.load(out).releases] == ["cr-2024-09-20", "cr-2026-08-07"]
    trample = resolve(out, "702.19a", as_of="2026-08-07")
    assert (trample["source_id"], trample["current"]) == ("cr-2026-08-07", "702.19a")
    by_date = CliRunner().invoke(main, ["diff", "2024-09-20", "2026-08-07", "--out", str(out)])
    by_id = CliRunner().invoke(main, ["diff", "cr-2024-09-20", "cr-2026-08-07", "--out", str(out)])
    assert by_date.exit_code == 0 and by_date.output == by_id.output


@pytest.mark.parametrize("as_of", ["20050101", "2005-1-1", "2005-13-45", "2005-02-30", "yesterday"])
def test_a_date_that_is_not_yyyy_mm_dd_is_a_usage_error(bundled: Bundled, as_of: str) -> None:
    """Dates are compared with the releases' as text: "2005-1-1" had picked
    cr-2005-02-01 and "20050101" cr-2005-10-01, each with exit 0."""
    out = str(bundled[1])
    for command in (["resolve", "502.32a"], ["trace", "502.32a"]):
        result = CliRunner().invoke(main, [*command, "--as-of", as_of, "--out", out])
        assert result.exit_code == 2 and f"not a date: {as_of!r}" in result.output, result.output
    # diff takes a source id or a date: one shaped like a date but no real date is
    # a usage error as --as-of's is (it exited 1); anything else is no source (1).
    result = CliRunner().invoke(main, ["diff", as_of, "2026-09-01", "--out", out])
    if as_of in ("2005-13-45", "2005-02-30"):
        assert result.exit_code == 2 and f"not a date: {as_of!r}" in result.output, result.output
    else:
        assert result.exit_code == 1 and "give a source id or a YYYY-MM-DD date" in result.output, result.output


def test_sections_are_traced_and_resolved_as_text_and_json(bundled: Bundled) -> None:
    """A section number works wherever a rule number does: trace --json and
    resolve had taken it for a rule ("no rule 702.42 in any source")."""
    out = str(bundled[1])
    runner = CliRunner()
    result = runner.invoke(main, ["trace", "702.42", "--json", "--out", out])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["section"]["title"] == "Entwine" and found["history"][0]["number_as_written"] == "502.32"
    result = runner.invoke(main, ["resolve", "502.14", "--as-of", "2005-01-01", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert (found["current"], found["status"]) == ("702.20", "moved")  # Vigilance
    assert [c["number"] for c in found["chain"]][:2] == ["502.14", "702.18"]
    # A section that ended: its versions and where it ended (it had printed one line and an empty history).
    result = runner.invoke(main, ["trace", "502.14", "--as-of", "2003-01-01", "--out", out])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[1] for line in lines[1:]] == [
        "cr-2001-09-24", "cr-2002-10-07", "cr-2003-07-01", "cr-2003-10-01", "cr-2004-02-01", "cr-2004-10-01"]
    assert all(line.endswith("Snow-Covered") for line in lines[1:-1]) and lines[-1].endswith("removed")
    result = runner.invoke(main, ["resolve", "502.14", "--as-of", "2003-01-01", "--out", out, "--json"])
    found = json.loads(result.output)
    assert (found["current"], found["status"], found["changed_in"]) == (None, "removed", "cr-2004-10-01")
    # 217.8 "Phased-Out" was retitled "Phased Out" (2005-10-01) and ended in July 2009 (read in the releases).
    result = runner.invoke(main, ["trace", "217.8", "--as-of", "2002-01-01", "--json", "--out", out])
    found = json.loads(result.output)
    assert found["ended_in"] == "cr-2009-07-11" and found["history"][-1]["source_id"] == "cr-2009-02-01"
    assert {r["title"] for r in found["history"]} == {"Phased-Out", "Phased Out"}
    # A dump's ended section (Imprint, 502.34), through the release it is numbered as: it had printed no versions.
    found = resolve(Path(out), "502.34", source="002_92f1751b72fc2fc6")
    assert (found["status"], found["changed_in"], found["chain"][0]["source_id"]) == (
        "removed", "cr-2009-07-11", "cr-2003-10-01")
    result = runner.invoke(main, ["trace", "502.14", "--out", out])  # no longer a section number
    assert result.exit_code == 1 and "is a section of older releases" in result.output
    assert "--as-of" in result.output


def test_a_section_several_became_is_traced_one_version_per_release(bundled: Bundled) -> None:
    """Read off the releases: 415 (Editing a Spell or Ability, then Targeted
    Spells and Abilities from 2003) and its subsection 415.7 Changing Targets
    (2003 on) both went into 113 Targets in July 2009, now 115. Their versions
    had been every section that is 115 now, so resolve's chain went
    415 > 415.7 > 415 > 415.7 ... and named each release twice."""
    out = str(bundled[1])
    found = resolve(Path(out), "415.7", as_of="2005-01-01")
    assert found["current"] == "115"
    assert [c["number"] for c in found["chain"]] == ["415", "415.7", "113", "114", "115"]
    assert found["moved_in"] == ["cr-2009-07-11", "cr-2010-10-01", "cr-2019-08-23"]
    result = CliRunner().invoke(main, ["trace", "115", "--json", "--out", out])
    history = json.loads(result.output)["history"]
    releases = [r["source_id"] for r in history]
    assert len(releases) == len(set(releases)) == 72
    by_release = {r["source_id"]: (r["number_as_written"], r["title"]) for r in history}
    assert by_release["cr-2009-02-01"] == ("415", "Targeted Spells and Abilities")
    assert by_release["cr-2009-07-11"] == ("113", "Targets")
    # 216 Tokens was rules of 110 Permanents from 2009 to 2019, then 111 Tokens:
    # its path goes past the releases without it (it had stopped at 2009-02-01).
    found = resolve(Path(out), "216", as_of="2005-01-01")
    assert [c["number"] for c in found["chain"]] == ["216", "111"] and found["moved_in"] == ["cr-2019-08-23"]
    result = CliRunner().invoke(main, ["trace", "111", "--json", "--out", out])
    history = json.loads(result.output)["history"]
    assert (history[0]["source_id"], history[0]["number_as_written"]) == ("cr-1999-04-23", "216")
    assert {r["source_id"] for r in history} >= {"cr-2009-02-01", "cr-2019-08-23"}
    assert not {r["source_id"] for r in history} & {"cr-2009-07-11", "cr-2018-10-05"}


def test_resolve_and_trace_say_what_is_wrong_with_their_arguments(bundled: Bundled) -> None:
    out = str(bundled[1])
    runner = CliRunner()
    result = runner.invoke(main, ["resolve", "--out", out])
    assert result.exit_code == 2 and "give a NUMBER" in result.output and "not both" not in result.output
    result = runner.invoke(main, ["resolve", "502.32a", "--source", "cr-2004-10-01", "--as-of", "2010-01-01",
                                  "--out", out])
    assert result.exit_code == 2 and "not both" in result.output
    result = runner.invoke(main, ["trace", "702.42a", "--source", "cr-2004-10-01", "--as-of", "2005-01-01",
                                  "--out", out])
    assert result.exit_code == 2 and "not both" in result.output
    # A blank number had traced some rule ("Rule : lineage cr-1999-04-23:100.3 ...", exit 0).
    for command in (["trace", ""], ["trace", " ", "--json"], ["resolve", " ", "--as-of", "2004-10-01"]):
        result = runner.invoke(main, [*command, "--out", out])
        assert result.exit_code == 2 and "NUMBER is empty" in result.output, result.output
    # A sentence given as NUMBER had its words glued into one ("has no rule seerule502.68aandrule214.9d").
    result = runner.invoke(main, ["resolve", "see rule 502.68a and rule 214.9d", "--as-of", "2002-12-01",
                                  "--out", out])
    assert result.exit_code == 2 and "'see rule 502.68a and rule 214.9d' is not one rule" in result.output
    assert "--file" in result.output
    result = runner.invoke(main, ["trace", "702.42a 702.43a", "--out", out])
    assert result.exit_code == 2 and "is not one rule or section number" in result.output
    assert "--file" not in result.output
    for number in ("CR 702.42a", "rule 702. 37a.", "702"):  # as people write them: still numbers
        result = runner.invoke(main, ["resolve", number, "--as-of", "2010-01-01", "--out", out])
        assert result.exit_code == 0, result.output


def test_resolve_what_a_trial_user_found(bundled: Bundled, tmp_path: Path) -> None:
    """A trial user's findings (2026-12-03), each as it reads now."""
    out = str(bundled[1])
    runner = CliRunner()
    # 502.2 was First Strike's section until 2009; a rule has the number now. It had said
    # "cr-2005-02-01 has no rule or section 502.2 (a section of cr-1999-04-23 to cr-2009-02-01 ...)".
    result = runner.invoke(main, ["resolve", "502.2", "--as-of", "2005-06-01", "--out", out])
    assert result.exit_code == 0 and result.output.startswith("502.2 (cr-2005-02-01) -> 702.7: moved"), result.output
    # A rule that was split since still says where it moved and was reworded (the lists were empty).
    result = runner.invoke(main, ["resolve", "502.68a", "--as-of", "2009-03-01", "--json", "--out", out])
    found = json.loads(result.output)
    assert found["status"] == "split" and found["current"] == "702.15a"
    assert "cr-2009-07-11" in found["moved_in"] and "cr-2009-07-11" in found["edited_in"]
    # Citations as they stand in a sentence.
    for number in ("(702.19a)", "702.19a,", "702.19a:"):
        result = runner.invoke(main, ["resolve", number, "--as-of", "2010-01-01", "--out", out])
        assert result.exit_code == 0 and result.output.startswith("702.19a (cr-2009-09-04) -> 702.22a"), number
    # --file: a misspelled source is one error (exit 1), not one per citation with exit 3.
    text = tmp_path / "article.txt"
    text.write_text("Entwine (502.32a) and 502.32b.\n", encoding="utf-16")  # read as a release is: UTF-16 too
    result = runner.invoke(main, ["resolve", "--file", str(text), "--source", "cr-2005-2-01", "--out", out])
    assert result.exit_code == 1 and result.output.count("no source 'cr-2005-2-01'") == 1, result.output
    result = runner.invoke(main, ["resolve", "--file", str(text), "--as-of", "2005-01-01", "--out", out])
    assert result.exit_code == 3 and "line 1: 502.32a (cr-2004-10-01) -> 702.42a" in result.output, result.output
    # A rule cited before it was written says which releases have it (it said only "has no rule 502.32a").
    result = runner.invoke(main, ["resolve", "502.32a", "--as-of", "2003-09-30", "--out", out])
    assert result.exit_code == 1 and "cr-2003-07-01 has no rule 502.32a (releases cr-2003-10-01 to " \
                                     "cr-2009-02-01 have one" in result.output, result.output
    # A text with no citation says so (it had printed nothing).
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = runner.invoke(main, ["resolve", "--file", str(empty), "--as-of", "2005-01-01", "--out", out])
    assert result.exit_code == 0 and "no rule citations found in" in result.output
    # A file that is no text (a zip, a PDF) is said to be so (2026-12-04: "no rule citations found", exit 0).
    archive = tmp_path / "rules.zip"
    archive.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    result = runner.invoke(main, ["resolve", "--file", str(archive), "--as-of", "2005-01-01", "--out", out])
    assert result.exit_code == 1 and f"{archive}: cannot be read as text (not text: " in result.output, result.output


@pytest.mark.parametrize("table", ["rule_history.csv", "sources.csv"])
def test_trace_resolve_diff_refuse_a_table_changed_since_it_was_published(
        bundled: Bundled, tmp_path: Path, table: str) -> None:
    """Cut short, rule_history.csv read whole: trace printed '0 versions' and diff
    called every rule added, with exit 0. The size run.json records is checked
    (the commands answer from rules.sqlite; the CSVs are checked as its sources)."""
    copy = tmp_path / "out"
    shutil.copytree(bundled[1], copy, ignore=shutil.ignore_patterns("parquet", "elements.csv"))
    data = (copy / table).read_bytes()
    (copy / table).write_bytes(data[:len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    for command in (["trace", "702.42a"], ["resolve", "502.32a", "--as-of", "2005-01-01"],
                    ["diff", "2005-02-01", "2026-09-01"]):
        result = CliRunner().invoke(main, [*command, "--out", str(copy)])
        assert result.exit_code == 1, result.output
        assert f"{table}: " in result.output and " it was published with (run.json): changed or damaged since" \
            in " ".join(result.output.split())


def test_cli_resolve_file(bundled: Bundled, tmp_path: Path) -> None:
    article = tmp_path / "article.txt"
    article.write_text("Entwine (CR 502.32a) lets you choose all modes.\nSee also rule 100.1.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["resolve", "--file", str(article), "--as-of", "2004-12-01",
                                       "--out", str(bundled[1])])
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("line 1: 502.32a (cr-2004-10-01) -> 702.42a")
    assert lines[1].startswith("line 2: 100.1 (cr-2004-10-01) -> 100.1")
    # A range cites every rule in it (only its first had been resolved).
    article.write_text("See rules 409.1f-h.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["resolve", "--file", str(article), "--as-of", "2004-12-01", "--json",
                                       "--out", str(bundled[1])])
    assert [(r["cited"], r["current"]) for r in json.loads(result.output)] == [
        ("409.1f", "601.2f"), ("409.1g", "601.2g"), ("409.1h", "601.2h")]
    # A section is resolved as `resolve 502.14` resolves it (it had been "no rule 502.14").
    article.write_text("Vigilance is rule 502.14.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["resolve", "--file", str(article), "--as-of", "2004-12-01", "--json",
                                       "--out", str(bundled[1])])
    one = CliRunner().invoke(main, ["resolve", "502.14", "--as-of", "2004-12-01", "--json", "--out", str(bundled[1])])
    found = json.loads(result.output)
    assert [(r["cited"], r["current"], r["status"]) for r in found] == [("502.14", "702.20", "moved")]
    assert {k: v for k, v in found[0].items() if k != "line"} == json.loads(one.output)
    # A number that is a section only in other releases says so ("has no rule 702.42").
    result = CliRunner().invoke(main, ["resolve", "702.42", "--as-of", "2005-01-01", "--out", str(bundled[1])])
    assert result.exit_code == 1 and "cr-2004-10-01 has no rule or section 702.42 (a section of cr-2009-07-11 to " \
        "cr-2026-08-07: give a date or source in those years)" in result.output
    # A three-digit section after "rule" or "section" is a citation too ("100 cards" is not):
    # they were skipped, and a text citing only them was "all current" (exit 0).
    article.write_text("rule 216\nsections 216 and 300; a deck of 100 cards\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["resolve", "--file", str(article), "--as-of", "2005-01-01", "--json",
                                       "--out", str(bundled[1])])
    assert result.exit_code == 3, result.output
    assert [(r["line"], r["cited"], r["current"]) for r in json.loads(result.output)] == [
        (1, "216", "111"), (2, "216", "111"), (2, "300", "500")]


def test_releases_are_chained_by_date_whatever_their_order() -> None:
    texts = ["Flying is evasion.", "Reach lets a creature block flying creatures."]
    grown = texts[:1] + ["Haste lets a creature attack the turn it comes under your control."] + texts[1:]
    sources = [Source("new", "new.txt", "b", 1, format="cr_document", effective_date="2002-01-01"),
               Source("old", "old.txt", "a", 1, format="cr_document", effective_date="2001-01-01")]
    numbered = numbering.number(sources, [_release(grown, sid="new"), _release(texts, sid="old")])
    assert numbered.chain == ["old", "new"] and numbered.reference == "new"
    rows = {(m.source_id, m.number_as_written): m for m in numbered.mappings}
    assert rows["old", "702.3a"].canonical_number == "702.4a" and rows["old", "702.3a"].method == "lineage"
    assert rows["old", "702.2a"].method == "same"


def test_the_same_release_twice_is_the_copy_named_for_it() -> None:
    """A copy of cr-2026-08-07 saved as copy.txt (it sorts first) is attached to
    it: it names neither the reference nor the lineages that start there."""
    texts = ["Flying is evasion.", "Reach lets a creature block flying creatures."]
    sources = [Source("copy", "copy.txt", "b", 1, format="cr_document", effective_date="2026-08-07"),
               Source("cr-2026-08-07", "cr-2026-08-07.txt", "b", 1, format="cr_document", effective_date="2026-08-07"),
               Source("cr-2025-09-19", "cr-2025-09-19.txt", "a", 1, format="cr_document", effective_date="2025-09-19")]
    assert chain.chain_of(sources) == [2, 1]
    numbered = numbering.number(sources, [_release(texts, sid="copy"), _release(texts, sid="cr-2026-08-07"),
                                          _release(texts[:1], sid="cr-2025-09-19")])
    assert numbered.chain == ["cr-2025-09-19", "cr-2026-08-07"] and numbered.reference == "cr-2026-08-07"
    # Without a copy named for the release, the first by id stands for it.
    assert chain.chain_of([sources[0], replace(sources[1], source_id="other")]) == [0]


def test_diff_any_two_releases_matches_through_lineages(bundled: Bundled) -> None:
    """Indestructible (702.12, July 2013) shifts the later keywords by one: moves, not adds and removes."""
    out = str(bundled[1])
    result = CliRunner().invoke(main, ["diff", "2013-05-01", "2016-08-26", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    # One object: the two releases, a note (none here) and the counts, then the changes;
    # a number a change lacks is null, as resolve says "no current number".
    assert (found["from"], found["to"], found["note"]) == ("cr-2013-05-01", "cr-2016-08-26", None)
    changes = found["changes"]
    assert found["counts"] == {kind: n for kind, n in Counter(c["change"] for c in changes).items()}
    assert list(found["counts"]) == [k for k in KINDS if k in found["counts"]]
    assert all(c["old_number"] is None for c in changes if c["change"] == "added")
    assert all(c["new_number"] is None and c["diff"] is None for c in changes if c["change"] == "removed")
    totem = [c for c in changes if c["old_number"] == "702.87a"]
    assert totem == [{**totem[0], "change": "moved", "new_number": "702.88a"}]
    assert not [c for c in changes if c["change"] in ("added", "removed") and c["section"] in ("702.88", "702.89")]
    text = CliRunner().invoke(main, ["diff", "cr-2013-05-01", "cr-2016-08-26", "--section", "702.88", "--out", out])
    assert text.exit_code == 0
    assert text.output.splitlines()[0].startswith("cr-2013-05-01 -> cr-2016-08-26: ")
    assert "moved         702.87a -> 702.88a" in text.output
    # A three-digit section holds the rules of its subsections ("no changes" before).
    text = CliRunner().invoke(main, ["diff", "cr-2013-05-01", "cr-2016-08-26", "--section", "702", "--out", out,
                                     "--json"])
    found = json.loads(text.output)["changes"]
    assert len(found) > 200 and all(c["section"].startswith("702.") for c in found)
    assert any(c["old_number"] == "702.87a" and c["new_number"] == "702.88a" for c in found)
    # A section neither release has is no section, not "no changes".
    text = CliRunner().invoke(main, ["diff", "cr-2013-05-01", "cr-2016-08-26", "--section", "999", "--out", out])
    assert text.exit_code == 1 and "no section 999 in cr-2013-05-01 or cr-2016-08-26" in text.output
    # The newer release first: refused as a usage error (the rules added since had silently vanished, exit 0).
    text = CliRunner().invoke(main, ["diff", "2016-08-26", "2013-05-01", "--out", out])
    assert text.exit_code == 2 and "is newer than cr-2013-05-01 (2013-05-01): give the older one first" in text.output
    # So is an undated copy numbered like a newer release (it had shown 702.40a "moved" back to 502.32a);
    # the other way round, the rules a copy lacks are not removed, and a note says so.
    faq = "000_eb8496d4591d3274"
    text = CliRunner().invoke(main, ["diff", faq, "cr-2005-10-01", "--out", out])
    assert text.exit_code == 2 and f"{faq} (numbered as cr-2012-02-01, 2012-02-01) is newer than cr-2005-10-01 " \
        "(2005-10-01): give the older one first" in text.output
    found = diff(Path(out), "cr-2005-10-01", faq)
    assert "removed" not in found["counts"] and found["note"] == (
        f"{faq} is not a whole release (numbered as cr-2012-02-01, 2012-02-01): rules it lacks are not counted as "
        "removed")


def test_a_reader_that_stops_early_ends_the_command_quietly(bundled: Bundled) -> None:
    """`diff ... | head -1` had exited 1 (failed), with a traceback of the broken pipe."""
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "diff", "1999-04-23", "2026-08-07",
                             "--out", str(bundled[1])], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().startswith(b"cr-1999-04-23 -> cr-2026-08-07: ")
    proc.stdout.close()  # megabytes still to come
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and stderr == b""


def test_diff_folds_renumbered_cross_references(bundled: Bundled) -> None:
    """Ward (702.21, April 2021) renumbered every later keyword, and every rule
    citing one: a rule whose only change is such a citation is no change."""
    from pipeline.query.diff import diff
    from pipeline.text import folded

    data = Published.load(bundled[1])
    only_citations = set()
    for lid, rows in data.history.items():
        here = {r["source_id"]: r for r in rows}
        a, b = here.get("cr-2021-02-15"), here.get("cr-2021-04-22")
        if a and b and a["number_as_written"] == b["number_as_written"] and a["text"] != b["text"] \
                and folded(a["text"]) == folded(b["text"]):
            only_citations.add(lid)
    assert len(only_citations) >= 5
    changed = {c["lineage_id"] for c in diff(bundled[1], "cr-2021-02-15", "cr-2021-04-22")["changes"]}
    assert not only_citations & changed


def test_lineages_with_a_current_number_are_in_document_order(bundled: Bundled) -> None:
    """Lineages that live on come first, in the order of the newest release:
    704.5aa (added 2025) after 704.5z, not between 704.5a and 704.5b."""
    with (bundled[1] / "lineages.csv").open(encoding="utf-8", newline="") as fh:
        current = [row["canonical_number"] for row in csv.DictReader(fh) if row["canonical_number"]]
    assert current == sorted(current, key=sort_key)
    assert current.index("704.5aa") == current.index("704.5z") + 1


def _releases_of(*names: str) -> list[tuple[str, list[Element]]]:
    """Real releases from raw/, read and cleaned as the run does (each on its own vocabulary)."""
    out = []
    for name in names:
        src, els, _ = read_source(RAW / name, RAW, Settings(jobs=1))
        vocab = Vocabulary.build(el.body for el in els)
        out.append((src.source_id, clean(els, vocab)))
    return out


def _same_steps(got: list[Step], want: list[Step]) -> bool:
    fields = ("pairs", "scores", "split_from", "merged_into", "sections")
    return [[getattr(s, f) for f in fields] for s in got] == [[getattr(s, f) for f in fields] for s in want]


@pytest.mark.slow  # job runs
def test_steps_aligned_ahead_are_the_steps_aligned_after() -> None:
    """Releases handed to Ahead as they are cleaned are aligned in its workers;
    align_steps takes those steps, and aligns then (here) a step it was not handed:
    the release between was taken out of the chain after cleaning."""
    releases = _releases_of("cr-1999-04-23.txt", "cr-1999-11-01.txt", "cr-2001-09-24.txt", "cr-2002-10-07.txt")
    with chain.Ahead(2, None) as ahead:
        for sid, els in releases:
            ahead.add(sid, els)
        built = [ahead.built(sid, els) for sid, els in releases]
        assert all(rel.rules for rel in built)  # the releases it built, elements and all
        whole = chain.align_steps(built, 2, None, [], ahead)
        assert not ahead.pending  # every step aligned ahead was taken
    assert not ahead.held  # nor does it keep the elements once it is over
    assert _same_steps(whole, [align_pair(a, b) for a, b in zip(built, built[1:], strict=False)])
    with chain.Ahead(2, None) as ahead:
        for sid, els in releases:
            ahead.add(sid, els)
        gap = [built[0], built[2], built[3]]  # cr-1999-11-01 left out
        stepped = chain.align_steps(gap, 2, None, [], ahead)
        assert set(ahead.pending) == {(built[0].digest(), built[1].digest()), (built[1].digest(), built[2].digest())}
    assert _same_steps(stepped, [align_pair(built[0], built[2]), whole[2]])


def test_ahead_sends_the_chain_as_the_cleaning_stage_makes_it() -> None:
    """``send`` takes each source as it is cleaned; the releases of the chain (one
    per date: the copy named for the release) go to be aligned, and one that
    cleaning found truncated does not, nor does a page."""
    texts = ["Flying is evasion.", "Reach lets a creature block flying creatures."]
    sources = [Source("faq", "faq.txt", "c", 1, format="faq_page"),
               Source("copy", "copy.txt", "b", 1, format="cr_document", effective_date="2026-08-07"),
               Source("cr-2026-08-07", "cr-2026-08-07.txt", "b", 1, format="cr_document", effective_date="2026-08-07"),
               Source("cr-2025-09-19", "cr-2025-09-19.txt", "a", 1, format="cr_document", effective_date="2025-09-19"),
               Source("cr-2026-11-14", "cr-2026-11-14.txt", "d", 1, format="cr_document", effective_date="2026-11-14")]
    elements = [_release(texts, sid=s.source_id) for s in sources]
    truncated = replace(sources[4], flags=("truncated",))
    cleaning = [(3, sources[3], elements[3]), (1, sources[1], elements[1]), (2, sources[2], elements[2]),
                (4, truncated, elements[4]), (0, sources[0], elements[0])]
    with chain.Ahead(1, None) as ahead:
        got, cleaned = ahead.send(iter(cleaning), sources)
        assert got == [*sources[:4], truncated] and cleaned == elements
        assert ahead.held == 2
        held = [s.source_id for s, els in zip(sources, elements, strict=True)
                if ahead.built(s.source_id, els) is ahead.built(s.source_id, els)]
    assert held == ["cr-2026-08-07", "cr-2025-09-19"]


def test_a_step_in_the_cache_is_not_aligned_ahead(tmp_path: Path) -> None:
    releases = _releases_of("cr-1999-04-23.txt", "cr-1999-11-01.txt")
    cache = SourceCache(tmp_path)
    a, b = (Release.build(sid, els) for sid, els in releases)
    cache.put(cache.step_key(a.digest(), b.digest()), align_pair(a, b))
    with chain.Ahead(2, cache) as ahead:
        for sid, els in releases:
            ahead.add(sid, els)
        assert not ahead.processes() and not ahead.pending  # no pool was even started
    # A damaged entry is not aligned ahead either, but aligned when align_steps finds it unreadable.
    entry = tmp_path / f"{cache.step_key(a.digest(), b.digest())}.pickle"
    entry.write_bytes(b"not a pickle")
    with chain.Ahead(2, cache) as ahead:
        built = []
        for sid, els in releases:
            ahead.add(sid, els)
            built.append(ahead.built(sid, els))
        assert not ahead.pending
        assert _same_steps(chain.align_steps(built, 2, cache, [], ahead), [align_pair(a, b)])
    # --full reads nothing back: the step is aligned ahead.
    with chain.Ahead(2, SourceCache(tmp_path, reuse=False)) as ahead:
        for sid, els in releases:
            ahead.add(sid, els)
        assert len(ahead.pending) == 1


@pytest.mark.slow  # two job runs
def test_a_run_in_parallel_publishes_what_a_run_in_one_process_does(tmp_path: Path) -> None:
    """With two jobs the steps are aligned while the sources are cleaned; with one,
    each in turn after. Every table is the same, byte for byte."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("cr-1999-04-23.txt", "cr-1999-11-01.txt", "cr-2001-09-24.txt", "cr-2002-10-07.txt"):
        shutil.copy(RAW / name, raw / name)
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["ingest", "-q", "--full", "--jobs", jobs, "--raw", str(raw),
                                           "--out", str(tmp_path / f"out{jobs}")])
        assert result.exit_code == 0, result.output
    tables = sorted(p.name for p in (tmp_path / "out1").glob("*.csv"))
    assert "lineages.csv" in tables and "renumber_map.csv" in tables
    for name in [*tables, "rules.json"]:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name


def test_a_step_aligned_ahead_that_nobody_takes_is_not_waited_for() -> None:
    """The pool ends with Ahead: a step still being aligned that the chain did not
    need (here the July 2009 renumbering, seconds of work) is stopped, not finished."""
    releases = _releases_of("cr-2009-02-01.txt", "cr-2009-07-11.txt")
    with chain.Ahead(2, None) as ahead:
        for sid, els in releases:
            ahead.add(sid, els)
        (future,) = ahead.pending.values()
        pool = ahead.processes()
    # Had the pool waited for it, the step would be there.
    assert not future.done() or future.cancelled() or future.exception() is not None
    for process in pool:
        process.join(timeout=10)
        assert not process.is_alive()


_WORDS = st.sampled_from(["the", "creature", "attacking", "blocking", "deals", "damage", "to", "it", "a", "mana",
                          "ability", "exile", "graveyard", "won't", "702.42a", "—", "each"])
_TEXTS = st.lists(_WORDS, max_size=14).map(" ".join)


@given(st.lists(_TEXTS, min_size=1, max_size=5), st.lists(_TEXTS, min_size=1, max_size=5))
@settings(max_examples=examples(200), deadline=None)
def test_similarity_scores_word_sets_as_token_set_ratio_scores_the_texts(a: list[str], b: list[str]) -> None:
    """``similarity`` hands rapidfuzz each text's distinct words, sorted, once:
    ``token_set_ratio`` scores them as it scores the texts themselves."""
    import numpy as np
    from rapidfuzz import fuzz, process

    subset = process.cdist(evidence.word_sets(a), evidence.word_sets(b), scorer=fuzz.token_set_ratio,
                           dtype=np.float64)
    assert subset.tolist() == [[fuzz.token_set_ratio(x, y) for y in b] for x in a]


def _sections_only(source_id: str, sections: dict[str, str], chapters: dict[str, str] | None = None
                   ) -> Release:
    """A release of sections (title keys) and chapters, no rules."""
    return Release(source_id, [], [], [], [], sections, {}, chapters=chapters or {})


def test_a_shared_title_pairs_within_its_chapter_else_under_its_number() -> None:
    """July 2009: 3 Turn Structure became 5; its 300 General is 500 General. A
    title twice in one chapter (2003-2009's 200 and 212.1 General) keeps its
    numbers; a chapter still there but without the title pairs nothing by the
    number (Card Types' 300 is not Turn Structure's); with no chapters known,
    the number."""
    old = _sections_only("a", {"200": "general", "212.1": "general", "300": "general"},
                         {"2": "parts of the game", "3": "turn structure"})
    new = _sections_only("b", {"200": "general", "212.1": "general", "300": "general", "500": "general"},
                         {"2": "parts of the game", "3": "card types", "5": "turn structure"})
    assert context.sections_by_title(old, new) == {"200": "200", "212.1": "212.1", "300": "500"}
    no_general = _sections_only("c", {"200": "general", "212.1": "general", "300": "general"},
                                {"2": "parts of the game", "3": "card types", "5": "turn structure"})
    assert context.sections_by_title(old, no_general) == {"200": "200", "212.1": "212.1"}
    # Chapters of these titles no longer there (2 retitled, Turn Structure gone): the numbers.
    gone = _sections_only("d", {"200": "general", "300": "general"}, {"2": "parts of a card", "3": "card types"})
    assert context.sections_by_title(old, gone) == {"200": "200", "300": "300"}
    bare = _sections_only("e", {"200": "general", "300": "general"})
    assert context.sections_by_title(_sections_only("f", {"200": "general", "300": "general"}), bare) == {
        "200": "200", "300": "300"}


def test_a_section_back_under_its_own_title_takes_what_it_continues_with_it() -> None:
    """216 Token, then 216 Tokens, went into 110 Permanents and came back as
    111 Tokens: both are 111. A section whose chain ended stays ended, even if
    the newest release has a section of its title (502.9 Substance, a keyword
    of 1999, and no rule of it in a new 702.200 Substance)."""
    built = [_sections_only("r0", {"216": "token", "502.9": "substance"}),
             _sections_only("r1", {"216": "tokens"}),
             _sections_only("r2", {"110": "permanents", "111": "tokens", "702.200": "substance"})]
    steps = [Step(sections={"216": "216"}), Step(sections={"216": "110"})]
    out = chain.Lineages()
    chain.section_chain(out, built, steps)
    assert out.sections["r1", "216"] == "111" and out.sections["r0", "216"] == "111"
    assert out.sections["r0", "502.9"] == ""
    assert out.sections["r2", "110"] == "110"


def test_a_three_digit_section_number_used_twice_goes_where_its_rules_did() -> None:
    """Each of two sections "212" is where most of its own rules went, counted
    at its own level: rules now 111.1a and 111.1b are in section 111, not in
    "111.1" (a rule)."""
    def el(line: int, kind: str, number: str, parent: int = 0) -> Element:
        return Element("x", line, line, kind, number, number_as_written=number, parent_line=parent)

    els = [el(1, "section", "212"), el(2, "rule", "212.1", 1), el(3, "rule", "212.2", 1),
           el(5, "section", "212"), el(6, "rule", "212.1", 5), el(7, "rule", "212.2", 5),
           el(9, "section", "702.175"), el(10, "rule", "702.175a", 9), el(11, "section", "702.175"),
           el(12, "rule", "702.175a", 11)]
    now = {2: "111.1a", 3: "111.1b", 6: "122.1", 7: "122.1a", 10: "702.175a", 12: "702.176a"}
    assert numbering.sections_by_their_rules(els, lambda e: now.get(e.line_start, "")) == {
        1: "111", 5: "122", 9: "702.175", 11: "702.176"}


def test_a_rule_cut_into_steps_goes_on_in_the_rule_under_its_number_that_announces_them() -> None:
    """2003's declare attackers rewrite: 308.2 (legality, tapping, costs, mana
    abilities) kept its number as "to declare attackers, the active player follows
    the steps below, in order", over 308.2a-g, which hold its content. It had gone on
    in 308.2c, which holds its tapping sentence word for word (held-out T09, and the
    declare blockers rule 309.2 of the same release went on under its number)."""
    old = _section_release("old", "308", "Declare Attackers Step", [
        ("308.1", "The active player declares which, if any, creatures he or she controls will attack. This "
                  "declaration is simultaneous, not sequential, and doesn't go on the stack."),
        ("308.2", 'The active player determines whether the attack is legal. (See section 5, "Additional Rules.") '
                  "If it is, he or she taps all creatures that will attack. Tapping a creature when it is declared "
                  "as an attacker is not a cost; attacking simply causes creatures to become tapped. Then the "
                  "player pays all required costs. (See rule 409.1f.) The active player may play mana abilities "
                  "at this time only if an attack cost includes a mana payment."),
    ])
    header = ("To declare attackers, the active player follows the steps below, in order. If at any point during "
              "the declaration of attackers, the active player is unable to comply with any of the steps listed "
              "below, the declaration was illegal; the game returns to the moment before the declaration.")
    steps = [
        ("308.2a", "The active player either chooses to not attack or chooses one or more creatures he or she "
                   "controls, and then determines whether this set of creatures could attack."),
        ("308.2c", "The active player taps the chosen creatures. Tapping a creature when it's declared as an "
                   "attacker isn't a cost; attacking simply causes creatures to become tapped."),
        ("308.2d", "If any of the creatures require paying costs to attack, the active player determines the total "
                   "cost to attack."),
        ("308.2e", "If any of the costs require mana, the active player then has a chance to play mana abilities."),
    ]
    opening = ("308.1", old.rules[0].text)
    new = _section_release("new", "308", "Declare Attackers Step", [opening, ("308.2", header), *steps])
    step = align_pair(old, new)
    assert new.numbers[step.pairs[1]] == "308.2"
    # A rule under its number that does not announce the steps is not taken for it.
    unannounced = header.replace("follows the steps below, in order", "declares the attack")
    unannounced = unannounced.replace("any of the steps listed below", "the rules")
    other = _section_release("new", "308", "Declare Attackers Step", [opening, ("308.2", unannounced), *steps])
    assert other.numbers[align_pair(old, other).pairs[1]] == "308.2c"


def test_a_rule_goes_on_in_the_new_rule_that_opens_with_its_first_sentence_in_the_2009_terms() -> None:
    """July 2009's 214.1 (the permanent: its definition, then the five permanent
    types) went on in 110.1, which opens with its first sentence, "in play" now "on
    the battlefield", not in the list of permanent types 110.4, which holds more of
    its words (held-out K04: three readers of three)."""
    old = _section_release("old", "214", "Permanents", [
        ("214.1", "A permanent is a card or token in play. Permanents stay in play unless moved to another zone by "
                  "an effect or rule. There are five permanent types: artifact, creature, enchantment, land, and "
                  "planeswalker. Instant and sorcery cards can't come into play. Some tribal cards can come into "
                  "play and some can't, depending on their other card types."),
        ("214.2", "A nontoken permanent's card types, supertypes, and subtypes are the same as those printed on "
                  "its card."),
    ])
    definition = ("A permanent is a card or token on the battlefield. A permanent remains on the battlefield "
                  "indefinitely. A card or token becomes a permanent as it enters the battlefield and it stops "
                  "being a permanent as it's moved to another zone by an effect or rule.")
    types = ("There are five permanent types: artifact, creature, enchantment, land, and planeswalker. Instant and "
             "sorcery cards can't enter the battlefield and thus can't be permanents. Some tribal cards can enter "
             "the battlefield and some can't, depending on their other card types.")
    second = ("110.2", "A nontoken permanent's card types, supertypes, and subtypes are the same as those printed "
                       "on its card.")
    new = _section_release("new", "110", "Permanents", [("110.1", definition), second, ("110.4", types)])
    step = align_pair(old, new)
    assert new.numbers[step.pairs[0]] == "110.1"
    # Opening with another first sentence, it goes on in the piece with more of its words.
    other = _section_release("new", "110", "Permanents", [
        ("110.1", "Permanents are cards and tokens. " + definition), second, ("110.4", types)])
    assert other.numbers[align_pair(old, other).pairs[0]] == "110.4"


def test_a_rule_does_not_go_on_in_a_new_rule_that_opens_with_it_but_holds_another_rule_whole() -> None:
    """July 2009's 110.5 opens with 216.1's first sentence ("some effects put tokens
    into play", in the new terms) and goes on with 200.4's token definition word for
    word: 200.4 goes on there, 216.1 in the piece with its characteristics sentences,
    110.5b (held-out M14; steps S315 and S316). The pass itself, given 216.1 paired
    with 110.5b and 110.5 still free."""
    characteristics = ("The spell or ability may define any number of characteristics for the token. This becomes "
                       "the token's \"text.\" A token doesn't have any characteristics not defined by the spell or "
                       "ability that created it.")
    definition = "A token is a marker used to represent any permanent that isn't represented by a card."
    old = Release.build("old", _release([
        definition + ' (See rule 216, "Tokens.")',
        "Some effects put tokens into play. A token is controlled by whoever put it into play. " + characteristics,
    ], ["200.4", "216.1"], "old"))
    new = Release.build("new", _release([
        "Some effects put tokens onto the battlefield. " + definition,
        characteristics.replace("may define any number", "that creates a token may define the values of any number"),
    ], ["110.5", "110.5b"], "new"))
    step = Step(pairs={1: 1})
    openings.opening_over_piece(old, new, step)
    assert step.pairs == {1: 1} and not step.split_from
    # Without 200.4 beside it, 110.5 is the new rule that opens as 216.1 did: 110.5b was split from it.
    alone = Release.build("old", _release([old.rules[1].text], ["216.1"], "old"))
    step = Step(pairs={0: 1})
    openings.opening_over_piece(alone, new, step)
    assert step.pairs == {0: 0} and step.split_from == {1: 0}
