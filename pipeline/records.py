"""The one record type that flows through every stage, and the source record."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.checks import Check


@dataclass(frozen=True, slots=True)
class Element:
    """A span of source lines with its meaning: one row of ``elements.csv``.

    Stages never mutate an element; they return a copy made with
    ``dataclasses.replace``.
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
        return f"{self.source_id}:L{self.line_start}"

    @property
    def parent_id(self) -> str:
        return f"{self.source_id}:L{self.parent_line}" if self.parent_line else ""


_ELEMENT_FIELDS: tuple[str, ...] = ()
_ELEMENT_VALUES: Any = None  # operator.attrgetter of every field, made on first use


def evolve(el: Element, **changes: Any) -> Element:
    """``dataclasses.replace`` for the hot paths: the same result, five times faster."""
    global _ELEMENT_FIELDS, _ELEMENT_VALUES
    if not _ELEMENT_FIELDS:
        _ELEMENT_FIELDS = tuple(f.name for f in fields(Element))
        _ELEMENT_VALUES = attrgetter(*_ELEMENT_FIELDS)
    new = object.__new__(Element)
    for name, value in zip(_ELEMENT_FIELDS, _ELEMENT_VALUES(el), strict=True):
        object.__setattr__(new, name, value)
    for name, value in changes.items():
        object.__setattr__(new, name, value)
    return new


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
