"""Work done once per distinct line (issue 44): the read stage remembers what a
line's text alone decides (its terminal, its repair, a rule line's number and
body), so a line seen before in the process is looked up. These hold that a
looked-up answer is the one worked out afresh, cold and warm, on real releases
and on lines made to repeat."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.ingest import assemble as assemble_module
from pipeline.ingest import decode as decode_module
from pipeline.ingest import parse as parse_module
from pipeline.ingest.assemble import assemble
from pipeline.ingest.checks import characters, numbered_lines
from pipeline.ingest.decode import decode, utf8_pair
from pipeline.ingest.layout import layout
from pipeline.ingest.parse import Line, parse, parse_with_lark
from pipeline.records import Element
from tests.conftest import RAW, examples


def _cold() -> None:
    """Forget every line remembered in this process."""
    parse_module.forget()
    decode_module.forget()
    assemble_module.forget()


def test_parse_cold_and_warm_equal_lark_on_a_release() -> None:
    text = decode((RAW / "cr-2009-07-11.txt").read_bytes()).text
    _cold()
    cold = parse(text)
    warm = parse(text)
    assert cold == warm == parse_with_lark(text)
    assert len(cold) == 2786 and cold[0] == Line("HEADING", 1, "Magic: The Gathering Comprehensive Rules")


def test_parse_a_new_line_repeated_in_one_text() -> None:
    """A line met several times in one text before it was ever typed, blank lines
    of spaces and tabs (skipped, and remembered as blank), and a line typed
    again after the memory was cleared."""
    _cold()
    text = "702.41a Entwine is a static ability.\n \t\n\n702.41a Entwine is a static ability.\nEntwine\n\t \n" * 3
    expected = [Line(kind, n + 6 * k, line) for k in range(3)
                for kind, n, line in (("RULE", 1, "702.41a Entwine is a static ability."),
                                      ("RULE", 4, "702.41a Entwine is a static ability."),
                                      ("HEADING", 5, "Entwine"))]
    assert parse(text) == expected == parse_with_lark(text)
    assert parse_module.remembered(" \t") == "" and parse_module.remembered("Entwine") == "HEADING"
    assert parse(text) == expected


def test_decode_remembers_repairs_per_line_not_per_place() -> None:
    """The same mojibake line in two files, at different lines: each is repaired
    and flagged where it stands, the second time from memory."""
    _cold()
    bad = "Dand\u00c3\u00a2n\u00a0is a card \u00e2\u20ac\u0153quoted\u00e2\u20ac\u009d."
    first = decode(f"100.1. Rules\n{bad}\nok\n".encode())
    second = decode(f"{bad}\nplain\n\n{bad}\n".encode())
    assert first.text == "100.1. Rules\nDandân is a card “quoted”.\nok\n"
    assert second.text == "Dandân is a card “quoted”.\nplain\n\nDandân is a card “quoted”.\n"
    assert first.line_flags == ((2, "encoding_fixed"),)
    assert second.line_flags == ((1, "encoding_fixed"), (4, "encoding_fixed"))
    assert decode_module.remembered(bad) == ("Dandân is a card “quoted”.", True)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300))
def test_utf8_pair_is_the_pattern(data: bytes) -> None:
    assert utf8_pair(data) == bool(re.search(rb"[\xc2-\xf4][\x80-\xbf]", data))


def test_utf8_pair_across_slices() -> None:
    for before in ((1 << 22) - 2, (1 << 22) - 1, 1 << 22):
        assert utf8_pair(b"a" * before + "â".encode())
        assert not utf8_pair(b"a" * before + b"\xc3")


def test_rule_lines_cold_and_warm() -> None:
    """A rule line's number, body and flags from memory are those worked out afresh."""
    text = decode((RAW / "cr-2004-10-01.txt").read_bytes()).text
    lines = parse(text)
    _cold()
    cold = assemble("s", lines, layout(lines))
    warm = assemble("s", lines, layout(lines))
    assert cold == warm
    rules = [el for el in cold if el.kind == "rule"]
    assert len(rules) == 660
    assert rules[0][:4] == ("s", 113, 113, "rule") and rules[0].number_as_written == "100.1"
    assert rules[0].body.startswith("These Magic rules assume a game between two players.")


def test_characters_skips_latin_and_finds_a_stray_letter() -> None:
    latin = [Element("s", 1, 1, "rule", "100.1. Dandân, “Juzám”, Æther — Lim-Dûl’s ½ ™"),
             Element("s", 2, 2, "rule", "100.2. Ⓐ ∞ − × ©")]
    assert characters(latin) is None
    stray = [*latin, Element("s", 3, 4, "rule", "100.3. Dand\n뿯n and Juz뿯m")]
    check = characters(stray)
    assert check is not None and not check.passed
    assert check.detail == "2 letters of a script the document otherwise never uses (HANGUL 뿯) at line 4 (s:L3)"


def test_numbered_lines_in_a_hard_wrapped_release() -> None:
    """The count after the first subrule, by kind where nothing is wrapped and line
    by line where a hard wrap may break a sentence before a number."""
    for name, figures in (("cr-2009-07-11", "1584 rule, section and chapter elements from 1585 numbered lines"),
                          ("cr-1999-04-23", "415 rule, section and chapter elements from 416 numbered lines")):
        lines = parse(decode((RAW / f"{name}.txt").read_bytes()).text)
        shape = layout(lines)
        assert shape.wrap.width == (78 if name.startswith("cr-1999") else 0)
        check = numbered_lines(lines, assemble("s", lines, shape), shape)
        assert (check.passed, check.detail) == (True, figures), name
