"""Number shapes, read from the grammar: the one definition of what a rule,
section or chapter number and a question or answer label look like.

``grammars/dump.lark`` defines ``RULE_NUMBER``, ``SECTION_NUMBER``,
``CHAPTER_NUMBER``, ``QUESTION_LABEL`` and ``ANSWER_LABEL`` and builds its line
terminals from them; every other module (assembly, alignment, cross-references,
normalising, masking, the rules.json schema) takes its patterns from here, so
that a shape the grammar accepts (1999's ``408.f``) is accepted everywhere.

Here too what is done with numbers everywhere: parsed into parts, normalised
(the reference's way of writing them), ordered, and found in running text as
cross-references (``cross_references``, ``citations``), ranges expanded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING, Any

GRAMMAR = "dump.lark"


@cache
def grammar_text() -> str:
    """The grammar, from ``pipeline.grammars``: the checkout's top-level ``grammars/``,
    mapped into the package (pyproject.toml), so a checkout and an installed wheel
    read the same file. Read once a process: the parser and every shape use it.

    Read straight from the package's folder where it is one (a checkout, an
    installed wheel): ``importlib.resources``, which also reads a zipped
    package, costs every query command a few milliseconds to import."""
    spec = util.find_spec("pipeline.grammars")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / GRAMMAR
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files("pipeline.grammars").joinpath(GRAMMAR).read_text(encoding="utf-8")


@cache
def shape(name: str) -> str:
    """The grammar terminal ``name`` as a regular expression, grouped.

    The number shapes are each written as one regular expression (``NAME: /.../``)
    and read from the grammar's text, not asked of Lark's parser: building it cost
    every command that only reads numbers (``resolve``, ``search``) a tenth of a
    second. A test holds them equal to the parser's terminals.

    >>> re.fullmatch(shape("RULE_NUMBER"), "408.f") is not None
    True
    """
    written = re.search(rf"^{re.escape(name)}:[ \t]*/(.*)/[ \t]*$", grammar_text(), re.M)
    if not written:
        raise ValueError(f"the grammar does not write {name} as one regular expression (NAME: /.../)")
    return f"(?:{written.group(1)})"


# The shapes, and the patterns made of them, are made when first used (``__getattr__``):
# reading the grammar and compiling them all cost every command that loads this
# module (``search``, ``resolve``) about 20 ms before it had done anything.
if TYPE_CHECKING:
    RULE_NUMBER: str
    SECTION_NUMBER: str
    CHAPTER_NUMBER: str
    QUESTION_LABEL: str
    ANSWER_LABEL: str
    RULE_AT_START: re.Pattern[str]
    SECTION_AT_START: re.Pattern[str]
    CHAPTER_AT_START: re.Pattern[str]
    QUESTION: re.Pattern[str]
    ANSWER_AT_START: re.Pattern[str]
    IN_TEXT: re.Pattern[str]
    SECTION_IN_TEXT: re.Pattern[str]
    CANONICAL: str


def __getattr__(name: str) -> Any:
    """A shape or pattern of ``_MADE``, made on first use and kept as the module's attribute."""
    if name in globals():
        return globals()[name]
    make = _MADE.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()[name] = make()
    return made


_n = __getattr__
_MADE: dict[str, Callable[[], Any]] = {
    "RULE_NUMBER": lambda: shape("RULE_NUMBER"),
    "SECTION_NUMBER": lambda: shape("SECTION_NUMBER"),
    "CHAPTER_NUMBER": lambda: shape("CHAPTER_NUMBER"),
    "QUESTION_LABEL": lambda: shape("QUESTION_LABEL"),
    "ANSWER_LABEL": lambda: shape("ANSWER_LABEL"),
    # A number at the start of a line: (number, trailing dot, space after).
    "RULE_AT_START": lambda: re.compile(rf"\s*({_n('RULE_NUMBER')})(\.?)(\s*)"),
    "SECTION_AT_START": lambda: re.compile(rf"\s*({_n('SECTION_NUMBER')})(\.?)(\s*)"),
    "CHAPTER_AT_START": lambda: re.compile(rf"\s*({_n('CHAPTER_NUMBER')})(\.)(\s*)"),
    # A question line, with the answer when it shares the line.
    "QUESTION": lambda: re.compile(
        rf"\s*{_n('QUESTION_LABEL')}\s*(.*?)(?:\s+{_n('ANSWER_LABEL')}\s+(.*))?\s*$", re.S),
    "ANSWER_AT_START": lambda: re.compile(rf"\s*{_n('ANSWER_LABEL')}\s*"),
    # A rule or section number inside running text ("see rule 702.42a"): not part
    # of a longer number or word.
    "IN_TEXT": lambda: re.compile(rf"(?<![\w.]){_n('RULE_NUMBER')}(?![\w])"),
    # A section number inside running text ("See rule 702.42, “Entwine.”").
    "SECTION_IN_TEXT": lambda: re.compile(rf"(?<![\w.])({_n('SECTION_NUMBER')})(?![\w])"),
    # A canonical number, as the reference writes it (``normalise``): the pattern
    # rules.schema.json checks rules.json against.
    "CANONICAL": lambda: rf"^(?:{_n('CHAPTER_NUMBER')}|{_n('RULE_NUMBER').replace('[ ]?', '')})$",
}


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


# -- cross-references in text: "rules 601.2b and 601.2e-g" names 601.2b, 601.2e, 601.2f and
# 601.2g; "712.9–10" names 712.9 and 712.10. A rule number stands for a reference wherever
# it is ("as described in 608.2b", "(see 601.3d)"); a three-digit section number only after
# "rule" or "section" ("rules 701 and 702"), where it is no count of things.

# The end of a range: a whole number, the last letters ("601.2e-g") or the last
# digits ("712.9–10") of the rules it names.
_DASH = r"\s?[-–—]\s?"
_SKIPPED = "lo"  # letters the rules never give a subrule


@cache
def _citing() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a list after "rules", one number with the end of a range, a number anywhere
    in a text standing alone): made on first use, as the shapes are."""
    rule = _n("RULE_NUMBER")
    last = rf"{rule}|[a-z]{{1,2}}\b|\d{{1,3}}\b"
    end = rf"(?:{_DASH}({last}))"
    ref = rf"{rule}(?:{_DASH}(?:{last}))?"
    listed = re.compile(
        rf"\b(?:rules?|sections?)\s+({ref}(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|through)\s+){ref})*)",
        re.I,
    )
    one = re.compile(rf"({rule}){end}?")
    # A number anywhere in a text (``one`` standing alone), with the end of a range after it if there is one.
    cited = re.compile(rf"(?<![\w.]){one.pattern}(?![\w])")
    return listed, one, cited


def expand_range(start: str, end: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` (a letter, or a full number).

    >>> expand_range("601.2e", "g")
    ['601.2e', '601.2f', '601.2g']
    >>> expand_range("510.1c", "510.1d")
    ['510.1c', '510.1d']
    >>> expand_range("702.110", "702.112")
    ['702.110', '702.111', '702.112']
    >>> expand_range("702. 37a", None), expand_range("712.9", "10"), expand_range("212", "215")
    (['702.37a'], ['712.9', '712.10'], ['212', '215'])
    >>> expand_range("111.10j", "r")
    ['111.10j', '111.10k', '111.10m', '111.10n', '111.10p', '111.10q', '111.10r']
    """
    start = normalise(start)
    if not end:
        return [start]
    end = normalise(end)
    first = parts(start)
    if end.isdecimal() and first and first[1] and not first[2]:  # the last rule's digits, in its section
        if 0 <= int(end) - int(first[1]) < 50:
            return [f"{first[0]}.{i}" for i in range(int(first[1]), int(end) + 1)]
        return [start]
    if first and first[1] and len(first[2]) == 1:
        stem, letter = f"{first[0]}.{first[1]}", first[2]
        last = end if end.isalpha() else end.removeprefix(stem) if end.startswith(stem) else ""
        if len(last) == 1 and letter <= last:
            # Subrules are never lettered l or o (read as 1 and 0): "608.2c-m" skips 608.2l.
            return [stem + chr(c) for c in range(ord(letter), ord(last) + 1)
                    if chr(c) not in _SKIPPED or chr(c) in (letter, last)]
    a, b = parts(start), parts(end)
    if a and b and a[1] and b[1] and not a[2] and not b[2] and a[0] == b[0] and 0 <= int(b[1]) - int(a[1]) < 50:
        return [f"{a[0]}.{i}" for i in range(int(a[1]), int(b[1]) + 1)]
    return [start] if end.isalpha() else [start, end]


@lru_cache(maxsize=262_144)
def cross_references(text: str) -> list[tuple[str, str]]:
    """(as written, target) pairs for every rule a text refers to, in order.

    >>> cross_references("see rules 601.2b and 601.2e-g")
    [('601.2b', '601.2b'), ('601.2e-g', '601.2e'), ('601.2e-g', '601.2f'), ('601.2e-g', '601.2g')]
    >>> cross_references("This follows rules 701.27a–b, 712.9–10, and 712.18, as described in 608.2b.")[2:]
    [('712.9–10', '712.9'), ('712.9–10', '712.10'), ('712.18', '712.18'), ('608.2b', '608.2b')]
    >>> cross_references("See rules 702.109, “Dash,” and 702.152, “Blitz”; sections 701 and 702; 100 cards.")
    [('702.109', '702.109'), ('702.152', '702.152'), ('701', '701'), ('702', '702')]
    """
    found: dict[tuple[int, str], str] = {}  # (where, target) -> as written
    listed, single, cited = _citing()
    for m in listed.finditer(text):
        for one in single.finditer(text, m.start(1), m.end(1)):
            for target in expand_range(one.group(1), one.group(2)):
                found[one.start(), target] = one.group(0)
    for one in cited.finditer(text):
        for target in expand_range(one.group(1), one.group(2)):
            if "." in target:
                found.setdefault((one.start(), target), one.group(0))
    return [(written, target) for (_, target), written in sorted(found.items(), key=lambda kv: kv[0][0])]



def citations(text: str) -> list[str]:
    """Rule and section numbers cited anywhere in a text, in order, each once:
    ``CR 502.32a``, ``(see 409.1)``, ranges expanded, a three-digit section
    after "rule" or "section" (as ``cross_references`` reads them; "100 cards" is none).

    >>> citations("CR 502.32a says so; see also rule 409.1 and 502.32a.")
    ['502.32a', '409.1']
    >>> citations("rules 409.1f-h, and 502.32a–b")
    ['409.1f', '409.1g', '409.1h', '502.32a', '502.32b']
    >>> citations("rule 216; sections 216 and 300; 100 cards")
    ['216', '300']
    """
    return list(dict.fromkeys(target for _, target in cross_references(text)))
