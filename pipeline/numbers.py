"""Number shapes, read from the grammar: the one definition of what a rule,
section or chapter number and a question or answer label look like.

``grammars/dump.lark`` defines ``RULE_NUMBER``, ``SECTION_NUMBER``,
``CHAPTER_NUMBER``, ``QUESTION_LABEL`` and ``ANSWER_LABEL`` and builds its line
terminals from them; every other module (assembly, alignment, cross-references,
normalising, masking, the rules.json schema) takes its patterns from here, so
that a shape the grammar accepts (1999's ``408.f``) is accepted everywhere.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources


@cache
def shape(name: str) -> str:
    """The grammar terminal ``name`` as a regular expression, grouped.

    A terminal written as one regular expression (``NAME: /.../``) is read from
    the grammar's text: building Lark's parser for it cost every command that
    only reads numbers (``resolve``, ``search``) a tenth of a second. Any other
    terminal is asked of the parser.

    >>> re.fullmatch(shape("RULE_NUMBER"), "408.f") is not None
    True
    """
    text = resources.files("pipeline.grammars").joinpath("dump.lark").read_text(encoding="utf-8")
    written = re.search(rf"^{re.escape(name)}:[ \t]*/(.*)/[ \t]*$", text, re.M)
    if written:
        return f"(?:{written.group(1)})"
    from pipeline.ingest.parse import parser

    return f"(?:{parser().get_terminal(name).pattern.to_regexp()})"


RULE_NUMBER = shape("RULE_NUMBER")
SECTION_NUMBER = shape("SECTION_NUMBER")
CHAPTER_NUMBER = shape("CHAPTER_NUMBER")
QUESTION_LABEL = shape("QUESTION_LABEL")
ANSWER_LABEL = shape("ANSWER_LABEL")

# A number at the start of a line: (number, trailing dot, space after).
RULE_AT_START = re.compile(rf"\s*({RULE_NUMBER})(\.?)(\s*)")
SECTION_AT_START = re.compile(rf"\s*({SECTION_NUMBER})(\.?)(\s*)")
CHAPTER_AT_START = re.compile(rf"\s*({CHAPTER_NUMBER})(\.)(\s*)")
# A question line, with the answer when it shares the line.
QUESTION = re.compile(rf"\s*{QUESTION_LABEL}\s*(.*?)(?:\s+{ANSWER_LABEL}\s+(.*))?\s*$", re.S)
ANSWER_AT_START = re.compile(rf"\s*{ANSWER_LABEL}\s*")

# A rule or section number inside running text ("see rule 702.42a"): not part
# of a longer number or word.
IN_TEXT = re.compile(rf"(?<![\w.]){RULE_NUMBER}(?![\w])")
# A section number inside running text ("See rule 702.42, “Entwine.”").
SECTION_IN_TEXT = re.compile(rf"(?<![\w.])({SECTION_NUMBER})(?![\w])")

# A canonical number, as the reference writes it (``normalise``): the pattern
# rules.schema.json checks rules.json against.
CANONICAL = rf"^(?:{CHAPTER_NUMBER}|{RULE_NUMBER.replace('[ ]?', '')})$"

# A rule's number up to its letters, as the reference writes it ("702.42" of
# "702.42a"): for tools that write or rewrite numbers (the benchmark's generator).
SUBRULE = r"\d{3}\.\d{1,3}"

# Every release repeats most numbers of the one before, and these functions are
# called for each number many times over: they remember the numbers seen last.
NUMBER_CACHE = 1 << 15

# The parts of a number as written: digits, subrule digits, letters.
_PARTS = re.compile(r"(\d{3})(?:\.[ ]?(\d{0,3})([a-z]{0,2}))?\.?")


@lru_cache(maxsize=NUMBER_CACHE)
def parts(number: str) -> tuple[str, str, str] | None:
    """(section digits, subrule digits, letters) of a number, or None.

    >>> parts("702.42a"), parts("408.f"), parts("702. 37"), parts("x")
    (('702', '42', 'a'), ('408', '', 'f'), ('702', '37', ''), None)
    """
    m = _PARTS.fullmatch(normalise(number))
    return (m.group(1), m.group(2) or "", m.group(3) or "") if m else None


@lru_cache(maxsize=NUMBER_CACHE)
def normalise(number: str) -> str:
    """A number as the reference writes it: no inner space, no trailing dot.

    >>> normalise("702. 37a"), normalise("100.")
    ('702.37a', '100')
    """
    return number.replace(" ", "").rstrip(".")


@lru_cache(maxsize=NUMBER_CACHE)
def section_of(number: str) -> str:
    """The section a rule number belongs to: ``702.42a`` -> ``702.42``, and a
    numbered section or rule without a letter to its three-digit section.

    >>> section_of("702.42a"), section_of("100.1"), section_of("408.f"), section_of("702.42")
    ('702.42', '100', '408', '702')
    """
    m = _PARTS.fullmatch(normalise(number))
    if not m:
        return number.partition(".")[0]
    head, digits, letters = m.groups()
    return f"{head}.{digits}" if digits and letters else head


@lru_cache(maxsize=NUMBER_CACHE)
def sort_key(number: str) -> tuple[int, int, int, str]:
    """Numbers in document order: 704.5z before 704.5aa; ``408.f`` sorts with 408.

    >>> sorted(["704.5aa", "704.5z", "704.10", "704.5", "704"], key=sort_key)
    ['704', '704.5', '704.5z', '704.5aa', '704.10']
    """
    m = _PARTS.fullmatch(normalise(number))
    if not m:
        return (10**6, 0, 0, number)
    head, digits, letters = m.groups()
    return (int(head), int(digits) if digits else -1, len(letters or ""), letters or "")
