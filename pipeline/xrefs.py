"""Cross-references in rule and answer text, with ranges expanded.

"rules 601.2b and 601.2e-g" names 601.2b, 601.2e, 601.2f and 601.2g.
"""

from __future__ import annotations

import re
from functools import lru_cache

_NUMBER = r"\d{3}(?:\.\d{1,3}[a-z]{0,2})?"
_REF = rf"{_NUMBER}(?:\s?[-–—]\s?(?:{_NUMBER}|[a-z]{{1,2}}\b))?"
_LIST = re.compile(
    rf"\b(?:rules?|sections?)\s+({_REF}(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|through)\s+){_REF})*)",
    re.I,
)
_LETTERED = re.compile(r"(\d{3}\.\d{1,3})([a-z])")
_PLAIN = re.compile(r"(\d{3})\.(\d{1,3})")
_ONE = re.compile(rf"({_NUMBER})(?:\s?[-–—]\s?({_NUMBER}|[a-z]{{1,2}}\b))?")


def expand(start: str, end: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` (a letter, or a full number).

    >>> expand("601.2e", "g")
    ['601.2e', '601.2f', '601.2g']
    >>> expand("510.1c", "510.1d")
    ['510.1c', '510.1d']
    >>> expand("702.110", "702.112")
    ['702.110', '702.111', '702.112']
    """
    if not end:
        return [start]
    lettered = _LETTERED.fullmatch(start)
    if lettered:
        stem, first = lettered.groups()
        last = end if end.isalpha() else end.removeprefix(stem) if end.startswith(stem) else ""
        if len(last) == 1 and first <= last:
            return [stem + chr(c) for c in range(ord(first), ord(last) + 1)]
    a, b = _PLAIN.fullmatch(start), _PLAIN.fullmatch(end)
    if a and b and a.group(1) == b.group(1) and 0 <= int(b.group(2)) - int(a.group(2)) < 50:
        return [f"{a.group(1)}.{i}" for i in range(int(a.group(2)), int(b.group(2)) + 1)]
    return [start] if end.isalpha() else [start, end]


@lru_cache(maxsize=262_144)
def find(text: str) -> list[tuple[str, str]]:
    """(as written, target) pairs for every rule a text refers to, in order.

    >>> find("see rules 601.2b and 601.2e-g")
    [('601.2b', '601.2b'), ('601.2e-g', '601.2e'), ('601.2e-g', '601.2f'), ('601.2e-g', '601.2g')]
    """
    out = []
    for m in _LIST.finditer(text):
        for one in _ONE.finditer(m.group(1)):
            for target in expand(one.group(1), one.group(2)):
                out.append((one.group(0), target))
    return out


_CITATION = re.compile(r"(?<![\d.])(\d{3}\.\d{1,3}[a-z]{0,2})(?![\da-z])")


def citations(text: str) -> list[str]:
    """Rule numbers cited anywhere in a text, in order, each once: ``CR 502.32a``,
    ``(see 409.1)``, ranges by their first number.

    >>> citations("CR 502.32a says so; see also rule 409.1 and 502.32a.")
    ['502.32a', '409.1']
    """
    return list(dict.fromkeys(m.group(1) for m in _CITATION.finditer(text)))
