"""Noise across the corpus: recurring prose becomes an epigraph, answer paragraphs join their answer."""

from __future__ import annotations

from pipeline.corpus.noise import classify
from pipeline.records import Element


def _prose(source: str, line: int, body: str, **fields: int) -> Element:
    return Element(source, line, line, "prose", body, body=body, **fields)


def test_recurring_prose_is_an_epigraph_and_answers_join() -> None:
    motto = "Magic:  The Gathering is a game."
    a = [_prose("a", 1, motto), _prose("a", 3, motto), _prose("a", 5, "Once only.")]
    q = Element("b", 1, 2, "qa", "Q: Why?\nA: Because.", body="Q: Why?\nA: Because.", question="Why?",
                answer="Because.")
    b = [q, _prose("b", 3, "And more.", continues=1), _prose("b", 5, "magic: the gathering  is a game.")]
    rules = [Element("c", 1, 1, "rule", "100.1 Text", body="100.1 Text")]
    out = classify([a, b, rules])
    assert [(el.kind, el.noise_kind) for el in out[0]] == [("noise", "epigraph")] * 2 + [("prose", "")]
    joined = out[1][0]
    assert (joined.line_end, joined.answer) == (3, "Because.\nAnd more.")
    assert joined.body == "Q: Why?\nA: Because.\nAnd more."
    assert (out[1][1].kind, out[1][1].noise_kind) == ("noise", "epigraph")  # the third time, in another source
    assert out[2] == rules and out[2] is not rules  # nothing to mark: copied as it is


def test_a_paragraph_after_noise_keeps_its_answer_as_parent() -> None:
    q = Element("b", 1, 2, "qa", "Q: Why?", body="Q: Why?", question="Why?", answer="")
    banner = Element("b", 3, 3, "noise", "=====", body="=====", noise_kind="banner")
    out = classify([[q, banner, _prose("b", 4, "Later.", continues=1)]])[0]
    assert out[:2] == [q, banner]
    assert (out[2].parent_line, out[2].continues, out[2].kind) == (1, 0, "prose")
