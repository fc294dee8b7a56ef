"""The benchmark's generated releases are read by the pipeline as the releases they were made to be.

Three releases are generated from the newest bundled one and only read (decode,
parse, assemble, describe: ``ingest.read.read_source``), never ingested whole.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date
from itertools import islice
from pathlib import Path

import pytest

from pipeline.ingest.decode import decode
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Element, Source
from pipeline.tools import benchgen
from tests.conftest import RAW

BASE = RAW / "cr-2026-08-07.txt"
AFTER = date(2026, 8, 7)

Read = tuple[Source, list[Element]]
# How the pipeline names each encoding it detects. MacRoman text is read line by
# line, as UTF-8 where a line is valid UTF-8 (all ASCII) and as MacRoman elsewhere.
# What the first three releases from the newest bundled one do (seed 14): (moved, removed, retired).
PINNED = [
    ((("702.9a", "702.63e"),), ("731.2c", "310.9b"), ("", "")),
    ((("707.2b", "729.5d"),), ("702.91f",), ("702.51", "Dosh")),
    ((("901.12b", "901.7b"),), ("701.67c",), ("", "")),
]
READ_AS = {"utf-8": "utf-8", "utf-8-sig": "utf-8-sig", "cp1252": "cp1252", "mac_roman": "utf-8+mac_roman",
           "utf-16-le": "utf-16-le+bom", "utf-16-be": "utf-16-be+bom"}


def _read(path: Path) -> Read:
    src, elements, _ = read_source(path, path.parent, Settings())
    return src, elements


def _rules(read: Read) -> dict[str, str]:
    return {el.number_as_written: el.body for el in read[1] if el.kind == "rule"}


def _sections(read: Read) -> dict[str, str]:
    return {el.number_as_written: el.body for el in read[1] if el.kind == "section"}


# What ``generated`` gives: the manifest rows, the base release and each generated one as read, their folder.
Generated = tuple[list[benchgen.Release], list[Read], Path]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    dest = tmp_path_factory.mktemp("generated")
    rows = benchgen.generate(BASE, dest, AFTER, count=3)
    return rows, [_read(BASE)] + [_read(dest / r.name) for r in rows], dest


def test_each_is_a_whole_release_with_its_own_later_date(generated: Generated) -> None:
    rows, reads, _ = generated
    assert [r.derived_from for r in rows] == [BASE.name, rows[0].name, rows[1].name]
    assert reads[0][0].effective_date == "2026-08-07"
    for row, (src, _) in zip(rows, reads[1:], strict=True):
        assert (src.format, src.status, src.effective_date) == ("cr_document", "ok", row.date)
        assert row.name == f"gen-{row.date}.txt"
    dates = [src.effective_date for src, _ in reads]
    assert dates == sorted(set(dates)) and len(dates) == 4


def test_the_rule_count_is_what_the_changes_imply(generated: Generated) -> None:
    rows, reads, _ = generated
    counts = [sum(1 for el in els if el.kind == "rule") for _, els in reads]
    assert counts[0] == 2891
    for k, row in enumerate(rows, 1):
        assert row.rules_added >= 2
        assert counts[k] == counts[k - 1] + row.rules_added - row.rules_removed, row


def test_the_inserted_keyword_shifts_every_later_keyword_by_one(generated: Generated) -> None:
    rows, reads, _ = generated
    for k, row in enumerate(rows, 1):
        before, after = _sections(reads[k - 1]), _sections(reads[k])
        number, title = row.keyword
        assert after[number] == title and title not in before.values()
        assert row.shifted and row.shifted[0][1] == f"702.{int(number[4:]) + 1}"
        for name, new in row.shifted:
            assert after[new] == name
            # One number up from where the previous release had it (less one when a
            # section before it was retired in the same release).
            retired = row.retired[0] and int(row.retired[0][4:]) < int(new[4:])
            assert before[f"702.{int(new[4:]) - 1 + bool(retired)}"] == name
        rules = _rules(reads[k])
        assert rules[number + "a"].startswith(f"{title} is a ")
        # Its glossary entry cites it; the entries of the shifted sections cite their new numbers.
        glossary = {el.term: el.body for el in reads[k][1] if el.kind == "glossary"}
        assert glossary[title].endswith(f"See rule {number}, “{title}.”")
        cited = [(name, new) for name, new in row.shifted if f"“{name}.”" in glossary.get(name, "")]
        assert len(cited) >= len(row.shifted) // 2
        assert all(f"{new}, “{name}.”" in glossary[name] for name, new in cited)
    assert [r.keyword for r in rows] == [("702.51", "Dosh"), ("702.101", "Poglun"), ("702.117", "Koucek")]


def test_moved_and_removed_rules(generated: Generated) -> None:
    rows, reads, _ = generated
    for k, row in enumerate(rows, 1):
        before, after = _rules(reads[k - 1]), _rules(reads[k])
        assert len(row.moved) == 1
        for old, new in row.moved:
            assert old.split(".")[0][0] == new.split(".")[0][0]  # within its chapter
            if new not in row.reworded:  # the same text, but for renumbered citations in it
                assert _masked(after[new]) == _masked(before[old])
        for number in row.removed:
            assert before[number] not in after.values()
    assert [(r.moved, r.removed, r.retired) for r in rows] == PINNED


def _masked(text: str) -> list[str]:
    """The words of a rule, its citations masked (they follow renumbered rules)."""
    return re.sub(r"\d{3}\.\d+[a-z]*", "N", text).split()


def _one_word_apart(old: str, new: str) -> bool:
    """Two words swapped, or one word inserted or deleted."""
    a, b = _masked(old), _masked(new)
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]])
    short, long = sorted((a, b), key=len)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def test_the_manifest_gives_each_rule_its_number_in_the_next_release(generated: Generated) -> None:
    """``renumbered`` read back from the files: every rule of a release that was
    not removed stands in the next one under the number the manifest gives, with
    the same words (but for the reworded ones and its citations' numbers), and
    every other rule of the next one is the new keyword's."""
    rows, reads, _ = generated
    for row, before, after in zip(rows, reads, reads[1:], strict=False):
        old, new = _rules(before), _rules(after)
        renumbered = dict(row.renumbered)
        retired = row.retired[0]
        images = set()
        for number, body in old.items():
            if number in row.removed or (retired and number.rstrip(benchgen.LETTERS) == retired):
                continue
            now = renumbered.get(number, number)
            assert now in new, (row.name, number, now)
            images.add(now)
            assert _masked(new[now]) == _masked(body) or now in row.reworded, (row.name, number, now)
        keyword = row.keyword[0]
        assert set(new) - images == {n for n in new if n.rstrip(benchgen.LETTERS) == keyword}
        assert len(set(new) - images) == row.rules_added


@pytest.mark.slow  # a chain of generated releases ingested
def test_a_chain_with_cuts_splits_one_rule_and_merges_two_in_each_release(tmp_path: Path) -> None:
    """``cuts``: the rule cut keeps its first sentence under its number, the piece
    after it holds the rest; the rule merged away stands at the end of the one
    before it. The manifest's numbers say where each went, and the benchmark's
    chain (no cuts) is another one."""
    rows = benchgen.generate(BASE, tmp_path, AFTER, count=3, cuts=True)
    reads = [_read(BASE)] + [_read(tmp_path / r.name) for r in rows]
    for row, before, after in zip(rows, reads, reads[1:], strict=False):
        old, new = _rules(before), _rules(after)
        renumbered = dict(row.renumbered)
        ((cut, piece),) = row.split
        head, rest = old[cut].split(". ", 1)
        assert new[renumbered.get(cut, cut)] == head + "." and new[piece] == rest
        ((gone, into),) = row.merged
        assert new[renumbered.get(into, into)] == old[into] + " " + old[gone]
        assert len(new) == len(old) + row.rules_added - row.rules_removed
    assert [r.sha256 for r in rows] != [r.sha256 for r in benchgen.generate(BASE, tmp_path / "plain", AFTER, count=3)]


def test_reworded_rules_differ_by_a_word(generated: Generated) -> None:
    rows, reads, _ = generated
    for k, row in enumerate(rows, 1):
        before, after = _rules(reads[k - 1]), _rules(reads[k])
        assert len(row.reworded) >= 10
        by_first_word: dict[str, list[str]] = {}
        for text in before.values():
            by_first_word.setdefault(text.split()[0], []).append(text)
        for number in row.reworded:  # numbered as the new release numbers them: matched by text
            text = after[number]
            assert text not in before.values()
            assert any(_one_word_apart(old, text) for old in by_first_word[text.split()[0]]), number


def test_every_file_is_distinct(generated: Generated) -> None:
    rows, _, dest = generated
    shas = {hashlib.sha256(BASE.read_bytes()).hexdigest()} | {r.sha256 for r in rows}
    assert len(shas) == 4
    assert all(hashlib.sha256((dest / r.name).read_bytes()).hexdigest() == r.sha256 for r in rows)
    texts = {decode(BASE.read_bytes()).text} | {decode((dest / r.name).read_bytes()).text for r in rows}
    assert len(texts) == 4


def test_every_encoding_and_line_ending_reads_back_as_the_same_text() -> None:
    text = next(benchgen.chain(decode(BASE.read_bytes()).text, BASE.name, AFTER))[1]
    styles = list(benchgen.NEWLINES)
    for k, encoding in enumerate(benchgen.ENCODINGS):
        newline = styles[k % len(styles)]
        data = benchgen.encode(text, encoding, newline)
        decoded = decode(data)
        assert decoded.text == benchgen.as_written(text, encoding), encoding
        assert decoded.newline == newline
        assert decoded.encoding == READ_AS[encoding]
    # A single-byte code page has no "∞" or "−": a save made them "?" (nothing else changes).
    base = decode(BASE.read_bytes()).text
    lost = [(a, b) for a, b in zip(base, benchgen.as_written(base, "cp1252"), strict=True) if a != b]
    assert {a for a, _ in lost} == {"∞", "−"} and {b for _, b in lost} == {"?"}


def test_written_files_decode_to_the_generated_text(generated: Generated) -> None:
    rows, _, dest = generated
    made = islice(benchgen.chain(decode(BASE.read_bytes()).text, BASE.name, AFTER), len(rows))
    for row, (again, text, data) in zip(rows, made, strict=True):
        assert again == row
        assert data == (dest / row.name).read_bytes()
        assert decode(data).text == text


def test_generation_is_deterministic_and_reuses_its_manifest(generated: Generated, tmp_path: Path) -> None:
    rows, _, dest = generated
    again = benchgen.generate(BASE, tmp_path, AFTER, count=2)
    assert again == rows[:2]
    assert [(tmp_path / r.name).read_bytes() for r in again] == [(dest / r.name).read_bytes() for r in rows[:2]]
    # A request the manifest covers is answered from it; the files are not written again.
    stamp = (tmp_path / again[0].name).stat().st_mtime_ns
    assert benchgen.generate(BASE, tmp_path, AFTER, count=1) == rows[:1]
    assert (tmp_path / again[0].name).stat().st_mtime_ns == stamp
    # Another seed, another chain.
    other = benchgen.generate(BASE, tmp_path / "other", AFTER, count=1, seed=15)
    assert other[0].sha256 != rows[0].sha256
