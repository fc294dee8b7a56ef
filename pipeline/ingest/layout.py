"""A document's layout, found from its content: a whole document or a dump, its
hard wrap, and the region of each line.

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

Dumps without a title or date are all body. ``pipeline.ingest.assemble`` makes
the elements, region by region.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count, repeat
from operator import eq, itemgetter

import numpy as np

from pipeline import numbers
from pipeline.ingest.parse import Line

TOC_KEY = re.compile(r"[\s.]*\d*\s*$")  # what toc_key strips (the tests compare)
_CR_TITLE = re.compile(r"comprehensive\s+rules|(current|effective)\s+as\s+of", re.I)
# A line that ends a sentence (so the line after it was not wrapped onto it).
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"”’')\]]*\s*$")
# A line broken right after "rule" or "rules": what follows is the number cited.
_CITES_AT_END = re.compile(r"\brules?\s*$")
# Regions after the numbered rules, each opened by a heading of its name.
BACK_MATTER = ("glossary", "index", "credits")
_CONTENTS = ("contents", "table of contents")
_NUMBERED = ("CHAPTER", "SECTION", "RULE", "DOTTED")
_HEADED = ("CHAPTER", "SECTION", "DOTTED")
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
        if heading in BACK_MATTER and (region != "body" or numbered < i):
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
