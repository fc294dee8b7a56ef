"""Invariants over arbitrary input: nothing raises, the ledger is lossless, cleanup is idempotent."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.corpus.clean import FIXERS, Vocabulary, fix_and_explain
from pipeline.ingest.assemble import assemble, iter_lines
from pipeline.ingest.decode import decode
from pipeline.ingest.layout import TOC_KEY, toc_key
from pipeline.ingest.parse import parse, parse_with_lark
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Element, evolve
from tests.conftest import examples

# Lines made of pieces that look like the real thing, so that every rule of the
# grammar and the assembler is exercised, mixed with arbitrary text.
_PIECES = st.sampled_from([
    "702.41a", "702.41", "502.32.", "702. 37a", "704.5aa", "7.", "100.", "Q:", "A:", "Example:",
    "EXAMPLE:", "Glossary", "Contents", "Credits", "Index", "Specific Questions", "Search", "~",
    "=====", "Entwine", "These rules are effective as of July 11, 2009.", "Comprehensive Rules",
    "....... 12", " ", "   ", "\t", ".", ",", "“", "”", "_", "A creature", "see rules 601.2e-g",
])
_LINE = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=6).map("".join)
_DOC = st.lists(_LINE, max_size=40).map(lambda lines: "\n".join(lines))
_NEWLINES = re.compile(r"\r\n|\r|\n")


def _check_ledger(text: str) -> None:
    text = _NEWLINES.sub("\n", text)
    elements = assemble("s", parse(text))
    covered = Counter(iter_lines(elements))
    lines = text.split("\n")
    nonblank = {i for i, ln in enumerate(lines, 1) if ln.strip(" \t\f\v")}
    assert {n for n in nonblank if covered[n] != 1} == set()
    assert set(covered) <= set(range(1, len(lines) + 1))
    for el in elements:
        assert el.line_start <= el.line_end


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOC)
def test_ledger_covers_every_nonblank_line_once(text: str) -> None:
    _check_ledger(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_ledger(text)


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_decode(data: bytes) -> None:
    try:
        decoded = decode(data)
    except ValueError:
        return  # DecodeError: the caller quarantines the file
    assert "\r" not in decoded.text


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise_in_a_run(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    raw = Path(tmp_path_factory.mktemp("raw"))
    (raw / "x.txt").write_bytes(data)
    src, elements, _ = read_source(raw / "x.txt", raw, Settings(jobs=1))
    assert src.status in ("ok", "suspect", "quarantined")
    assert src.status == "ok" or src.error.startswith("x.txt: ")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_DOC, st.text()))
def test_fast_parser_equals_lark(text: str) -> None:
    text = _NEWLINES.sub("\n", text)
    assert parse(text) == parse_with_lark(text)


@pytest.mark.slow  # Lark over every bundled file
def test_fast_parser_equals_lark_on_bundled_data() -> None:
    from pipeline.ingest.decode import decode
    from tests.conftest import RAW

    for path in sorted(RAW.iterdir()):
        text = decode(path.read_bytes()).text
        assert parse(text) == parse_with_lark(text), path.name


_VOCAB = Vocabulary.build(["ability based about Auras blocked preclude that type card with time"])


@settings(max_examples=examples(300), deadline=None)
@given(_DOC)
def test_cleanup_is_idempotent(text: str) -> None:
    once, _ = fix_and_explain(text, _VOCAB)
    twice, flags = fix_and_explain(once, _VOCAB)
    assert twice == once
    assert not set(flags) & {name for name, _ in FIXERS}


_BODY = st.lists(st.one_of(_LINE, st.sampled_from([
    "1. Game Concepts", "100. General", "702. Keyword Abilities", "702.41. Entwine", "702.41a Entwine is.",
    "408.f Odd.", "702. 37a Storm.", "704.5aa Speed.", "702.175. Offspring", "702.175a Twice.", "Entwine",
    "See rule 702.41, “Entwine.”", "Example: An example.", "Q: Why? A: Because.", "",
])), max_size=40).map("\n".join)
# A whole release around arbitrary content, so that it can become the reference.
_CR_DOC = st.tuples(_BODY, _BODY).map(lambda parts: "\n".join([
    "Magic: The Gathering Comprehensive Rules", "", "These rules are effective as of July 11, 2009.", "",
    "Contents", "", "1. Game Concepts", "100. General", "Glossary", "Credits", "", "1. Game Concepts", "",
    "100. General", "", parts[0], "", "Glossary", "", parts[1], "", "Credits", "", "Thanks.",
]))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_CR_DOC, _BODY), min_size=1, max_size=3))
def test_any_documents_publish(tmp_path_factory: pytest.TempPathFactory, docs: list[str]) -> None:
    """Whatever the documents, the job publishes valid output (keys, schema) or
    quarantines; it never fails."""
    from pipeline.job import run_job

    root = Path(tmp_path_factory.mktemp("job"))
    raw = root / "raw"
    raw.mkdir()
    for i, doc in enumerate(docs):
        (raw / f"doc{i}.txt").write_text(doc, encoding="utf-8")
    result = run_job(raw, root / "out", Settings(jobs=1), full=True)
    assert result.status == "published"
    assert (root / "out" / "rules.sqlite").exists()


_TOC_TAILS = st.lists(st.sampled_from([" ", ".", "\t", "\u00a0", "\u3000", "7", "12", "\u0663", "a", "x."]), max_size=8)


@given(st.one_of(_LINE, st.text()), _TOC_TAILS.map("".join))
def test_toc_key_strips_what_its_pattern_strips(text: str, tail: str) -> None:
    # toc_key is a hand-made scan (the regex retries from every position: quadratic
    # on long contents lines); it must strip exactly what the pattern does.
    line = text + tail
    assert toc_key(line) == " ".join(TOC_KEY.sub("", line).split()).lower()


@given(st.dictionaries(st.sampled_from(Element._fields), st.text(max_size=5), max_size=6))
def test_evolve_is_replace(changes: dict[str, str]) -> None:
    el = Element("s", 1, 2, "rule", "702.1a Text", body="Text", number_as_written="702.1a", flags=("x",))
    new = evolve(el, **changes)
    assert new == el._replace(**changes) and type(new) is Element
    assert new.element_id == f"{new.source_id}:L{new.line_start}"


def test_evolve_refuses_a_field_elements_do_not_have() -> None:
    with pytest.raises(ValueError, match="no field 'colour'"):
        evolve(Element("s", 1, 1, "rule", ""), colour="red")
