"""Number shapes have one definition, the grammar's terminals, and every use agrees with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import numbers, text
from pipeline.ingest.layout import split_number
from pipeline.ingest.parse import parse, parser
from pipeline.lineage import align
from pipeline.publish.datapackage import rules_schema
from tests.conftest import examples

PIPELINE = Path(numbers.__file__).resolve().parent


@pytest.mark.parametrize(("line_terminal", "shape"), [
    ("RULE", "RULE_NUMBER"), ("SECTION", "SECTION_NUMBER"), ("CHAPTER", "CHAPTER_NUMBER"),
    ("QUESTION", "QUESTION_LABEL"), ("ANSWER", "ANSWER_LABEL"),
])
def test_line_terminals_are_built_from_the_number_shapes(line_terminal: str, shape: str) -> None:
    lark = parser()
    assert lark.get_terminal(shape).pattern.to_regexp() in lark.get_terminal(line_terminal).pattern.to_regexp()


def test_no_module_writes_its_own_number_pattern() -> None:
    """Rule numbers are three digits: a pattern with ``\\d{3}`` belongs in the grammar (numbers.py
    only takes a number it has matched apart)."""
    found = {p.name for p in PIPELINE.glob("*.py") if "\\d{3}" in p.read_text(encoding="utf-8")}
    assert found == {"numbers.py"}


@settings(max_examples=examples(200), deadline=None)
@given(st.from_regex(re.compile(rf"\A{numbers.RULE_NUMBER}\Z")))
def test_every_number_the_grammar_accepts_is_accepted_everywhere(number: str) -> None:
    """A rule line with it is a RULE whose number is split back out; cross-references
    find it; masking hides it; normalised, the rules.json schema admits it."""
    if not re.match(r"\d{3}\.", number):
        number += "."  # a bare three-digit rule is written "215."
    (line,) = parse(f"{number} Some rule text.")
    written, body, _ = split_number(numbers.RULE_AT_START, line.text)
    assert (line.kind, written.rstrip("."), body) == ("RULE", number.rstrip("."), "Some rule text.")
    assert numbers.cross_references(f"see rule {number.rstrip('.')} here")[0][1] == numbers.normalise(number)
    assert text.masked(f"see rule {number.rstrip('.')} here") == "see rule # here"
    pattern = rules_schema()["$defs"]["number"]["pattern"]
    assert re.fullmatch(pattern, numbers.normalise(number))


@pytest.mark.parametrize(("text", "targets"), [
    ("see rule 408.f", ["408.f"]),  # 1999's lost digit: the grammar reads it, so do cross-references
    ("see rules 601.2b and 601.2e-g", ["601.2b", "601.2e", "601.2f", "601.2g"]),
    ("see rule 702. 37a", ["702.37a"]),
])
def test_cross_references(text: str, targets: list[str]) -> None:
    assert [t for _, t in numbers.cross_references(text)] == targets


@pytest.mark.parametrize(("number", "section"), [
    ("702.42a", "702.42"), ("100.1", "100"), ("408.f", "408"), ("702. 37a", "702.37"), ("704.5aa", "704.5"),
])
def test_section_of(number: str, section: str) -> None:
    assert numbers.section_of(number) == section


def test_glossary_see_rule_uses_the_section_shape() -> None:
    found = align.SEE_RULE.search("See rule 702.89, “Umbra Armor.”")
    assert found is not None and found.group(1) == "702.89"


@pytest.mark.parametrize("name", ["RULE_NUMBER", "SECTION_NUMBER", "CHAPTER_NUMBER", "QUESTION_LABEL", "ANSWER_LABEL"])
def test_number_shapes_are_the_parsers_terminals(name: str) -> None:
    """numbers.py reads each shape from the grammar's text (the queries start without
    Lark); it is the very pattern the parser lexes with."""
    assert numbers.shape(name) == f"(?:{parser().get_terminal(name).pattern.to_regexp()})"


def test_a_shape_the_grammar_does_not_write_as_one_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="line"):
        numbers.shape("line")
