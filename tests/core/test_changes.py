"""The one change function and the one word diff (pipeline/changes.py), and the site's
in-browser word diff (static/wordops.js) held to it: the same runs for the same two
wordings, on every edited rule of the bundled history and on generated wordings."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
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


class WordOpsJs:
    """wordops.js under one Node process for the whole module: each call sends a batch of
    pairs as one line of JSON and reads the runs back as one line (a process per call cost
    a second or more each, and the property test makes hundreds of calls)."""

    # A batch wordops.js throws on is answered with the error, and the process lives on
    # (hypothesis then shrinks the failing example against the same process).
    SCRIPT = ("const w = require(%s);"
              "const rl = require('readline').createInterface({input: process.stdin});"
              "rl.on('line', l => { let r; try {"
              " r = JSON.parse(l).map(([a, b]) => w(a, b).map(([op, ws]) => [op, ws.join(' ')]));"
              " } catch (e) { r = {error: String(e && e.stack || e)}; }"
              " process.stdout.write(JSON.stringify(r) + '\\n'); });")

    def __init__(self) -> None:
        assert NODE is not None
        self.node = subprocess.Popen([NODE, "-e", self.SCRIPT % json.dumps(str(WORDOPS_JS))], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def __call__(self, pairs: list[Pair]) -> list[list[tuple[str, str]]]:
        """wordops.js on each pair, as (op, words joined by a space) runs."""
        assert self.node.stdin is not None and self.node.stdout is not None
        self.node.stdin.write(json.dumps(pairs) + "\n")  # json.dumps escapes newlines: one line a batch
        self.node.stdin.flush()
        line = self.node.stdout.readline()
        assert line, f"node ended (exit code {self.node.poll()})"
        answer = json.loads(line)
        assert not isinstance(answer, dict), f"wordops.js threw: {answer['error']}"
        return [[(op, words) for op, words in runs] for runs in answer]

    def close(self) -> None:
        """Ends the input; Node, done with every line, exits 0."""
        assert self.node.stdin is not None and self.node.stdout is not None
        self.node.stdin.close()
        try:
            assert self.node.wait(timeout=60) == 0
        finally:
            self.node.stdout.close()


@pytest.fixture(scope="module")
def js_word_ops() -> Iterator[WordOpsJs]:
    """wordops.js, one Node process for every test of the module."""
    if NODE is None:
        pytest.skip("Node.js is not installed: wordops.js cannot be run")
    run = WordOpsJs()
    try:
        yield run
    finally:
        run.close()


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
def test_wordops_js_agrees_with_word_ops_on_every_edit_of_the_bundled_history(table: Table,
                                                                                js_word_ops: WordOpsJs) -> None:
    pairs = edited_pairs(table)
    assert len(pairs) > 1000  # the bundled releases hold thousands of edits
    got = js_word_ops(pairs)
    wrong = [(a, b) for (a, b), runs in zip(pairs, got, strict=True) if runs != word_ops(a, b)]
    assert not wrong, f"{len(wrong)} of {len(pairs)} differ, the first: {wrong[0]}"


@needs_node
def test_wordops_js_agrees_on_hand_made_cases(js_word_ops: WordOpsJs) -> None:
    pairs = [("", ""), ("", "a b"), ("a b", ""), ("a a a b", "a b a a"), ("x y z", "z y x"),
             ("“a” ‘b’", "\"a\" 'b'"), ("a  b\tc", "a b c d"), ("the the the", "the")]
    assert js_word_ops(pairs) == [word_ops(a, b) for a, b in pairs]


WORDS = st.sampled_from(["a", "b", "the", "“card”", '"card"', "it’s", "it's", "702.42a", "—"])


@needs_node
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.lists(WORDS, max_size=12), st.lists(WORDS, max_size=12)), min_size=1, max_size=20))
def test_wordops_js_agrees_on_generated_wordings(js_word_ops: WordOpsJs,
                                                 lists: list[tuple[list[str], list[str]]]) -> None:
    pairs = [(" ".join(a), " ".join(b)) for a, b in lists]
    assert js_word_ops(pairs) == [word_ops(a, b) for a, b in pairs]
