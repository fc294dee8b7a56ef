"""The one comparer (``pipeline.changes.compare``) that ``diff``, the site's change pages
and the job's ``changes.md`` call: what it says of each rule, on generated sets of rules
and lineages, against the rules the contract states, written out here case by case."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.changes import KINDS, Line, Span, Worded, change_of, compare
from tests.conftest import examples

KEYS = [f"L{i}" for i in range(8)]
DATES = ["2001", "2003", "2005", "2007"]
words = st.builds(Worded, st.sampled_from(["702.1a", "702.2a", "702. 2a", "702.2a."]),
                  st.sampled_from(["Entwine is", "Entwine is “x”", 'Entwine is "x"', "Umbra armor"]))
rules = st.dictionaries(st.sampled_from(KEYS), words, max_size=6)
lines = st.builds(Line, st.sampled_from(["", *DATES]), st.sampled_from(["", "removed", "merged"]),
                  st.sampled_from(["", *DATES]), st.sampled_from(["", *KEYS]), st.sampled_from(["", *KEYS]))
spans = st.builds(Span, st.sampled_from(["", *DATES]), st.sampled_from(["", *DATES]), st.booleans(),
                  st.sampled_from(["", *DATES]))


def test_two_numberings_are_compared_by_membership() -> None:
    old = {"a": Worded("702.40a", "Entwine"), "b": Worded("702.9", "Gone"), "d": Worded("1.1", "Same")}
    new = {"a": Worded("702.41a", "Entwine"), "c": Worded("702.1", "New"), "d": Worded("1.1", "Same")}
    found = compare(dict.fromkeys([*new, *old]), old.get, new.get)
    assert [(c.kind, c.key, c.old_number, c.new_number) for c in found] == [
        ("moved", "a", "702.40a", "702.41a"), ("added", "c", "", "702.1"), ("removed", "b", "702.9", "")]


@settings(max_examples=examples(300), deadline=None)
@given(rules, rules)
def test_without_lineages_every_rule_of_one_side_only_is_added_or_removed(old: dict[str, Worded],
                                                                          new: dict[str, Worded]) -> None:
    found = {c.key: c for c in compare(dict.fromkeys([*new, *old]), old.get, new.get)}
    for key in {*old, *new}:
        if key in old and key in new:
            kind = change_of(old[key].number, old[key].text, new[key].number, new[key].text)
            assert (found[key].kind if key in found else "unchanged") == kind
        else:
            assert found[key].kind == ("added" if key in new else "removed")
    assert all(c.kind in KINDS for c in found.values())


@settings(max_examples=examples(500), deadline=None)
@given(rules, rules, st.fixed_dictionaries({k: lines for k in KEYS}), spans)
def test_through_lineages(old: dict[str, Worded], new: dict[str, Worded], line: dict[str, Line], span: Span) -> None:
    found = {c.key: c for c in compare(dict.fromkeys([*new, *old]), old.get, new.get, line.__getitem__, span)}
    for key in {*old, *new}:
        lin, c = line[key], found.get(key)
        if key in old and key in new:
            assert (c.kind if c else "unchanged") == change_of(old[key].number, old[key].text, new[key].number,
                                                               new[key].text)
        elif key in new:
            if not span.whole and (not span.placed or lin.first <= span.placed):
                assert c is None  # a copy merely lacked it
            elif lin.split_from and (not span.old_date or lin.first > span.old_date):
                assert c is not None and (c.kind, c.other) == ("split", lin.split_from)
                parent = old.get(lin.split_from)
                assert c.other_number == (parent.number if parent else "")
            else:
                assert c is not None and c.kind == "added"
        else:
            ended = bool(lin.ended) and bool(span.new_date) and span.old_date < lin.ended_on <= span.new_date
            assert (c.kind if c else "") == (lin.ended if ended else "")
            if c and c.kind == "merged":
                into = new.get(lin.merged_into) if lin.merged_into else None
                assert (c.other, c.other_number) == ((lin.merged_into, into.number) if into else ("", ""))
