"""The one change function and the one word diff (pipeline/changes.py), and the site's
in-browser word diff (static/wordops.js) held to it: the same runs for the same two
wordings, on every edited rule of the bundled history and on generated wordings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.site
from pipeline.changes import change_of, word_diff, word_ops
from tests.conftest import Table, examples

WORDOPS_JS = Path(pipeline.site.__file__).parent / "templates" / "static" / "wordops.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed: wordops.js cannot be run")

Pair = tuple[str, str]


def js_word_ops(pairs: list[Pair]) -> list[list[tuple[str, str]]]:
    """wordops.js on each pair, run by Node, as (op, words joined by a space) runs."""
    assert NODE is not None
    script = (f"const w = require({json.dumps(str(WORDOPS_JS))});"
              "let s = ''; process.stdin.on('data', d => s += d);"
              "process.stdin.on('end', () => process.stdout.write(JSON.stringify("
              "JSON.parse(s).map(([a, b]) => w(a, b).map(([op, ws]) => [op, ws.join(' ')])))));")
    done = subprocess.run([NODE, "-e", script], input=json.dumps(pairs), capture_output=True, text=True,
                          check=True, timeout=300)
    return [[(op, words) for op, words in runs] for runs in json.loads(done.stdout)]


def edited_pairs(table: Table) -> list[Pair]:
    """(old wording, new wording) of every edit in the bundled rule_history, in order."""
    history = table("rule_history")
    pairs: list[Pair] = []
    previous: dict[str, str] = {}
    for lid, change, text in zip(history.lineage_id, history.change, history.text, strict=True):
        if change in ("edited", "moved+edited") and text and previous.get(lid):
            pairs.append((previous[lid], text))
        if text:
            previous[lid] = text
    return pairs


def test_word_ops_folds_quote_style_as_change_of_does() -> None:
    old, new = "Its “owner” gets it", 'Its "owner" gets it back'
    assert change_of("702.1a", old, "702.1a", new) == "edited"
    assert word_ops(old, new) == [("=", 'Its "owner" gets it'), ("+", "back")]
    assert change_of("702.1a", old, "702.1a", 'Its "owner" gets it') == "unchanged"
    assert word_diff(old, new) == 'Its "owner" gets it {+back+}'


def test_word_diff_of_a_rename() -> None:
    assert (word_diff("Totem armor is a static ability.", "Umbra armor is a static ability.")
            == "[-Totem-] {+Umbra+} armor is a static ability.")


@needs_node
def test_wordops_js_agrees_with_word_ops_on_every_edit_of_the_bundled_history(table: Table) -> None:
    pairs = edited_pairs(table)
    assert len(pairs) > 1000  # the bundled releases hold thousands of edits
    got = js_word_ops(pairs)
    wrong = [(a, b) for (a, b), runs in zip(pairs, got, strict=True) if runs != word_ops(a, b)]
    assert not wrong, f"{len(wrong)} of {len(pairs)} differ, the first: {wrong[0]}"


@needs_node
def test_wordops_js_agrees_on_hand_made_cases() -> None:
    pairs = [("", ""), ("", "a b"), ("a b", ""), ("a a a b", "a b a a"), ("x y z", "z y x"),
             ("“a” ‘b’", "\"a\" 'b'"), ("a  b\tc", "a b c d"), ("the the the", "the")]
    assert js_word_ops(pairs) == [word_ops(a, b) for a, b in pairs]


WORDS = st.sampled_from(["a", "b", "the", "“card”", '"card"', "it’s", "it's", "702.42a", "—"])


@needs_node
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.lists(WORDS, max_size=12), st.lists(WORDS, max_size=12)), min_size=1, max_size=20))
def test_wordops_js_agrees_on_generated_wordings(lists: list[tuple[list[str], list[str]]]) -> None:
    pairs = [(" ".join(a), " ".join(b)) for a, b in lists]
    assert js_word_ops(pairs) == [word_ops(a, b) for a, b in pairs]
