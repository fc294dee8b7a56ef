"""Typed lines to elements: a document's structure, recognised from its content.

``pipeline.ingest.layout`` finds a source's regions (front matter, contents,
body, glossary, credits) and its hard wrap; this module makes the elements,
region by region.

In the glossary a term is a short unindented heading line after a complete
entry; everything else continues it.

Answer paragraphs after a FAQ question, and the wrapped lines of hard-wrapped
layouts, join the element they continue. Unnumbered paragraphs after a
question are kept as their own ``prose`` elements marked ``continues``: only
once noise is known across the corpus can ``pipeline.corpus.noise`` tell a
continued answer from boilerplate pasted after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pipeline import numbers
from pipeline.ingest.layout import BACK_MATTER, LINE_CACHE, Layout, layout, split_number, toc_key
from pipeline.ingest.parse import Line
from pipeline.records import Element, evolve

_FAQ_LABEL = re.compile(r"(specific|general|frequently asked) questions?", re.I)
# A sentence inside a line ("Speed is a value. See rule ..."): never a glossary term.
_SENTENCE_INSIDE = re.compile(r"(?<!\bvs)[.!?][\"”’)]?\s+\S")
# Lone words of site navigation that scrapers keep (compared lower-cased).
PAGE_CHROME = frozenset({
    "search", "menu", "home", "login", "log in", "sign in", "sign up", "register",
    "share", "print", "skip to content", "skip to main content", "back to top",
    "next", "previous", "top", "cookie settings", "accept cookies", "subscribe",
    "advertisement",
})

_CONTINUED = {"rule", "example", "qa", "prose", "glossary"}




@dataclass(slots=True)
class _State:
    source_id: str
    layout: Layout
    region: str = "body"
    outer: int = 0  # the latest chapter or three-digit section
    chapter: int = 0  # the latest chapter: a three-digit section's parent
    section: int = 0
    rule: int = 0
    qa: int = 0
    enclosing: tuple[int, int] = (0, 0)  # section and outer before the latest section
    numbers: dict[int, str] = field(default_factory=dict)  # section line -> its number
    rule_parents: dict[str, int] = field(default_factory=dict)  # rule number -> its section's line
    out: list[Element] = field(default_factory=list)

    previous: Line | None = None  # the line before the one being read


def assemble(source_id: str, lines: Sequence[Line], shape: Layout | None = None) -> list[Element]:
    """Turn one source's typed lines into elements covering every non-blank line
    (``shape``: their ``layout``, when the caller has it already)."""
    shape = layout(lines) if shape is None else shape
    state = _State(source_id, shape)
    # Without a hard wrap, a body line of these kinds never continues the element
    # before it: ``_line`` would hand it to its handler, which it goes to at once.
    direct = {} if shape.wrap.width else {kind: _HANDLERS[kind] for kind in _ALONE}
    for line, region in zip(lines, shape.regions, strict=True):
        opens = region != state.region
        if region == "body" and not opens:  # most lines
            handler = direct.get(line.kind)
            if handler is None:
                _line(state, line)
            else:
                handler(state, line)
        else:
            state.region = region
            if region in ("front", "toc", "credits", "index") or (opens and region in BACK_MATTER):
                _front(state, line, opens)
            elif region == "glossary":
                _glossary(state, line)
            else:
                _line(state, line)
        state.previous = line
    return state.out


def _front(st: _State, line: Line, opens: bool) -> None:
    """Front matter, contents and credits: a line each, wrapped lines joined."""
    last = st.out[-1] if st.out else None
    if (not opens and last is not None and last.kind == "front_matter" and last.region == st.region
            and st.layout.wrap.breaks(st.previous, line)):
        _extend(st, line)
    else:  # _block(st, [line], "front_matter"), as a tuple
        text = line.text
        st.out.append(_new(Element, (st.source_id, line.lineno, line.lineno, "front_matter", text, text.strip(), "", 0,
                                     "", "", "", "", "", (), "", "", st.region, 0)))


def _block(st: _State, lines: Iterable[Line], kind: str, **kw: object) -> None:
    seq = list(lines)
    text = "\n".join(ln.text for ln in seq)
    st.out.append(
        Element(st.source_id, seq[0].lineno, seq[-1].lineno, kind, text,
                body=text.strip(), region=st.region, **kw)  # type: ignore[arg-type]
    )


def is_term(line: Line) -> bool:
    """A line that can name a glossary entry: a short unindented heading that
    starts like a name and holds no sentence.

    >>> is_term(Line("HEADING", 1, "Active Player, Nonactive Player Order"))
    True
    >>> is_term(Line("HEADING", 1, "Speed is a value. See rule 702.179, “Start Your Engines!”"))
    False
    """
    text = line.text
    return (
        line.kind == "HEADING" and not text[:1].isspace() and (text[:1].isupper() or text[:1] in "\"“{[(")
        and not _SENTENCE_INSIDE.search(text.strip())
    )


def _glossary(st: _State, line: Line) -> None:
    if line.kind in _NOISE_LINES and not line.text[:1].isspace():
        # A rule of dashes under the "Glossary" heading, or closing the glossary
        # (1999), is no term, nor part of one; indented, it underlines a table
        # inside an entry ("Expansion and Editions").
        _HANDLERS[line.kind](st, line)
        return
    last = st.out[-1] if st.out else None
    entry = last if last is not None and last.kind == "glossary" else None
    wrap = st.layout.wrap
    wrapped = wrap.width and wrap.breaks(st.previous, line)
    # A term needs a complete entry before it: a term's first line of text may
    # itself look like a heading ("Tap" / "To turn a permanent sideways"), and
    # an entry that ends "... to date are:" goes on with its list.
    complete = entry is not None and entry.body and not entry.body.endswith(":")
    text = line.text
    if entry is None or (complete and not wrapped and is_term(line)):
        # A new entry: the term, its definition (body) to come.
        st.out.append(_new(Element, (st.source_id, line.lineno, line.lineno, "glossary", text, "", "", 0, "", "", "",
                                     "", text.strip(), (), "", "", st.region, 0)))
        return
    sep = " " if wrapped else "\n"
    body = (entry.body + sep + text.strip()).strip() if entry.body else text.strip()
    # evolve(entry, line_end=..., text_raw=..., body=...), as a tuple
    st.out[-1] = _new(Element, (*entry[:2], line.lineno, entry[3], entry[4] + "\n" + text, body, *entry[6:]))


def _extend(st: _State, line: Line) -> None:
    last = st.out[-1]
    sep = " " if st.layout.wrap.width and not line.text.startswith("   ") else "\n"
    st.out[-1] = evolve(
        last,
        line_end=line.lineno,
        text_raw=last.text_raw + "\n" + line.text,
        body=(last.body.rstrip() + sep + line.text.strip()).strip(),
        answer=(last.answer.rstrip() + sep + line.text.strip()).strip() if last.kind == "qa" else "",
    )


def _line(st: _State, line: Line) -> None:
    last = st.out[-1] if st.out else None
    if last is None:
        _HANDLERS.get(line.kind, _prose)(st, line)
        return
    wrap = st.layout.wrap
    wrapped = wrap.width and wrap.breaks(st.previous, line)  # a function of the two lines alone
    if wrapped and last.kind == "section" and last.number_as_written:
        # A wrapped rule whose first line looked like a section title
        # ("100.1. These Magic rules assume a game between two players. Optional rules").
        _demote_section(st)
        last = st.out[-1]
    if last.kind in _CONTINUED and (
        wrapped
        or (line.kind in ("TEXT", "HEADING") and last.kind != "qa"
            and (line.text.startswith("   ") or st.layout.is_cr))
    ):
        _extend(st, line)
        return
    if last.kind == "qa" and line.kind == "ANSWER" and not last.answer:
        st.out[-1] = evolve(
            last,
            line_end=line.lineno,
            text_raw=last.text_raw + "\n" + line.text,
            answer=numbers.ANSWER_AT_START.sub("", line.text, count=1).strip(),
        )
        return
    handler = _HANDLERS.get(line.kind, _prose)
    handler(st, line)


def _emit(st: _State, line: Line, kind: str, pattern: re.Pattern[str] | None, parent: int) -> Element:
    number, body, repaired = split_number(pattern, line.text) if pattern else ("", line.text.strip(), False)
    el = _element(st.source_id, line.lineno, kind, line.text, body, number, parent,
                  _REPAIRED if repaired else (), st.region)
    st.out.append(el)
    return el


_REPAIRED = ("number_repaired",)
_new = tuple.__new__


def _element(source_id: str, lineno: int, kind: str, text: str, body: str, number: str, parent: int,
             flags: tuple[str, ...], region: str) -> Element:
    """``Element(source_id, lineno, lineno, kind, text, body=body, ...)`` for one
    line, made as a tuple (a named tuple's keywords go through Python per field)."""
    return _new(Element, (source_id, lineno, lineno, kind, text, body, number, parent, "", "", "", "", "",
                          flags, "", "", region, 0))


def _chapter(st: _State, line: Line) -> None:
    el = _emit(st, line, "chapter", numbers.CHAPTER_AT_START, 0)
    st.section = st.rule = st.qa = 0
    st.outer = st.chapter = el.line_start


def _section(st: _State, line: Line) -> None:
    sentence, outer, written, body, flags, number = _section_line(line.text)
    if sentence:
        _rule(st, line)
        return
    st.enclosing = (st.section, st.outer)
    # A three-digit section belongs to its chapter; a numbered subsection
    # ("702.42. Entwine") to the three-digit section around it.
    lineno = line.lineno
    st.out.append(_new(Element, (st.source_id, lineno, lineno, "section", line.text, body, written,
                                 st.chapter if outer else st.outer, "", "", "", "", "", flags, "", "", st.region, 0)))
    st.section, st.rule, st.qa = lineno, 0, 0
    st.numbers[lineno] = number
    if outer:
        st.outer = lineno


@lru_cache(maxsize=LINE_CACHE)
def _section_line(text: str) -> tuple[bool, bool, str, str, tuple[str, ...], str]:
    """What a section's line says, once per wording: whether it holds a sentence
    (then it is a rule), whether it is a three-digit section, its number as
    written, body and flags, and its number normalised."""
    m = numbers.SECTION_AT_START.match(text)
    # A title holds no sentence: a rule cut by a hard wrap. (A "?" it opens with
    # is a symbol that a single-byte save could not keep: "702.186. ∞ (Infinity)"
    # in cp1252 is "702.186. ? (Infinity)".)
    if m and _SENTENCE_INSIDE.search(text[m.end():].strip().lstrip("?")):
        return True, False, "", "", (), ""
    outer = "." not in (m.group(1) if m else "")
    written, body, repaired = split_number(numbers.SECTION_AT_START, text)
    return False, outer, written, body, _REPAIRED if repaired else (), numbers.normalise(written)


def _demote_section(st: _State) -> None:
    """Make the last element, read as a section, the rule it turned out to be."""
    el = st.out[-1]
    st.section, st.outer = st.enclosing
    number, body, repaired = split_number(numbers.RULE_AT_START, el.text_raw)
    parent = _rule_parent(st, *_rule_number(el.text_raw))
    st.out[-1] = evolve(el, kind="rule", number_as_written=number, body=body, parent_line=parent,
                        flags=("number_repaired",) if repaired else ())
    st.rule, st.qa = el.line_start, 0


# A section kept empty so that the numbers after it stay as they were: "211.
# [This section has been intentionally left blank to preserve the ordering of
# other rules.]" (2008-2009). Too long for a title, it is a section all the same.
def _placeholder(text: str) -> bool:
    m = numbers.SECTION_AT_START.match(text) if "[" in text else None
    rest = text[m.end():].strip() if m else ""
    return rest.startswith("[") and rest.endswith("]")


def _rule(st: _State, line: Line) -> None:
    text = line.text
    if "[" in text and _placeholder(text):
        _section(st, line._replace(kind="SECTION"))
        return
    written, body, flags, number, head, own = _rule_line(text)
    section = st.numbers.get(st.section, "")
    if section and number and own != section and ("." in section or head != section):
        parent = _rule_parent(st, number, head, own)
    else:  # _rule_parent's answer for most rules: the latest section
        parent = st.section
    lineno = line.lineno
    st.out.append(_new(Element, (st.source_id, lineno, lineno, "rule", text, body, written, parent, "", "", "", "",
                                 "", flags, "", "", st.region, 0)))
    st.rule, st.qa = lineno, 0
    st.rule_parents[number] = parent


@lru_cache(maxsize=LINE_CACHE)
def _rule_line(text: str) -> tuple[str, str, tuple[str, ...], str, str, str]:
    """What a rule's line says, whatever stands around it: its number as written,
    its body and flags, and ``_rule_number``'s three (each looked up once per
    wording: releases repeat most of their rules word for word)."""
    written, body, repaired = split_number(numbers.RULE_AT_START, text)
    return (written, body, _REPAIRED if repaired else (), *_rule_number(text))


@lru_cache(maxsize=LINE_CACHE)
def _rule_number(text: str) -> tuple[str, str, str]:
    """(number, its three-digit section, the section it belongs to) of a rule's line."""
    number = numbers.normalise(split_number(numbers.RULE_AT_START, text)[0])
    return number, number.partition(".")[0], numbers.section_of(number)


def _rule_parent(st: _State, number: str, head: str, own: str) -> int:
    """The section a rule belongs to (``_rule_number``'s three for its line): the
    latest one, unless the rule's number says otherwise. A sibling of a titled
    subsection ("606.7." after "606.6. Timing of Team Turns"), and its subrules,
    belong to the three-digit section around both; a rule of a subsection whose
    heading is missing ("502.39b" after "502.34. Imprint", in a scraped excerpt)
    to none that is known."""
    section = st.numbers.get(st.section, "")
    if not section or not number:
        return st.section
    if own == section or ("." not in section and head == section):
        return st.section
    if own in st.rule_parents:
        return st.rule_parents[own]
    if own == st.numbers.get(st.outer, ""):
        return st.outer
    return 0 if "." in own and head == section.partition(".")[0] else st.section


def _example(st: _State, line: Line) -> None:
    _emit(st, line, "example", None, st.rule or st.section)


def _question(st: _State, line: Line) -> None:
    m = numbers.QUESTION.match(line.text)
    question, answer = (m.group(1).strip(), (m.group(2) or "").strip()) if m else (line.text, "")
    el = Element(
        st.source_id, line.lineno, line.lineno, "qa", line.text, body=line.text.strip(),
        parent_line=st.section, question=question, answer=answer, region=st.region,
        number_as_written="",
    )
    st.out.append(el)
    st.qa = el.line_start


def _heading_line(st: _State, line: Line) -> None:
    text = line.text.strip()
    if text.lower() in PAGE_CHROME:
        _block(st, [line], "noise", noise_kind="page_chrome")
    elif _FAQ_LABEL.fullmatch(text):
        _block(st, [line], "noise", noise_kind="label", parent_line=st.section)
    elif st.qa or st.rule:
        _prose(st, line)
    else:
        el = _emit(st, line, "section", None, 0)
        st.section, st.rule, st.qa = el.line_start, 0, 0


def _prose(st: _State, line: Line) -> None:
    el = _emit(st, line, "prose", None, st.rule or st.section)
    if st.qa:
        st.out[-1] = evolve(el, continues=st.qa)


def _noise(kind: str) -> Callable[[_State, Line], None]:
    def handler(st: _State, line: Line) -> None:
        _block(st, [line], "noise", noise_kind=kind)

    return handler


# The kinds of line that ``_line`` hands to their handlers when no wrap joins them
# to the line before: all but TEXT, HEADING (either may continue an element) and
# ANSWER (it may be the answer to the question before it).
_ALONE = ("CHAPTER", "SECTION", "RULE", "EXAMPLE", "QUESTION", "VIM_FILLER", "BANNER", "DOTTED")

# Lines that are noise wherever they stand.
_NOISE_LINES = ("VIM_FILLER", "BANNER", "DOTTED")
_HANDLERS: dict[str, Callable[[_State, Line], None]] = {
    "CHAPTER": _chapter,
    "SECTION": _section,
    "RULE": _rule,
    "EXAMPLE": _example,
    "QUESTION": _question,
    "HEADING": _heading_line,
    "VIM_FILLER": _noise("vim_filler"),
    "BANNER": _noise("banner"),
    "DOTTED": _noise("toc_leader"),
}


def iter_lines(elements: Iterable[Element]) -> Iterator[int]:
    """Every line number an element covers (for coverage checks)."""
    for el in elements:
        yield from range(el.line_start, el.line_end + 1)


def with_line_flags(elements: list[Element], line_flags: tuple[tuple[int, str], ...]) -> list[Element]:
    """Give each element the flags decoding left on the lines it spans."""
    by_line: dict[int, list[str]] = {}
    for n, flag in line_flags:
        by_line.setdefault(n, []).append(flag)
    out = []
    for el in elements:
        found = [f for n in range(el.line_start, el.line_end + 1) for f in by_line.get(n, ())]
        out.append(evolve(el, flags=tuple(dict.fromkeys(el.flags + tuple(found)))) if found else el)
    return out


def forget() -> None:
    """Forget the lines read in this process (each line's pieces are remembered:
    releases repeat most of their lines): the next ones are read afresh."""
    for remembered in (toc_key, split_number, _section_line, _rule_line, _rule_number):
        remembered.cache_clear()
