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
_ONE = re.compile(rf"({_NUMBER})(?:\s?[-–—]\s?({_NUMBER}|[a-z]{{1,2}}\b))?")


def expand(start: str, end: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` (a letter or a full number).

    >>> expand("601.2e", "g")
    ['601.2e', '601.2f', '601.2g']
    >>> expand("510.1c", "510.1d")
    ['510.1c', '510.1d']
    """
    if not end:
        return [start]
    m = re.fullmatch(r"(\d{3}\.\d{1,3})([a-z])", start)
    last = end[-1] if end[-1].isalpha() else ""
    if m and last and (end.isalpha() or end[:-1] == m.group(1)) and len(end.rstrip("abcdefghijklmnopqrstuvwxyz")) in (0, len(m.group(1))):
        lo, hi = ord(m.group(2)), ord(last)
        if lo <= hi and hi - lo < 26:
            return [m.group(1) + chr(c) for c in range(lo, hi + 1)]
    n1 = re.fullmatch(r"(\d{3})\.(\d{1,3})", start)
    n2 = re.fullmatch(r"(\d{3})\.(\d{1,3})", end)
    if n1 and n2 and n1.group(1) == n2.group(1) and 0 <= int(n2.group(2)) - int(n1.group(2)) < 50:
        return [f"{n1.group(1)}.{i}" for i in range(int(n1.group(2)), int(n2.group(2)) + 1)]
    return [start, end] if not end.isalpha() else [start]


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
