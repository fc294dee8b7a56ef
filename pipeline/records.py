"""The record types that flow through the stages: the element, the source and its
self-checks, and the mapping of a number seen in a source to its current one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Element(NamedTuple):
    """A span of source lines with its meaning: one row of ``elements.csv``.

    Stages never mutate an element; they return a copy made with ``evolve``.
    It is a named tuple, not a dataclass: the full history holds some
    400,000 elements per generation, and a tuple is copied, pickled and
    compared several times faster than a slotted dataclass.
    """

    source_id: str
    line_start: int
    line_end: int
    kind: str
    text_raw: str
    body: str = ""
    number_as_written: str = ""
    parent_line: int = 0
    text: str = ""
    noise_kind: str = ""
    question: str = ""
    answer: str = ""
    term: str = ""
    flags: tuple[str, ...] = ()
    duplicate_of: str = ""
    canonical_number: str = ""
    region: str = "body"
    continues: int = 0

    @property
    def element_id(self) -> str:
        return line_id(self.source_id, self.line_start)

    @property
    def parent_id(self) -> str:
        return line_id(self.source_id, self.parent_line) if self.parent_line else ""


def line_id(source_id: str, line: int) -> str:
    """The id of the element of ``source_id`` at ``line``.

    >>> line_id("cr-2026-08-07", 12)
    'cr-2026-08-07:L12'
    """
    return f"{source_id}:L{line}"


_FIELD_INDEX = {name: i for i, name in enumerate(Element._fields)}


def evolve(el: Element, **changes: Any) -> Element:
    """A copy of ``el`` with ``changes`` (``dataclasses.replace`` for an element).

    What ``el._replace(**changes)`` makes, in well under half the time: the stages
    make a million copies on the 90 MB benchmark corpus, and ``_replace`` goes
    through every field in Python."""
    values = list(el)
    try:
        for name, value in changes.items():
            values[_FIELD_INDEX[name]] = value
    except KeyError as exc:
        raise ValueError(f"Element has no field {exc.args[0]!r}") from None
    return tuple.__new__(Element, values)


@dataclass(frozen=True, slots=True)
class Check:
    """One self-check on one source: its name, whether it passed, and the figures."""

    name: str
    passed: bool
    detail: str

    def __str__(self) -> str:
        return f"{self.name}={'ok' if self.passed else 'FAIL'} ({self.detail})"


@dataclass(frozen=True, slots=True)
class Source:
    """One raw file and what reading it found: one row of ``sources.csv``.

    ``status`` is ``ok``, ``suspect`` (read, but a self-check failed: see
    ``checks`` and ``error``) or ``quarantined`` (not read: ``error`` says why).
    """

    source_id: str
    path: str
    sha256: str
    bytes: int
    encoding: str = ""
    newline: str = ""
    format: str = ""
    effective_date: str = ""
    era: str = ""
    lines: int = 0
    status: str = "ok"
    error: str = ""
    evidence: str = ""
    numbering_like: str = ""
    flags: tuple[str, ...] = ()
    line_counts: dict[str, int] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()


# How the ``reason`` of a renumber_map row opens when the source wrote its number for
# rules that are different rules today: the row maps to none of them (``numbering``).
WRITTEN_TWICE = "written for"


class Mapping(NamedTuple):
    """One row of ``renumber_map.csv`` (a named tuple: the stage makes one for each
    numbered rule and section of each source, 280,000 on the 1x benchmark, and a
    tuple is made three times faster than a frozen dataclass).
    """

    source_id: str
    number_as_written: str
    title: str
    canonical_number: str
    method: str
    score: float
    reason: str = ""
    lineage_id: str = ""


@dataclass
class Lineage:
    """One rule followed through the releases: one row of ``lineages.csv``."""

    lineage_id: str
    first_source: str
    first_number: str
    last_source: str = ""
    last_number: str = ""
    canonical_number: str = ""
    ended: str = ""
    ended_in: str = ""
    split_from: str = ""
    merged_into: str = ""
