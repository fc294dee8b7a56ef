"""Cross-references in rule and answer text, with ranges expanded.

"rules 601.2b and 601.2e-g" names 601.2b, 601.2e, 601.2f and 601.2g; "712.9–10"
names 712.9 and 712.10. A rule number stands for a reference wherever it is
("as described in 608.2b", "(see 601.3d)"); a three-digit section number only
after "rule" or "section" ("rules 701 and 702"), where it is no count of things.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.numbers import RULE_NUMBER, normalise, parts

# The end of a range: a whole number, the last letters ("601.2e-g") or the last
# digits ("712.9–10") of the rules it names.
_DASH = r"\s?[-–—]\s?"
_LAST = rf"{RULE_NUMBER}|[a-z]{{1,2}}\b|\d{{1,3}}\b"
_END = rf"(?:{_DASH}({_LAST}))"
_REF = rf"{RULE_NUMBER}(?:{_DASH}(?:{_LAST}))?"
_LIST = re.compile(
    rf"\b(?:rules?|sections?)\s+({_REF}(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|through)\s+){_REF})*)",
    re.I,
)
_ONE = re.compile(rf"({RULE_NUMBER}){_END}?")
_SKIPPED = "lo"  # letters the rules never give a subrule


def expand(start: str, end: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` (a letter, or a full number).

    >>> expand("601.2e", "g")
    ['601.2e', '601.2f', '601.2g']
    >>> expand("510.1c", "510.1d")
    ['510.1c', '510.1d']
    >>> expand("702.110", "702.112")
    ['702.110', '702.111', '702.112']
    >>> expand("702. 37a", None), expand("712.9", "10"), expand("212", "215")
    (['702.37a'], ['712.9', '712.10'], ['212', '215'])
    >>> expand("111.10j", "r")
    ['111.10j', '111.10k', '111.10m', '111.10n', '111.10p', '111.10q', '111.10r']
    """
    start = normalise(start)
    if not end:
        return [start]
    end = normalise(end)
    first = parts(start)
    if end.isdecimal() and first and first[1] and not first[2]:  # the last rule's digits, in its section
        if 0 <= int(end) - int(first[1]) < 50:
            return [f"{first[0]}.{i}" for i in range(int(first[1]), int(end) + 1)]
        return [start]
    if first and first[1] and len(first[2]) == 1:
        stem, letter = f"{first[0]}.{first[1]}", first[2]
        last = end if end.isalpha() else end.removeprefix(stem) if end.startswith(stem) else ""
        if len(last) == 1 and letter <= last:
            # Subrules are never lettered l or o (read as 1 and 0): "608.2c-m" skips 608.2l.
            return [stem + chr(c) for c in range(ord(letter), ord(last) + 1)
                    if chr(c) not in _SKIPPED or chr(c) in (letter, last)]
    a, b = parts(start), parts(end)
    if a and b and a[1] and b[1] and not a[2] and not b[2] and a[0] == b[0] and 0 <= int(b[1]) - int(a[1]) < 50:
        return [f"{a[0]}.{i}" for i in range(int(a[1]), int(b[1]) + 1)]
    return [start] if end.isalpha() else [start, end]


@lru_cache(maxsize=262_144)
def find(text: str) -> list[tuple[str, str]]:
    """(as written, target) pairs for every rule a text refers to, in order.

    >>> find("see rules 601.2b and 601.2e-g")
    [('601.2b', '601.2b'), ('601.2e-g', '601.2e'), ('601.2e-g', '601.2f'), ('601.2e-g', '601.2g')]
    >>> find("This follows rules 701.27a–b, 712.9–10, and 712.18, as described in 608.2b.")[2:]
    [('712.9–10', '712.9'), ('712.9–10', '712.10'), ('712.18', '712.18'), ('608.2b', '608.2b')]
    >>> find("See rules 702.109, “Dash,” and 702.152, “Blitz”; sections 701 and 702; 100 cards.")
    [('702.109', '702.109'), ('702.152', '702.152'), ('701', '701'), ('702', '702')]
    """
    found: dict[tuple[int, str], str] = {}  # (where, target) -> as written
    for m in _LIST.finditer(text):
        for one in _ONE.finditer(text, m.start(1), m.end(1)):
            for target in expand(one.group(1), one.group(2)):
                found[one.start(), target] = one.group(0)
    for one in _CITED.finditer(text):
        for target in expand(one.group(1), one.group(2)):
            if "." in target:
                found.setdefault((one.start(), target), one.group(0))
    return [(written, target) for (_, target), written in sorted(found.items(), key=lambda kv: kv[0][0])]


# A number anywhere in a text (``_ONE`` standing alone), with the end of a range after it if there is one.
_CITED = re.compile(rf"(?<![\w.]){_ONE.pattern}(?![\w])")


def citations(text: str) -> list[str]:
    """Rule and section numbers cited anywhere in a text, in order, each once:
    ``CR 502.32a``, ``(see 409.1)``, ranges expanded, a three-digit section
    after "rule" or "section" (as ``find`` reads them; "100 cards" is none).

    >>> citations("CR 502.32a says so; see also rule 409.1 and 502.32a.")
    ['502.32a', '409.1']
    >>> citations("rules 409.1f-h, and 502.32a–b")
    ['409.1f', '409.1g', '409.1h', '502.32a', '502.32b']
    >>> citations("rule 216; sections 216 and 300; 100 cards")
    ['216', '300']
    """
    return list(dict.fromkeys(target for _, target in find(text)))
