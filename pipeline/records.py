"""The record types that flow through the stages: the element, the source and its
self-checks, and the mapping of a number seen in a source to its current one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
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


@cache
def setter(*names: str) -> Callable[..., Element]:
    """A function ``(el, *values) -> Element``: a copy of ``el`` with the fields
    ``names`` set to ``values`` (``evolve(el, **dict(zip(names, values)))``).

    The stages' hot loops make one copy per element (the 90 MB benchmark corpus
    holds 382,000): the function is written for its fields, as ``namedtuple``
    writes its own, and unpacks the element once, twice as fast as copying it
    through a list.

    >>> set_text = setter("text")
    >>> set_text(Element("s", 1, 1, "rule", "702.1  a", body="702.1 a"), "702.1 a").text
    '702.1 a'
    """
    fields = Element._fields
    unknown = [name for name in names if name not in fields]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"Element has no field {unknown[0]!r}" if unknown else f"a field twice in {names}")
    old = [f"_{i}" for i in range(len(fields))]
    new = [f"v_{names.index(name)}" if name in names else old[i] for i, name in enumerate(fields)]
    code = (f"def set_fields(el, {', '.join(f'v_{i}' for i in range(len(names)))}):\n"
            f"    {', '.join(old)}, = el\n"
            f"    return _new(_Element, ({', '.join(new)},))\n")
    namespace: dict[str, Any] = {"_new": tuple.__new__, "_Element": Element}
    exec(code, namespace)  # the code is made of field names and indexes only, as namedtuple makes its own
    made: Callable[..., Element] = namespace["set_fields"]
    made.__qualname__ = made.__name__ = f"set_{'_'.join(names)}"
    return made


def evolve(el: Element, **changes: Any) -> Element:
    """A copy of ``el`` with ``changes`` (``dataclasses.replace`` for an element).

    What ``el._replace(**changes)`` makes, in well under half the time: the
    copy is made by the ``setter`` of the changed fields."""
    return setter(*changes)(el, *changes.values())


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
