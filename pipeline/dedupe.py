"""Exact dedupe: an element repeating an earlier one (after cleanup) points at it.

The key holds the kind, the number (canonical when the rule was aligned, else
as written, spaces removed) and the cleaned text with quote style and spacing
folded, so two rules worded alike but numbered apart are never merged; a
rule's cross-references are part of its text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import replace

from pipeline.records import Element


def normalise_number(number: str) -> str:
    """A number as the reference writes it: no inner space, no trailing dot.

    >>> normalise_number("702. 37a")
    '702.37a'
    """
    return number.replace(" ", "").rstrip(".")


_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def dedupe_key(el: Element) -> bytes:
    """Kind, number (canonical when known) and wording with quote style and spacing folded."""
    text = el.text if el.kind != "qa" else el.question + "\x1f" + el.answer
    if el.kind == "glossary":
        text = el.term + "\x1f" + text
    text = " ".join(text.translate(_FOLD).split())
    number = el.canonical_number or normalise_number(el.number_as_written)
    raw = "\x1e".join((el.kind, el.noise_kind, number, text))
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def dedupe(elements: Iterable[Element]) -> Iterator[Element]:
    """Mark each element whose key was seen before with the first one's id."""
    first: dict[bytes, str] = {}
    for el in elements:
        key = dedupe_key(el)
        seen = first.setdefault(key, el.element_id)
        yield el if seen == el.element_id else replace(el, duplicate_of=seen)
