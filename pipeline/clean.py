"""Cleanup: small, named, pure ``str -> str`` fixers applied in a fixed order.

Each fixer that changes a text names a flag, so that every change can be
explained in the ``flags`` column. Cleaning clean text changes nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

from pipeline.records import Element

_WORD = re.compile(r"[A-Za-z]+")
_LOWER_RUN = re.compile(r"\b[a-z]{6,}\b")
_CAMEL = re.compile(r"\b([a-z]{2,})([A-Z][a-z]+)\b")
_UNDERSCORE = re.compile(r"(?<![\w_])_([^_\n]+?)_(?![\w_])")
_SPACES = re.compile(r"[ \t]{2,}")
_SENTENCE_END = re.compile(r"[.!?:\"”’')\]]\s*$")

# Words too short or too common to be caught by frequency alone.
_SHORT = frozenset("a an as at be by do if in is it no of on or so to up we".split())


@lru_cache(maxsize=1)
def base_vocabulary() -> Counter[str]:
    """Word counts of the bundled Comprehensive Rules, shipped with the package."""
    data = resources.files("pipeline").joinpath("data/vocabulary.txt").read_text("utf-8")
    counts: Counter[str] = Counter()
    for line in data.splitlines():
        if line and not line.startswith("#"):
            word, _, n = line.partition(" ")
            counts[word] = int(n or 1)
    return counts


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Known words and how often the corpus uses them."""

    counts: Counter[str]

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Vocabulary:
        counts = Counter(base_vocabulary())
        for text in texts:
            counts.update(w.lower() for w in _WORD.findall(text))
        return cls(counts)

    def known(self, word: str) -> bool:
        return word in _SHORT or self.counts.get(word, 0) >= 2

    def split(self, word: str) -> tuple[str, str] | None:
        """The most likely two known words that ``word`` glues together, if any."""
        if self.known(word):
            return None
        best: tuple[int, str, str] | None = None
        for i in range(2, len(word) - 1):
            a, b = word[:i], word[i:]
            if self.known(a) and self.known(b) and len(a) + len(b) >= 6:
                score = min(self.counts.get(a, 50), self.counts.get(b, 50))
                if best is None or score > best[0]:
                    best = (score, a, b)
        return (best[1], best[2]) if best else None


def strip_markup(text: str, vocab: Vocabulary | None = None) -> str:
    """Drop the ``_italic_`` underscores of 2008-2014 releases.

    >>> strip_markup("the _Magic: The Gathering_ game")
    'the Magic: The Gathering game'
    """
    return _UNDERSCORE.sub(r"\1", text)


def collapse_spaces(text: str, vocab: Vocabulary | None = None) -> str:
    """Runs of spaces inside a line become one space; lines are trimmed.

    >>> collapse_spaces("702.1  Most   abilities ")
    '702.1 Most abilities'
    """
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))


def split_glued(text: str, vocab: Vocabulary | None = None) -> str:
    """Split words a scraper glued together, when both halves are corpus words.

    >>> v = Vocabulary.from_texts(["ability ability based based about about Auras Auras"])
    >>> split_glued("that abilitybased aboutAuras", v)
    'that ability based about Auras'
    """
    if vocab is None:
        return text

    def lower(m: re.Match[str]) -> str:
        parts = vocab.split(m.group(0))
        return " ".join(parts) if parts else m.group(0)

    def camel(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        if vocab.known(a) and vocab.known(b.lower()):
            return f"{a} {b}"
        return m.group(0)

    return _CAMEL.sub(camel, _LOWER_RUN.sub(lower, text))


Fixer = Callable[[str, "Vocabulary | None"], str]

# The registry: order matters (markup first, so glued words are seen bare).
FIXERS: tuple[tuple[str, Fixer], ...] = (
    ("markup_removed", strip_markup),
    ("spaces_collapsed", collapse_spaces),
    ("words_split", split_glued),
)


def fix_and_explain(text: str, vocab: Vocabulary | None) -> tuple[str, list[str]]:
    """Apply every fixer; return the text and the flags of those that changed it."""
    flags = []
    for flag, fixer in FIXERS:
        fixed = fixer(text, vocab)
        if fixed != text:
            flags.append(flag)
            text = fixed
    if "\ufffd" in text:
        flags.append("replacement_char")
    return text, flags


def is_truncated(text: str) -> bool:
    """Whether a text stops mid-sentence.

    >>> is_truncated("702.51a Dredge is a"), is_truncated("It resolves.")
    (True, False)
    """
    return bool(text.strip()) and not _SENTENCE_END.search(text)


_CLEANED = {"chapter", "section", "rule", "example", "glossary", "qa", "prose", "front_matter"}


def clean(elements: Iterable[Element], vocab: Vocabulary) -> list[Element]:
    """Cleaned ``text`` (and question, answer, term) with flags for every change."""
    out = []
    for el in elements:
        if el.kind not in _CLEANED:
            out.append(replace(el, text=el.body))
            continue
        text, flags = fix_and_explain(el.body, vocab)
        extra: dict[str, str] = {}
        if el.kind == "qa":
            extra["question"], f1 = fix_and_explain(el.question, vocab)
            extra["answer"], f2 = fix_and_explain(el.answer, vocab)
            flags += f1 + f2
        if el.kind == "glossary":
            extra["term"], _ = fix_and_explain(el.term, vocab)
        merged = tuple(dict.fromkeys(el.flags + tuple(flags)))
        out.append(replace(el, text=text, flags=merged, **extra))
    return out
