"""Noise found across the corpus, and FAQ answers that run over several paragraphs.

Line-level noise (vim filler, page chrome, labels) is named by the assembler.
An epigraph can only be seen across entries: the same unnumbered paragraph
pasted again and again. Nothing is dropped; noise stays in the ledger.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import attrgetter

from pipeline.records import Element, evolve, setter
from pipeline.text import spacing_key

# An unnumbered paragraph is boilerplate when it recurs this often in the corpus
# and at least twice within one source (pasted after every entry there).
MIN_TOTAL = 3
MIN_IN_SOURCE = 2
_SET_EPIGRAPH = setter("kind", "noise_kind", "continues", "parent_line")


_KIND = attrgetter("kind")
_CONTINUES = attrgetter("continues")


def classify(sources: Sequence[list[Element]]) -> list[list[Element]]:
    """Mark recurring prose as ``epigraph`` noise, then join answer continuations.

    Only prose can be an epigraph and only a paragraph that continues an answer
    joins one: a source without either (nearly every source) is copied as it is.
    """
    prose = [[i for i, kind in enumerate(map(_KIND, elements)) if kind == "prose"] for elements in sources]
    keys = [[spacing_key(elements[k].body) for k in at] for elements, at in zip(sources, prose, strict=True)]
    total: Counter[str] = Counter()
    within: Counter[tuple[int, str]] = Counter()
    for i, own in enumerate(keys):
        total.update(own)
        within.update((i, key) for key in own)
    repeated = {k for (_, k), n in within.items() if n >= MIN_IN_SOURCE and total[k] >= MIN_TOTAL}
    out = []
    for elements, at, own in zip(sources, prose, keys, strict=True):
        marked = list(elements)
        for k, key in zip(at, own, strict=True):
            if key in repeated:
                marked[k] = _SET_EPIGRAPH(elements[k], "noise", "epigraph", 0, 0)
        out.append(join_answers(marked) if any(map(_CONTINUES, marked)) else marked)
    return out


def join_answers(elements: list[Element]) -> list[Element]:
    """Fold paragraphs that continue a FAQ answer into the answer's element.

    Only an unbroken run right after the question joins it: anything after a
    noise element stays a paragraph of its own (with the QA as its parent).
    """
    out: list[Element] = []
    for el in elements:
        prev = out[-1] if out else None
        if el.continues and prev is not None and prev.kind == "qa" and prev.line_start == el.continues:
            out[-1] = evolve(
                prev,
                line_end=el.line_end,
                text_raw=prev.text_raw + "\n" + el.text_raw,
                body=prev.body + "\n" + el.body,
                answer=(prev.answer + "\n" + el.body).strip(),
            )
        elif el.continues:
            out.append(evolve(el, parent_line=el.continues, continues=0))
        else:
            out.append(el)
    return out
