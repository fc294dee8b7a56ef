"""Cross-references in rule and answer text, with ranges expanded.

"rules 601.2b and 601.2e-g" names 601.2b, 601.2e, 601.2f and 601.2g.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.numbers import RULE_NUMBER, normalise, parts

_REF = rf"{RULE_NUMBER}(?:\s?[-–—]\s?(?:{RULE_NUMBER}|[a-z]{{1,2}}\b))?"
_LIST = re.compile(
    rf"\b(?:rules?|sections?)\s+({_REF}(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|through)\s+){_REF})*)",
    re.I,
)
_ONE = re.compile(rf"({RULE_NUMBER})(?:\s?[-–—]\s?({RULE_NUMBER}|[a-z]{{1,2}}\b))?")


def expand(start: str, end: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` (a letter, or a full number).

    >>> expand("601.2e", "g")
    ['601.2e', '601.2f', '601.2g']
    >>> expand("510.1c", "510.1d")
    ['510.1c', '510.1d']
    >>> expand("702.110", "702.112")
    ['702.110', '702.111', '702.112']
    >>> expand("702. 37a", None)
    ['702.37a']
    """
    start = normalise(start)
    if not end:
        return [start]
    end = normalise(end)
    first = parts(start)
    if first and first[1] and len(first[2]) == 1:
        stem, letter = f"{first[0]}.{first[1]}", first[2]
        last = end if end.isalpha() else end.removeprefix(stem) if end.startswith(stem) else ""
        if len(last) == 1 and letter <= last:
            return [stem + chr(c) for c in range(ord(letter), ord(last) + 1)]
    a, b = parts(start), parts(end)
    if a and b and a[1] and b[1] and not a[2] and not b[2] and a[0] == b[0] and 0 <= int(b[1]) - int(a[1]) < 50:
        return [f"{a[0]}.{i}" for i in range(int(a[1]), int(b[1]) + 1)]
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


# A number anywhere in a text (``_ONE`` standing alone), with the end of a range after it if there is one.
_CITED = re.compile(rf"(?<![\w.]){_ONE.pattern}(?![\w])")


def citations(text: str) -> list[str]:
    """Rule numbers cited anywhere in a text, in order, each once: ``CR 502.32a``,
    ``(see 409.1)``, ranges expanded.

    >>> citations("CR 502.32a says so; see also rule 409.1 and 502.32a.")
    ['502.32a', '409.1']
    >>> citations("rules 409.1f-h, and 502.32a–b")
    ['409.1f', '409.1g', '409.1h', '502.32a', '502.32b']
    """
    found = (n for m in _CITED.finditer(text) for n in expand(m.group(1), m.group(2)))
    return list(dict.fromkeys(n for n in found if "." in n))
