"""Dedupe makes each key once per group of elements with the same fields; it marks
what marking every element by its own key marks."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.corpus.dedupe import dedupe, dedupe_key
from pipeline.records import Element
from tests.conftest import examples


def _reference(elements: list[Element]) -> list[Element]:
    """Every element's key made, the first of each key kept (dedupe as first written)."""
    first: dict[tuple[str, ...], str] = {}
    out = []
    for el in elements:
        key = dedupe_key(el)
        if key in first:
            out.append(el._replace(duplicate_of=first[key]))
        else:
            first[key] = el.element_id
            out.append(el)
    return out


_WORDS = ["“Entwine”", '"Entwine"', "entwine"]  # two fold alike
_ELEMENT = st.builds(
    Element,
    source_id=st.sampled_from(["cr-2025-09-19", "cr-2026-01-16"]),
    line_start=st.integers(1, 6),
    line_end=st.just(1),
    kind=st.sampled_from(["rule", "glossary", "qa", "noise"]),
    text_raw=st.just(""),
    number_as_written=st.sampled_from(["702.42a", "702. 42a", ""]),
    text=st.sampled_from(_WORDS),
    noise_kind=st.sampled_from(["", "epigraph"]),
    question=st.sampled_from(_WORDS[1:]),
    answer=st.sampled_from(_WORDS[1:]),
    term=st.sampled_from(_WORDS[1:]),
    canonical_number=st.sampled_from(["", "702.42a", "702.43a"]),
    duplicate_of=st.just(""),
)


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(_ELEMENT, max_size=30))
@example([Element("a", 1, 1, "rule", "", number_as_written="702.1", text="“Trample”  means"),
          Element("b", 1, 1, "rule", "", number_as_written="702.1.", text='"Trample" means'),
          Element("c", 1, 1, "rule", "", number_as_written="702.1.", text='"Trample" means')])
@example([Element("a", 1, 1, "rule", "", number_as_written="702.1", text="Trample"),  # aligned apart
          Element("b", 1, 1, "rule", "", number_as_written="702.1", text="Trample", canonical_number="702.2"),
          Element("c", 1, 1, "rule", "", number_as_written="702.1", text="Trample", canonical_number="702.2")])
def test_dedupe_marks_what_every_key_made_marks(elements: list[Element]) -> None:
    assert list(dedupe(elements)) == _reference(elements)


def test_a_folded_repeat_points_at_the_first_of_its_key() -> None:
    a = Element("cr-2025-09-19", 4, 4, "rule", "", number_as_written="702.1", text="“Trample”  means")
    b = Element("cr-2026-01-16", 9, 9, "rule", "", number_as_written="702.1.", text='"Trample" means')
    c = b._replace(source_id="cr-2026-04-17")
    other = b._replace(canonical_number="702.2")
    got = list(dedupe([a, b, c, other]))
    assert [el.duplicate_of for el in got] == ["", "cr-2025-09-19:L4", "cr-2025-09-19:L4", ""]
