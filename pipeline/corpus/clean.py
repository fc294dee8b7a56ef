"""Cleanup: small, named, pure ``str -> str`` fixers applied in a fixed order.

Each fixer that changes a text names a flag, so that every change can be
explained in the ``flags`` column. Cleaning clean text changes nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from operator import attrgetter

from pipeline.records import Element, Source, evolve, setter

_WORD = re.compile(r"[A-Za-z]+")
_LOWER_RUN = re.compile(r"\b[a-z]{6,}\b")
_CAMEL = re.compile(r"\b([a-z]{2,})([A-Z][a-z]+)\b")
_LOWER_UPPER = re.compile(r"[a-z][A-Z]")  # what every _CAMEL match holds
_UNDERSCORE = re.compile(r"(?<![\w_])(__?)([^_\n]+?)\1(?![\w_])")
_UNDERSCORE_TM = re.compile(r"(?<![\w_])_([^_\n]+?)_TM\b")  # "_Odyssey_TM": the releases round it write "Odyssey(TM)"
_SPACES = re.compile(r"[ \t]{2,}")
_CURLY_OPEN = re.compile(r"(?<=[A-Za-z])“(?=[A-Za-z])")
_CURLY_CLOSE = re.compile(r"(?<=[A-Za-z.,!?])”(?=[A-Za-z])")
_SENTENCE_END = re.compile(r"[.!?:\"”’')\]]\s*$")

# Short words that follow a glued word ("blockedas", "typein").
_SHORT = frozenset(["an", "as", "at", "by", "if", "in", "is", "it", "of", "on", "or", "to"])
# Short words that precede a glued pair ("atypecyclingability").
_LEADING = ("a", "an", "the", "of", "to", "in", "on", "or", "is", "by", "as", "at", "if", "and")
_PREFIXES = frozenset(["anti", "co", "de", "dis", "mis", "multi", "non", "over", "pre", "re", "sub", "un", "under"])
_SUFFIXES = frozenset([
    "able", "ably", "ally", "ed", "er", "est", "ful", "fully", "ing", "ity", "ize", "less", "ly", "ment", "ness",
    "ous", "ship",
])


@lru_cache(maxsize=1)
def base_vocabulary() -> frozenset[str]:
    """Words of the bundled Comprehensive Rules, shipped with the package."""
    data = resources.files("pipeline").joinpath("data/vocabulary.txt").read_text("utf-8")
    return frozenset(line.split()[0] for line in data.splitlines() if line and not line.startswith("#"))


def words_of(texts: Iterable[str]) -> set[str]:
    """The lower-cased words of ``texts``, found in one pass over them all.

    >>> sorted(words_of(["Untap the", "untap step"]))
    ['step', 'the', 'untap']
    """
    # A newline is no letter, so no word runs from one text into the next.
    return set(map(str.lower, _WORD.findall("\n".join(texts))))


def word_counts(texts: Iterable[str]) -> Counter[str]:
    """Lower-cased word counts of ``texts``, each distinct text read once and its
    words counted as often as it occurs (the releases repeat most wordings): the
    texts that occur equally often are read in one pass.

    >>> word_counts(["Untap the untap step", "Untap the untap step", "the end"])["the"]
    3
    """
    by_times: dict[int, list[str]] = {}
    for text, times in Counter(texts).items():
        by_times.setdefault(times, []).append(text)
    counts: Counter[str] = Counter()
    for times, group in by_times.items():
        found = Counter(map(str.lower, _WORD.findall("\n".join(group))))
        counts.update({word: n * times for word, n in found.items()} if times > 1 else found)
    return counts


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Known words: every word of an official document, or one the corpus repeats.

    Glued words are scraping damage, so they never occur in an official
    Comprehensive Rules document; game terms (``deathtouch``, ``landwalk``) do.
    """

    official: frozenset[str]
    counts: Counter[str]
    # The official texts themselves: each of their words is known, so split_glued
    # has no unknown word to look for in them.
    texts: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    # Every word known() accepts, as one set, so a text is checked in one set operation.
    words: frozenset[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        repeated = (word for word, n in self.counts.items() if n >= 3)
        object.__setattr__(self, "words", _SHORT | self.official | frozenset(repeated))

    @classmethod
    def build(cls, official: Iterable[str], other: Iterable[str] = ()) -> Vocabulary:
        # Official texts only add words; each distinct wording is read once.
        texts = frozenset(official)
        return cls(base_vocabulary() | words_of(texts), word_counts(other), texts)

    def known(self, word: str) -> bool:
        return word in self.words

    def split(self, word: str) -> tuple[str, ...] | None:
        """The known words that ``word`` glues together, if there is one way.

        Two words: the first of three letters or more and not a prefix (``non``,
        ``re``), the second not a suffix (``able``, ``less``). Three: a short
        word ("a", "the") glued to two such words ("atypecyclingability"); a
        short word glued to one ("anew", "atop") is a word of its own.
        """
        if self.known(word):
            return None
        two = self._two(word)
        if two:
            return two
        found = [(short, *rest) for short in _LEADING if word.startswith(short)
                 for rest in [self._two(word[len(short):])] if rest]
        return found[0] if len(found) == 1 else None

    def _two(self, word: str) -> tuple[str, str] | None:
        if self.known(word):
            return None
        found = [
            (word[:i], word[i:])
            for i in range(3, len(word) - 1)
            if word[:i] not in _PREFIXES and word[i:] not in _SUFFIXES
            and self.known(word[:i]) and self.known(word[i:])
        ]
        return found[0] if len(found) == 1 else None


def strip_markup(text: str, vocab: Vocabulary | None = None) -> str:
    """Drop the ``_italic_`` underscores of 2008-2014 releases (doubled in
    cr-2010-10-01's ``__Magic: The Gathering__ Tournament Rules``; before a
    lost trademark sign in ``_Odyssey_TM``, written "Odyssey(TM)" as the
    releases round it write it); a blank to fill in ("Wolf in ________
    Clothing") stays.

    >>> strip_markup("the _Magic: The Gathering_ game, the __Magic__ rules")
    'the Magic: The Gathering game, the Magic rules'
    >>> strip_markup("many _Odyssey_TM block cards")
    'many Odyssey(TM) block cards'
    >>> strip_markup("“Wolf in ________ Clothing”")
    '“Wolf in ________ Clothing”'
    """
    if "_" not in text:  # nearly every text: the pattern needs one
        return text
    return _UNDERSCORE.sub(r"\2", _UNDERSCORE_TM.sub(r"\1(TM)", text))


def collapse_spaces(text: str, vocab: Vocabulary | None = None) -> str:
    """Runs of spaces inside a line become one space; lines are trimmed.

    >>> collapse_spaces("702.1  Most   abilities ")
    '702.1 Most abilities'
    """
    if "\n" not in text and "\t" not in text and "  " not in text:  # one line, no run to collapse (most texts)
        return text.strip()
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))


def split_glued(text: str, vocab: Vocabulary | None = None) -> str:
    """Split words a scraper glued together, when both halves are corpus words.

    >>> v = Vocabulary.build(["that ability based about Auras"])
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

    # Most texts have no unknown long word (an official text none: its words are
    # known): lower() would give each back as it is. Few have a lower-case letter
    # before a capital, which a camel-cased pair needs.
    if text not in vocab.texts and not vocab.words.issuperset(_LOWER_RUN.findall(text)):
        text = _LOWER_RUN.sub(lower, text)
    return _CAMEL.sub(camel, text) if _LOWER_UPPER.search(text) else text


def space_quotes(text: str, vocab: Vocabulary | None = None) -> str:
    """Put back the space a scraper lost before an opening quote or after a closing one.

    Straight quotes open and close in turn, so a text with an even number of
    them says which is which; curly quotes say so themselves.

    >>> print(space_quotes('auras that say"this effect doesn’t remove" either'))
    auras that say "this effect doesn’t remove" either
    >>> print(space_quotes('say “this”and that'))
    say “this” and that
    """
    if '"' not in text and "“" not in text and "”" not in text:  # nothing to look at (most texts)
        return text
    if "”" in text:
        text = _CURLY_CLOSE.sub("” ", text)
    if "“" in text:
        text = _CURLY_OPEN.sub(" “", text)
    if '"' not in text or text.count('"') % 2:
        return text
    pieces = text.split('"')
    for i in range(1, len(pieces)):
        before, after = pieces[i - 1], pieces[i]
        opening = i % 2 == 1
        if opening and before[-1:].isalpha() and after[:1].isalpha():
            pieces[i - 1] = before + " "
        elif not opening and before[-1:].isalpha() and after[:1].isalpha():
            pieces[i] = " " + after
    return '"'.join(pieces)


Fixer = Callable[[str, "Vocabulary | None"], str]

# The registry: order matters (markup first, so glued words are seen bare).
FIXERS: tuple[tuple[str, Fixer], ...] = (
    ("markup_removed", strip_markup),
    ("spaces_collapsed", collapse_spaces),
    ("words_split", split_glued),
    ("quote_spaced", space_quotes),
)


def fix_and_explain(text: str, vocab: Vocabulary | None,
                    fixers: Sequence[tuple[str, Fixer]] = FIXERS) -> tuple[str, list[str]]:
    """Apply every fixer; return the text and the flags of those that changed it."""
    flags = []
    for flag, fixer in fixers:
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


_BODY = attrgetter("body")
_CLEANED = {"chapter", "section", "rule", "example", "glossary", "qa", "prose", "front_matter"}


# The copies clean makes: one per element, with the fields its kind cleans.
_SET_TEXT = setter("text")
_SET_CLEANED = setter("text", "flags")
_SET_QA = setter("text", "question", "answer", "flags")
_SET_TERM = setter("text", "term", "flags")


def _merged(flags: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """``flags`` then those of ``more`` (which repeats none) not among them, in order."""
    return tuple(dict.fromkeys(flags + more)) if flags else more


def clean(
    elements: Iterable[Element], vocab: Vocabulary, memo: dict[str, tuple[str, tuple[str, ...]]] | None = None
) -> list[Element]:
    """Cleaned ``text`` (and question, answer, term) with flags for every change.

    ``memo`` (text -> cleaned text and flags), shared across sources, cleans
    each distinct wording once: releases repeat most of their predecessors'
    text verbatim. An element is then one look-up and one copy.
    """
    memo = {} if memo is None else memo
    done = memo.get

    def fix(text: str) -> tuple[str, tuple[str, ...]]:
        fixed, flags = fix_and_explain(text, vocab)
        found = memo[text] = (fixed, tuple(flags))
        return found

    out: list[Element] = []
    append = out.append
    for el in elements:
        kind, body = el.kind, el.body
        if kind not in _CLEANED:
            append(_SET_TEXT(el, body))
            continue
        text, flags = done(body) or fix(body)
        if kind == "qa":
            question, f1 = done(el.question) or fix(el.question)
            answer, f2 = done(el.answer) or fix(el.answer)
            flags = tuple(dict.fromkeys(flags + f1 + f2))
            append(_SET_QA(el, text, question, answer, _merged(el.flags, flags) if flags else el.flags))
        elif kind == "glossary":
            term = (done(el.term) or fix(el.term))[0]
            append(_SET_TERM(el, text, term, _merged(el.flags, flags) if flags else el.flags))
        else:
            append(_SET_CLEANED(el, text, _merged(el.flags, flags) if flags else el.flags))
    return out


def flag_truncation(src: Source, elements: list[Element]) -> tuple[Source, list[Element]]:
    """Flag a source, and its last element, when it stops mid-sentence or before its end."""
    at = next((i for i in range(len(elements) - 1, -1, -1)
               if elements[i].kind not in ("noise", "front_matter")), None)  # the last content element
    if at is None:
        return src, elements
    last = elements[at]
    if src.format == "cr_document":
        # A whole document ends with its credits; the glossary before them may
        # end without a full stop (the 1999 index does). Sought from the end.
        truncated = not any(el.region == "credits" for el in reversed(elements))
    else:
        truncated = is_truncated(last.text)
    if truncated:
        elements = list(elements)
        elements[at] = evolve(last, flags=last.flags + ("truncated",))
        src = replace(src, flags=src.flags + ("truncated",))
    return src, elements


def clean_sources(
    sources: list[Source], per_source: list[list[Element]]
) -> Iterator[tuple[int, Source, list[Element]]]:
    """The cleaning stage over the whole corpus: (index, source, cleaned elements) for
    each source, the dated official documents first, oldest first (by date, then id:
    the job sends each release on to the lineage workers as soon as it is clean). The
    vocabulary comes from every source's text (the official releases' words first);
    each distinct wording is cleaned once. A source's elements in ``per_source`` are
    let go as it is cleaned. The source gains its truncation flag and its
    ``line_counts`` (lines per element kind)."""
    # A source's elements are its own (the i-th list is sources[i]'s): official or not, a source at a time.
    official: set[str] = set()
    other: list[str] = []
    for src, els in zip(sources, per_source, strict=True):
        if src.format == "cr_document":
            official.update(map(_BODY, els))
        else:
            other.extend(el.body for el in els if el.kind != "noise")
    vocab = Vocabulary.build(official, other)
    memo: dict[str, tuple[str, tuple[str, ...]]] = {}
    dated = sorted((k for k, src in enumerate(sources) if src.format == "cr_document" and src.effective_date),
                   key=lambda k: (sources[k].effective_date, sources[k].source_id))
    placed = set(dated)
    for i in [*dated, *(k for k in range(len(per_source)) if k not in placed)]:
        els = clean(per_source[i], vocab, memo)
        src, els = flag_truncation(sources[i], els)
        per_source[i] = []
        counts: dict[str, int] = {}
        for el in els:
            counts[el.kind] = counts.get(el.kind, 0) + el.line_end - el.line_start + 1
        yield i, replace(src, line_counts=counts), els
