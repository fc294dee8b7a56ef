"""What the passes of a lineage step weigh, and the helpers they share.

A release indexed for alignment (``Release``) and the step being built
(``Step``); the similarity of wordings (``similarity``, ``_likeness`` for one
pair, ``_Alike`` for the matrices a step makes once); the keywords a wording is
about (``Subjects``); and the small questions every family of passes asks: a
rule's first sentence, its subrules, the partners of its neighbours, what is
left over, whether the release kept its numbering. The underscored names are
the package's own: shared by the pass modules of ``pipeline.lineage``, not used
outside it.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np
from rapidfuzz import fuzz, process

from pipeline.lineage.align import SEE_RULE
from pipeline.lineage.thresholds import KEYWORD_SECTIONS, MIN_CONTAINED, MIN_NEAR, MIN_WORDS_KEPT, NEAR, SUBSET_WEIGHT
from pipeline.numbers import citations, section_of
from pipeline.numbers import normalise as normalise_number
from pipeline.records import Element
from pipeline.text import folded, title_key


@dataclass
class Release:
    """The numbered rules and sections of one source, indexed for alignment."""

    source_id: str
    rules: list[Element]
    numbers: list[str]
    keys: list[str]
    sections_of: list[str]
    sections: dict[str, str]  # section number -> title key
    aliases: dict[str, str]  # former title key -> section number ("(Obsolete)" glossary entries)
    examples: list[tuple[str, ...]] = field(default_factory=list)  # each rule's examples, folded
    cites: list[tuple[str, ...]] = field(default_factory=list)  # the rules each rule refers to
    chapters: dict[str, str] = field(default_factory=dict)  # chapter number -> title key

    def digest(self) -> str:
        """A hash of everything alignment reads (not the elements, not the id)."""
        return self._digest

    @cached_property
    def _digest(self) -> str:
        content = (self.numbers, self.keys, self.sections_of, self.sections, self.aliases, self.examples,
                   self.cites, self.chapters)
        # Without the pickler's memo: the same content hashes the same whether or not
        # equal wordings are one object (``_folded`` hands out one object per wording).
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=5)
        pickler.fast = True
        pickler.dump(content)
        return hashlib.sha256(buffer.getbuffer()).hexdigest()

    def light(self) -> Release:
        """The release without its elements: what a worker that aligns it is sent."""
        return replace(self, rules=[])

    @cached_property
    def at(self) -> dict[str, int]:
        """Each rule number's index (its first, if a release uses a number twice)."""
        return {n: i for i, n in reversed(list(enumerate(self.numbers)))}

    @cached_property
    def parents(self) -> list[str]:
        """The number each rule is lettered or numbered under (``700.8`` for ``700.8a``,
        ``700`` for ``700.8``): ``numbers.section_of`` of each, made once per release."""
        return [section_of(n) for n in self.numbers]

    @cached_property
    def heads(self) -> Counter[str]:
        """How many rules open with each first sentence (made once: each pass that reads it reads them all)."""
        return Counter(_first_sentence(k) for k in self.keys)

    @classmethod
    def build(cls, source_id: str, elements: Sequence[Element]) -> Release:
        rules: list[Element] = []
        sections: dict[str, str] = {}
        by_line: dict[int, str] = {}
        aliases: dict[str, str] = {}
        rule_at: dict[int, int] = {}
        examples: list[list[str]] = []
        chapters: dict[str, str] = {}
        for el in elements:
            if el.kind == "chapter" and el.number_as_written:
                chapters.setdefault(normalise_number(el.number_as_written), title_key(el.text))
            elif el.kind == "section" and el.number_as_written:
                number = normalise_number(el.number_as_written)
                sections.setdefault(number, title_key(el.text))
                by_line[el.line_start] = number
            elif el.kind == "rule" and el.number_as_written:
                rule_at[el.line_start] = len(rules)
                rules.append(el)
                examples.append([])
            elif el.kind == "example" and el.parent_line in rule_at:
                examples[rule_at[el.parent_line]].append(_folded(el.text))
            elif el.kind == "glossary" and el.term.endswith("(Obsolete)"):
                target = SEE_RULE.search(el.text)
                if target:
                    aliases[title_key(el.term.removesuffix("(Obsolete)"))] = normalise_number(target.group(1))
        numbers = [normalise_number(el.number_as_written) for el in rules]
        return cls(
            source_id, rules, numbers, [_folded(el.text) for el in rules],
            [by_line.get(el.parent_line) or section_of(n) for el, n in zip(rules, numbers, strict=True)],
            sections, aliases, [tuple(found) for found in examples], [tuple(_cites(el.text)) for el in rules], chapters,
        )


# What ``Release.build`` reads of a wording, made once per distinct wording: a history's
# releases repeat most of their rules word for word (1x: 5% of the elements are distinct).
# (``_cites``: the rules a wording refers to, each once, in order.)
_folded = lru_cache(maxsize=1 << 16)(folded)
_cites = lru_cache(maxsize=1 << 16)(citations)


@dataclass
class Step:
    """How release ``a`` became release ``b``: rule indexes of ``a`` -> of ``b``."""

    pairs: dict[int, int] = field(default_factory=dict)
    scores: dict[int, float] = field(default_factory=dict)  # a index -> similarity of its pair
    split_from: dict[int, int] = field(default_factory=dict)  # b index -> a index
    merged_into: dict[int, int] = field(default_factory=dict)  # a index -> b index
    sections: dict[str, str] = field(default_factory=dict)  # a section -> b section


def similarity(a: Sequence[str], b: Sequence[str], cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise similarity of two lists of folded wordings: the straight one
    (rewordings), and the better of it and a subset one (a rule cut short or
    grown a sentence), 0 below ``cutoff``."""
    if not a or not b:
        empty = np.zeros((len(a), len(b)), dtype=np.float32)
        return empty, empty.copy()
    workers = -1 if len(a) * len(b) > 4000 else 1
    straight = process.cdist(a, b, scorer=fuzz.ratio, dtype=np.float32, workers=workers)
    subset = process.cdist(word_sets(a), word_sets(b), scorer=fuzz.token_set_ratio, dtype=np.float32,
                           workers=workers)
    matrix = np.maximum(straight, subset * SUBSET_WEIGHT)
    matrix[matrix < cutoff] = 0.0
    return straight, matrix


def word_sets(texts: Sequence[str]) -> list[str]:
    """Each text's distinct words, sorted, as ``fuzz.token_set_ratio`` takes
    them apart: the same scores, the words taken apart once for each text
    rather than once for each pair (a third of its time).

    >>> word_sets(["the cat saw the dog"])
    ['cat dog saw the']
    """
    return [" ".join(sorted(set(t.split()))) for t in texts]


def _likeness(x: str, y: str, cutoff: float = 0.0) -> float:
    """``similarity`` of one pair (0 below ``cutoff``); with none, the score a
    pair made on other evidence is kept with."""
    return float(similarity([x], [y], cutoff)[1][0, 0])


class _Alike:
    """``similarity`` at MIN_NEAR of rules of ``a`` and ``b`` by index, 0 for
    rules about different keywords. The matrices are made once, for the rules
    first asked about; a later pass asks about the rules still unpaired (pairs
    are only ever added), a part of those, and is given its part of them (the
    second ``_by_context`` had made them all again: 6% of the steps' time)."""

    def __init__(self, a: Release, b: Release, subjects: Subjects) -> None:
        self.a, self.b, self.subjects = a, b, subjects
        self.rows: dict[int, int] = {}
        self.cols: dict[int, int] = {}
        self.straight = self.matrix = np.zeros((0, 0), dtype=np.float32)

    def __call__(self, rows: Sequence[int], cols: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        if not (self.rows.keys() >= set(rows) and self.cols.keys() >= set(cols)):
            xs, ys = [self.a.keys[i] for i in rows], [self.b.keys[j] for j in cols]
            self.straight, matrix = similarity(xs, ys, MIN_NEAR)
            self.matrix = self.subjects.drop_others(matrix, xs, ys)
            self.rows = {i: r for r, i in enumerate(rows)}
            self.cols = {j: c for c, j in enumerate(cols)}
        cells = np.ix_([self.rows[i] for i in rows], [self.cols[j] for j in cols])
        return self.straight[cells], self.matrix[cells]


@dataclass(frozen=True)
class Subjects:
    """Keyword names (the titles of the keyword sections, 502.x before 2009, 702.x
    after): two wordings that each name a keyword the other lacks are about
    different keywords ("Multiple instances of flying ..." is not "Multiple
    instances of banding ..."), however alike the rest is."""

    pattern: re.Pattern[str] | None
    renamed: dict[str, str] = field(default_factory=dict)  # former name -> name ("(Obsolete)" glossary entries)

    @classmethod
    def of(cls, *releases: Release) -> Subjects:
        names = {t for rel in releases for number, t in rel.sections.items()
                 if t and number.startswith(KEYWORD_SECTIONS)}
        renamed = {old: rel.sections[number] for rel in releases for old, number in rel.aliases.items()
                   if number in rel.sections}
        return cls.named_by(names, renamed)

    @classmethod
    def named_by(cls, names: Iterable[str], renamed: dict[str, str] | None = None) -> Subjects:
        """The keywords ``names`` (title keys), and the ``renamed`` ones by their former names."""
        ordered = sorted(set(names) | set(renamed or {}), key=len, reverse=True)
        if not ordered:
            return cls(None)
        return cls(re.compile(r"\b(?:" + "|".join(re.escape(n) for n in ordered) + r")\b"), renamed or {})

    def named(self, text: str) -> frozenset[str]:
        if self.pattern is None:
            return frozenset()
        found = _named(self.pattern, text)
        return frozenset(self.renamed.get(n, n) for n in found)

    def same(self, x: str, y: str) -> bool:
        """Whether two wordings are about the same keywords: a wording that only
        adds a mention is still the same rule, and so is one that names some of
        the same keywords (2020's 115.1e gave "equip and modular" as examples,
        where it had given "equip and provoke").

        >>> s = Subjects(re.compile(r"\\b(?:bands with other|flying|banding|indestructible|equip|provoke)\\b"))
        >>> s.same("instances of flying are redundant", "instances of banding are redundant")
        False
        >>> s.same("it has flying", "it has flying and is indestructible")
        True
        >>> s.same("such as equip and provoke", "such as equip and indestructible")
        True
        """
        return self.same_names(self.named(x), self.named(y))

    @staticmethod
    def same_names(wx: frozenset[str], wy: frozenset[str]) -> bool:
        """``same`` of two wordings by the keywords each names (``named``), found once."""
        return not (wx - wy and wy - wx) or bool(wx & wy)

    def drop_others(self, matrix: np.ndarray, xs: Sequence[str], ys: Sequence[str]) -> np.ndarray:
        """Zero the pairs of ``matrix`` that are about different keywords."""
        if self.pattern is None or not matrix.size:
            return matrix
        for r, c in np.argwhere(matrix > 0).tolist():
            if not self.same(xs[r], ys[c]):
                matrix[r, c] = 0.0
        return matrix


@lru_cache(maxsize=65_536)
def _named(pattern: re.Pattern[str], text: str) -> frozenset[str]:
    return frozenset(pattern.findall(text))


def _pair(step: Step, i: int, j: int, score: float) -> None:
    step.pairs[i] = j
    step.scores[i] = round(score, 1)


def _first_sentence(text: str) -> str:
    """Up to and with the first full stop followed by a space (or the end).

    >>> _first_sentence("only permanents can transform. if a spell does, nothing happens.")
    'only permanents can transform.'
    """
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


def _numbering_kept(a: Release, b: Release, step: Step) -> bool:
    """Whether most rules paired so far kept their numbers (not so in July 2009)."""
    kept = sum(a.numbers[i] == b.numbers[j] for i, j in step.pairs.items())
    return kept * 2 >= len(step.pairs)


def _left_over(a: Release, b: Release, step: Step) -> tuple[list[int], list[int]]:
    """The rules of ``a`` neither paired nor merged, and those of ``b`` neither paired nor split off one."""
    taken = set(step.pairs.values())
    return ([i for i in range(len(a.keys)) if i not in step.pairs and i not in step.merged_into],
            [j for j in range(len(b.keys)) if j not in taken and j not in step.split_from])


def _votes(a: Release, b: Release, step: Step) -> dict[str, Counter[str]]:
    """For each section of ``a``, the sections of ``b`` its paired (or merged) rules went to."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for i, sec in enumerate(a.sections_of):
        j = step.pairs.get(i, step.merged_into.get(i))
        if j is not None:
            votes[sec][b.sections_of[j]] += 1
    return votes


def _subrules(rel: Release, i: int) -> list[int]:
    """The indexes of the subrules lettered under rule ``i`` (``700.8a``.. under ``700.8``)."""
    out = []
    for k in range(i + 1, len(rel.numbers)):
        if rel.parents[k] != rel.numbers[i]:
            break
        out.append(k)
    return out


def _lettered(number: str) -> bool:
    """A subrule ("712.1g"), not a rule ("712.4")."""
    return number[-1:].isalpha()


def _near(k: int, partner: dict[int, int], size: int) -> list[int]:
    """The partners of the paired rules within ``NEAR`` places of rule ``k``."""
    return [partner[n] for n in range(max(0, k - NEAR), min(size, k + NEAR + 1)) if n in partner]


def _contained(short: str, candidates: Sequence[str]) -> int | None:
    """The longer candidate holding ``short`` most closely (partial match), if close enough."""
    keep = [k for k, text in enumerate(candidates) if len(text) >= len(short)]
    if not keep:
        return None
    found = process.extractOne(short, [candidates[k] for k in keep], scorer=fuzz.partial_ratio,
                               score_cutoff=MIN_CONTAINED)
    return keep[found[2]] if found else None


_LONG_WORD = re.compile(r"[a-z][a-z'-]{4,}")


def _words_kept(x: str, y: str) -> float:
    """The share of ``x``'s longer words (five letters or more: the short ones
    are mostly "a", "the", "its", "card") that ``y`` has.

    >>> _words_kept("when a permanent phases out, all damage dealt to it is removed.",
    ...             "if a permanent phases out, its status changes to phased out.")
    0.4
    """
    words = set(_LONG_WORD.findall(x))
    if not words:
        return 1.0
    return len(words & set(_LONG_WORD.findall(y))) / len(words)


def _say_the_same(x: str, y: str, share: float = MIN_WORDS_KEPT) -> bool:
    """Whether one of two wordings keeps at least ``share`` of the other's longer
    words: what a pair that rests on the subset score needs as well (and, with
    ``MIN_WORDS_SAME_NUMBER``, a rule that keeps its number)."""
    return max(_words_kept(x, y), _words_kept(y, x)) >= share
