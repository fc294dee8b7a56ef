"""Typed lines to elements: a document's structure, recognised from its content.

A whole Comprehensive Rules document has regions: front matter (title, date,
introduction), the table of contents, the numbered body, the glossary and the
credits. ``layout`` finds them from what the lines say, never from blank lines
or line positions (real copies lose and gain blank lines):

- a whole document names itself: a title ("Comprehensive Rules") or an
  effective-date statement before its first numbered line;
- its contents are a "Contents" heading, or a run of short numbered headings,
  whose entries come again in the body: the body starts at the first numbered
  line that repeats an entry, or at the first numbered subrule;
- "Glossary", "Index" and "Credits" stand in the contents and again, alone on
  their line, after the numbered rules, where they open the back matter.

Dumps without a title or date are all body. In the glossary a term is a short
unindented heading line after a complete entry; everything else continues it.

Answer paragraphs after a FAQ question, and the wrapped lines of hard-wrapped
layouts, join the element they continue. Unnumbered paragraphs after a
question are kept as their own ``prose`` elements marked ``continues``: only
once noise is known across the corpus can ``pipeline.corpus.noise`` tell a
continued answer from boilerplate pasted after it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, count, repeat
from operator import eq, itemgetter

import numpy as np

from pipeline import numbers
from pipeline.ingest.parse import Line
from pipeline.records import Element, evolve

TOC_KEY = re.compile(r"[\s.]*\d*\s*$")  # what toc_key strips (the tests compare)
_CR_TITLE = re.compile(r"comprehensive\s+rules|(current|effective)\s+as\s+of", re.I)
_FAQ_LABEL = re.compile(r"(specific|general|frequently asked) questions?", re.I)
# A sentence inside a line ("Speed is a value. See rule ..."): never a glossary term.
_SENTENCE_INSIDE = re.compile(r"(?<!\bvs)[.!?][\"”’)]?\s+\S")
# A line that ends a sentence (so the line after it was not wrapped onto it).
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"”’')\]]*\s*$")
# A line broken right after "rule" or "rules": what follows is the number cited.
_CITES_AT_END = re.compile(r"\brules?\s*$")
# Lone words of site navigation that scrapers keep (compared lower-cased).
PAGE_CHROME = frozenset({
    "search", "menu", "home", "login", "log in", "sign in", "sign up", "register",
    "share", "print", "skip to content", "skip to main content", "back to top",
    "next", "previous", "top", "cookie settings", "accept cookies", "subscribe",
    "advertisement",
})

# Regions after the numbered rules, each opened by a heading of its name.
_BACK_MATTER = ("glossary", "index", "credits")
_CONTENTS = ("contents", "table of contents")
_NUMBERED = ("CHAPTER", "SECTION", "RULE", "DOTTED")
_HEADED = ("CHAPTER", "SECTION", "DOTTED")
_CONTINUED = {"rule", "example", "qa", "prose", "glossary"}
# Lines that are never the rest of a sentence broken by a hard wrap.
_NEVER_WRAPPED = ("BANNER", "VIM_FILLER", "DOTTED", "EXAMPLE", "QUESTION", "ANSWER")
# Lines that start an element of their own once the sentence before them has ended.
_STARTS = ("CHAPTER", "SECTION", "RULE", "EXAMPLE", "QUESTION", "ANSWER", "HEADING")


# Releases repeat most of their predecessors' lines, so the functions of a line's
# text alone remember their answers for the lines seen last (per process).
LINE_CACHE = 1 << 15


@lru_cache(maxsize=LINE_CACHE)
def toc_key(text: str) -> str:
    """A contents entry without dot leaders or page number, for matching its heading.

    >>> toc_key("     100. General.........2")
    '100. general'
    """
    # What ``TOC_KEY.sub("", text)`` leaves, without the regex's quadratic retries:
    # trailing spaces, then a page number, then dot leaders and spaces.
    end = len(text.rstrip())
    while end and text[end - 1].isdecimal():
        end -= 1
    while end and (text[end - 1].isspace() or text[end - 1] == "."):
        end -= 1
    return " ".join(text[:end].split()).lower()


@lru_cache(maxsize=LINE_CACHE)
def split_number(pattern: re.Pattern[str], text: str) -> tuple[str, str, bool]:
    """(number as written, body, repaired?) for a numbered line."""
    m = pattern.match(text)
    if not m:
        return "", text.strip(), False
    number = m.group(1)
    glued = not m.group(3) and m.end() < len(text.rstrip())
    return number, text[m.end():].strip(), glued or " " in number


def _heading(line: Line) -> str:
    """The text of a line that stands alone as a heading, lower-cased, else ''."""
    return line.text.strip().lower() if line.kind == "HEADING" else ""


@dataclass(frozen=True, slots=True)
class Wrap:
    """How a hard-wrapped layout breaks its lines; ``width`` 0 when it does not.

    2003-2004 releases end a broken line with the space before the break
    (``trailing``); 1999 and 2001 copies are cut at a fixed width without one.
    """

    width: int = 0
    trailing: bool = False

    def breaks(self, before: Line | None, following: Line) -> bool:
        """Whether ``following`` continues the sentence the line ``before`` it was broken in."""
        if not self.width or before is None or following.kind in _NEVER_WRAPPED or before.kind in _NEVER_WRAPPED:
            return False
        previous = before.text
        ends = _ENDS_SENTENCE.search(previous) is not None
        if self.trailing:
            # A sentence ends and a numbered rule, an example or a question starts.
            if ends and following.kind in _STARTS:
                return False
            return previous.endswith((" ", "-", "\u2014", "\u2013")) and len(previous) >= self.width // 2
        if ends:
            return False
        if following.kind == "RULE" and _CITES_AT_END.search(previous):
            # "... This is an exception to rule" / "217.5c." (2001): a cross-reference
            # cut at the width, not a rule of its own, whatever its length.
            return True
        words = following.text.split()
        # A sentence that goes on in lower case, or whose next word would not
        # have fit at the end of the line.
        return bool(words) and (words[0][:1].islower() or len(previous.rstrip()) + 1 + len(words[0]) > self.width)


def wrap_of(lines: Sequence[Line]) -> Wrap:
    """The hard wrap of a text, found from its line lengths."""
    if len(lines) < 5:
        return Wrap()
    texts = list(map(_TEXT, lines))
    n = len(lines)
    # The lengths at three ranks (what sorting them all would put there), by a partial sort.
    ranks = (n // 2, int(n * 0.9), int(n * 0.99))
    middle, tenth, cap = np.partition(np.fromiter(map(len, texts), np.int64, n), ranks)[list(ranks)].tolist()
    if sum(map(str.endswith, texts, repeat(" "))) >= 0.3 * n:
        return Wrap(tenth, trailing=True)
    if n >= 20 and 60 <= cap <= 130 and middle >= 0.6 * cap:
        return Wrap(cap)
    return Wrap()


@dataclass(frozen=True, slots=True)
class Layout:
    """What a source is, from its content: a whole document or a dump, its wrap,
    and the region of each line."""

    is_cr: bool
    wrap: Wrap
    regions: tuple[str, ...]


def layout(lines: Sequence[Line]) -> Layout:
    """Find the regions of a source's lines (see the module docstring)."""
    first_numbered = next((i for i, ln in enumerate(lines) if ln.kind in _NUMBERED), len(lines))
    is_cr = any(_CR_TITLE.search(ln.text) for ln in lines[:first_numbered])
    body = _body_start(lines) if is_cr else 0
    toc = _contents_start(lines, body) if is_cr else body
    regions = ["front"] * toc + ["toc"] * (body - toc)
    # From the body on, a region changes only at a heading that names one (after
    # a numbered line, or in the back matter): the headings and the first
    # numbered line found by C loops, and each region's lines made at once.
    kinds = list(map(_KIND, lines))
    numbered = min((_index(kinds, kind, body) for kind in _NUMBERED), default=len(lines))
    region, start = "body", body
    for i in compress(count(), map(eq, kinds, repeat("HEADING"))):
        if i < body:
            continue
        heading = lines[i].text.strip().lower()  # _heading(ln), for the one kind it is not '' for
        if heading in _BACK_MATTER and (region != "body" or numbered < i):
            regions += [region] * (i - start)
            region, start = heading, i
    regions += [region] * (len(lines) - start)
    return Layout(is_cr, wrap_of(lines), tuple(regions))


_KIND, _TEXT = itemgetter(0), itemgetter(2)  # Line.kind, Line.text


def _index(kinds: list[str], kind: str, start: int) -> int:
    """Where ``kind`` is first in ``kinds`` from ``start`` on, else their length."""
    try:
        return kinds.index(kind, start)
    except ValueError:
        return len(kinds)


def _body_start(lines: Sequence[Line]) -> int:
    """Where the body of a whole document starts: after its contents, whose
    entries come again there; without contents, at its first numbered line."""
    repeated = Counter(map(toc_key, compress(map(_TEXT, lines), map(_HEADED.__contains__, map(_KIND, lines)))))
    keys: set[str] = set()
    in_contents = False
    fresh_chapter = -1  # a chapter heading the contents did not list
    for i, ln in enumerate(lines):
        if _heading(ln) in _CONTENTS:
            in_contents = True
            continue
        if ln.kind not in _NUMBERED:
            if in_contents:
                keys.add(toc_key(ln.text))
            continue
        key = toc_key(ln.text)
        if key in keys or (ln.kind == "RULE" and _is_subrule(ln)):
            # The body's first chapter heading, when the contents named it otherwise
            # ("1. Game Concepts" there, "1. The Game" here, in July 2009), opens it.
            return i - 1 if fresh_chapter == i - 1 else i
        if ln.kind == "CHAPTER":
            fresh_chapter = i
        if not in_contents and not (ln.kind == "DOTTED" or (ln.kind in _HEADED and repeated[key] > 1)):
            return i  # no contents: the body starts at the first numbered line
        in_contents = True
        keys.add(key)
    return len(lines)


def _contents_start(lines: Sequence[Line], body: int) -> int:
    """The first line of the contents: its heading, else its first numbered entry."""
    for i, ln in enumerate(lines[:body]):
        if _heading(ln) in _CONTENTS or ln.kind in _NUMBERED:
            return i
    return body


def _is_subrule(line: Line) -> bool:
    """A rule numbered below a section ("100.1", "702.41a"): never a contents entry."""
    number, _, _ = split_number(numbers.RULE_AT_START, line.text)
    return "." in number.rstrip(".")


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
            if region in ("front", "toc", "credits", "index") or (opens and region in _BACK_MATTER):
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
