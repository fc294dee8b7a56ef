"""The element's copy functions: setter writes a function per set of fields; evolve goes through it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.records import Element, evolve, setter
from tests.conftest import examples

_EL = Element("cr-2026-08-07", 12, 14, "rule", "702.1a  Text", body="702.1a Text", number_as_written="702.1a",
              parent_line=11, flags=("x",), region="rules", continues=3)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(Element._fields), unique=True, max_size=len(Element._fields)), st.data())
def test_setter_is_replace(names: list[str], data: st.DataObject) -> None:
    values = [data.draw(st.text(max_size=4)) for _ in names]
    copy = setter(*names)(_EL, *values)
    assert copy == _EL._replace(**dict(zip(names, values, strict=True))) and type(copy) is Element
    assert evolve(_EL, **dict(zip(names, values, strict=True))) == copy


def test_setter_keeps_every_other_field_and_the_id() -> None:
    copy = setter("text", "flags")(_EL, "702.1a Text", ("x", "spaces_collapsed"))
    assert copy[:8] == _EL[:8] and copy[9:13] == _EL[9:13] and copy[14:] == _EL[14:]
    assert (copy.text, copy.flags, copy.element_id) == ("702.1a Text", ("x", "spaces_collapsed"), "cr-2026-08-07:L12")


def test_setter_is_made_once_per_set_of_fields() -> None:
    assert setter("duplicate_of") is setter("duplicate_of")
    assert setter("text", "flags") is not setter("flags", "text")
    assert setter("flags", "text")(_EL, ("y",), "t") == _EL._replace(text="t", flags=("y",))


def test_setter_refuses_an_unknown_or_repeated_field() -> None:
    with pytest.raises(ValueError, match="no field 'colour'"):
        setter("text", "colour")
    with pytest.raises(ValueError, match="a field twice"):
        setter("text", "text")
