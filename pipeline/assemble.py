"""Paragraphs of typed lines to elements: where a line stands decides what it is.

A whole Comprehensive Rules document has regions: front matter (title, date,
introduction), the table of contents, the numbered body, the glossary and the
credits. "Glossary" and "Credits" appear in the contents and again in the body;
the contents end where a chapter or section title seen in them comes again.
Dumps without a title or contents are all body.

Answer paragraphs after a FAQ question, and the wrapped lines of hard-wrapped
layouts, join the element they continue. Unnumbered paragraphs after a
question are kept as their own ``prose`` elements marked ``continues``: only
once noise is known across the corpus can ``pipeline.noise`` tell a
continued answer from boilerplate pasted after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pipeline.parse import Line, Paragraph
from pipeline.records import Element, evolve

_RULE_NO = re.compile(
    r"\s*(\d{3}(?:\.(?:[ ]?\d{1,3}(?:[a-z]{1,2}(?![a-z])|[a-z](?=[A-Z]))?|[a-z](?![a-z])))?)(\.?)(\s*)"
)
_SECTION_NO = re.compile(r"\s*(\d{3}(?:\.[ ]?\d{1,3})?)(\.?)(\s*)")
_CHAPTER_NO = re.compile(r"\s*(\d)(\.)(\s*)")
_TOC_KEY = re.compile(r"[\s.]*\d*\s*$")
_CR_TITLE = re.compile(r"comprehensive\s+rules|(current|effective)\s+as\s+of", re.I)
_QA = re.compile(r"\s*Q[:.]\s*(.*?)(?:\s+A[:.]\s+(.*))?\s*$", re.S)
_ANSWER = re.compile(r"\s*A[:.]\s*")
_FAQ_LABEL = re.compile(r"(specific|general|frequently asked) questions?", re.I)
# Lone words of site navigation that scrapers keep (compared lower-cased).
PAGE_CHROME = frozenset({
    "search", "menu", "home", "login", "log in", "sign in", "sign up", "register",
    "share", "print", "skip to content", "skip to main content", "back to top",
    "next", "previous", "top", "cookie settings", "accept cookies", "subscribe",
    "advertisement",
})

# Regions after the numbered rules, each opened by a heading of its name.
_BACK_MATTER = ("glossary", "index", "credits")

_CONTINUED = {"rule", "example", "qa", "prose", "glossary"}


def toc_key(text: str) -> str:
    """A contents entry without dot leaders or page number, for matching its heading.

    >>> toc_key("     100. General.........2")
    '100. general'
    """
    return " ".join(_TOC_KEY.sub("", text).split()).lower()


def split_number(pattern: re.Pattern[str], text: str) -> tuple[str, str, bool]:
    """(number as written, body, repaired?) for a numbered line."""
    m = pattern.match(text)
    if not m:
        return "", text.strip(), False
    number = m.group(1)
    glued = not m.group(3) and m.end() < len(text.rstrip())
    return number, text[m.end():].strip(), glued or " " in number


def wrap_width(paragraphs: list[Paragraph]) -> int:
    """The width hard-wrapped text (2003-2004) was wrapped at; 0 when it is not.

    Such text ends most lines with the space before the break.
    """
    lines = [ln for p in paragraphs for ln in p]
    trailing = sum(1 for ln in lines if ln.text.endswith(" "))
    if len(lines) < 5 or trailing < 0.3 * len(lines):
        return 0
    return sorted(len(ln.text) for ln in lines)[int(len(lines) * 0.9)]


def _wraps(previous: str, width: int) -> bool:
    """Whether a line of hard-wrapped text was broken, not ended, after ``previous``."""
    return previous.endswith((" ", "-", "\u2014", "\u2013")) and len(previous) >= width // 2


@dataclass
class _State:
    source_id: str
    wrap: int
    is_cr: bool
    region: str
    region_start: int = 0
    outer: int = 0  # the latest chapter or three-digit section
    toc_keys: set[str] = field(default_factory=set)
    section: int = 0
    rule: int = 0
    qa: int = 0
    out: list[Element] = field(default_factory=list)


def assemble(source_id: str, paragraphs: list[Paragraph]) -> list[Element]:
    """Turn one source's paragraphs into elements covering every non-blank line."""
    head = [ln.text for p in paragraphs[:12] for ln in p][:12]
    is_cr = any(_CR_TITLE.search(t) for t in head)
    state = _State(source_id, wrap_width(paragraphs), is_cr, "front" if is_cr else "body")
    for para in paragraphs:
        _paragraph(state, para)
    return state.out


def _paragraph(st: _State, para: Paragraph) -> None:
    first = para[0]
    heading = first.text.strip().lower()
    if st.region in ("front", "toc") and first.kind in ("CHAPTER", "SECTION", "RULE", "DOTTED"):
        # The contents end where one of their entries comes again; a document
        # without contents starts its body at its first numbered line.
        repeated = st.region == "toc" and toc_key(first.text) in st.toc_keys
        no_contents = st.region == "front" and not st.toc_keys and first.kind != "DOTTED"
        if repeated or no_contents:
            st.region = "body"
    if st.region == "front" and heading in ("contents", "table of contents"):
        st.region = "toc"
    lone_heading = first.kind == "HEADING" and len(para) == 1
    if st.region == "body" and lone_heading and heading in _BACK_MATTER and (st.section or st.rule):
        st.region, st.region_start = heading, first.lineno
    if st.region in _BACK_MATTER and heading in _BACK_MATTER and len(para) == 1:
        st.region, st.region_start = heading, first.lineno

    if st.region in ("front", "toc", "credits", "index"):
        if st.region == "toc":
            st.toc_keys.update(toc_key(ln.text) for ln in para)
        _block(st, para, "front_matter")
        return
    if st.region in _BACK_MATTER and first.lineno == st.region_start:
        _block(st, para, "front_matter")
        return
    if st.region == "glossary":
        _glossary(st, para)
        return
    for line in para:
        _line(st, line)


def _block(st: _State, lines: Iterable[Line], kind: str, **kw: object) -> None:
    seq = list(lines)
    text = "\n".join(ln.text for ln in seq)
    st.out.append(
        Element(st.source_id, seq[0].lineno, seq[-1].lineno, kind, text,
                body=text.strip(), region=st.region, **kw)  # type: ignore[arg-type]
    )


def _join(st: _State, lines: Iterable[Line]) -> str:
    """Join lines: a hard-wrapped line joins the next with a space, others with a newline."""
    out, prev = "", ""
    for ln in lines:
        if out:
            out += " " if st.wrap and _wraps(prev, st.wrap) else "\n"
        out += ln.text.strip()
        prev = ln.text
    return out


def _glossary(st: _State, para: Paragraph) -> None:
    term = para[0].text.strip()
    definition = _join(st, para[1:])
    _block(st, para, "glossary", term=term)
    st.out[-1] = evolve(st.out[-1], body=definition)


def _extend(st: _State, line: Line) -> None:
    last = st.out[-1]
    sep = " " if st.wrap and not line.text.startswith("   ") else "\n"
    st.out[-1] = evolve(
        last,
        line_end=line.lineno,
        text_raw=last.text_raw + "\n" + line.text,
        body=(last.body.rstrip() + sep + line.text.strip()).strip(),
        answer=(last.answer.rstrip() + sep + line.text.strip()).strip() if last.kind == "qa" else "",
    )


def _line(st: _State, line: Line) -> None:
    last = st.out[-1] if st.out else None
    if last is not None and last.kind in _CONTINUED and (
        (st.wrap and last.line_end == line.lineno - 1 and _wraps(last.text_raw.rsplit("\n", 1)[-1], st.wrap))
        or (line.kind in ("TEXT", "HEADING") and last.kind != "qa"
            and (line.text.startswith("   ") or (st.is_cr and last.line_end == line.lineno - 1)))
    ):
        _extend(st, line)
        return
    if last is not None and last.kind == "qa" and line.kind == "ANSWER" and not last.answer:
        st.out[-1] = evolve(
            last,
            line_end=line.lineno,
            text_raw=last.text_raw + "\n" + line.text,
            answer=_ANSWER.sub("", line.text, count=1).strip(),
        )
        return
    handler = _HANDLERS.get(line.kind, _prose)
    handler(st, line)


def _emit(st: _State, line: Line, kind: str, pattern: re.Pattern[str] | None, parent: int) -> Element:
    number, body, repaired = split_number(pattern, line.text) if pattern else ("", line.text.strip(), False)
    el = Element(
        st.source_id, line.lineno, line.lineno, kind, line.text, body=body,
        number_as_written=number, parent_line=parent, region=st.region,
        flags=("number_repaired",) if repaired else (),
    )
    st.out.append(el)
    return el


def _chapter(st: _State, line: Line) -> None:
    el = _emit(st, line, "chapter", _CHAPTER_NO, 0)
    st.section = st.rule = st.qa = 0
    st.outer = el.line_start


def _section(st: _State, line: Line) -> None:
    outer = "." not in _num(line)
    el = _emit(st, line, "section", _SECTION_NO, st.section if outer else _chapter_parent(st))
    st.section, st.rule, st.qa = el.line_start, 0, 0
    if outer:
        st.outer = el.line_start


def _num(line: Line) -> str:
    m = _SECTION_NO.match(line.text)
    return m.group(1) if m else ""


def _chapter_parent(st: _State) -> int:
    """A numbered section's parent: the three-digit section (or chapter) it belongs to."""
    return st.outer


def _rule(st: _State, line: Line) -> None:
    el = _emit(st, line, "rule", _RULE_NO, st.section)
    st.rule, st.qa = el.line_start, 0


def _example(st: _State, line: Line) -> None:
    _emit(st, line, "example", None, st.rule or st.section)


def _question(st: _State, line: Line) -> None:
    m = _QA.match(line.text)
    question, answer = (m.group(1).strip(), (m.group(2) or "").strip()) if m else (line.text, "")
    el = Element(
        st.source_id, line.lineno, line.lineno, "qa", line.text, body=line.text.strip(),
        parent_line=st.section, question=question, answer=answer, region=st.region,
        number_as_written="",
    )
    st.out.append(el)
    st.qa = el.line_start


def _heading(st: _State, line: Line) -> None:
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


_HANDLERS: dict[str, Callable[[_State, Line], None]] = {
    "CHAPTER": _chapter,
    "SECTION": _section,
    "RULE": _rule,
    "EXAMPLE": _example,
    "QUESTION": _question,
    "HEADING": _heading,
    "VIM_FILLER": _noise("vim_filler"),
    "BANNER": _noise("banner"),
    "DOTTED": _noise("toc_leader"),
}


def iter_lines(elements: Iterable[Element]) -> Iterator[int]:
    """Every line number an element covers (for coverage checks)."""
    for el in elements:
        yield from range(el.line_start, el.line_end + 1)
