"""The order of the site's changes: ``site.changes.document_order`` (the change pages)
puts them in document order by ``pipeline.numbers.sort_key``, as ``diff`` does, and
``static/compare.js`` (the in-browser comparison) orders by the same key, run by Node
on generated numbers and the shapes real releases write."""

from __future__ import annotations

import json
import re
import select
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.site
from pipeline.changes import Change
from pipeline.numbers import sort_key
from pipeline.site.changes import document_order
from tests.conftest import examples

COMPARE_JS = Path(pipeline.site.__file__).parent / "templates" / "static" / "compare.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed: compare.js cannot be run")

# The number shapes of the releases: two-letter subrules, a space or a trailing dot
# as written, sections and chapters, and what is no rule number at all.
SHAPES = ["704.5aa", "704.5z", "704.5", "704.10", "704", "702. 37a", "100.1.", "702.175a", "", "Glossary", "1.2"]


class _Node:
    """compare.js's ``numberOrder`` (with the ``normNumber`` it calls), run by one Node process
    for the module: each call sends a list of numbers as a line of JSON and reads their keys
    back (a Node started per call cost 0.15 s, most of the property test's time)."""

    def __init__(self, node: str) -> None:
        source = COMPARE_JS.read_text(encoding="utf-8")
        # Each function as written: on one line, or up to the line that closes it.
        functions = [re.search(rf"  function {name}\(n\) \{{[^\n]*\}}\n|  function {name}\(n\) \{{.*?\n  \}}\n",
                               source, re.S) for name in ("normNumber", "numberOrder")]
        assert all(functions), "compare.js has no normNumber or numberOrder"
        script = ("".join(f.group(0) for f in functions if f)
                  + "require('readline').createInterface({input: process.stdin}).on('line', line =>"
                  " process.stdout.write(JSON.stringify(JSON.parse(line).map(numberOrder)) + '\\n'));")
        self.proc = subprocess.Popen([node, "-e", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, encoding="utf-8")

    def order(self, numbers: list[str]) -> list[list[object]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(numbers) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        assert ready, "Node did not answer in 120 s"
        line = self.proc.stdout.readline()
        assert line, f"Node ended (exit code {self.proc.poll()})"
        found: list[list[object]] = json.loads(line)
        return found

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()  # the end of its input: Node exits
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        assert code == 0, f"Node exited {code}"


@pytest.fixture(scope="module")
def node() -> Iterator[_Node]:
    assert NODE is not None
    running = _Node(NODE)
    try:
        yield running
    finally:
        running.close()


def _change(new: str, old: str = "", other: str = "") -> Change:
    return Change("moved", new or old, old, new, "", "", other_number=other)


def test_change_pages_are_in_document_order() -> None:
    changes = [_change("704.5aa", "704.5y"), _change("704.5z", "704.5x"), _change("", "704.5", other="704.5ab"),
               _change("704.10"), _change("704.5", "704.4"), _change("704.5", "")]
    assert [(c.new_number or c.other_number, c.old_number) for c in sorted(changes, key=document_order)] == [
        ("704.5", "704.4"), ("704.5", ""), ("704.5z", "704.5x"), ("704.5aa", "704.5y"), ("704.5ab", "704.5"),
        ("704.10", "")]


@needs_node
def test_compare_js_orders_the_real_shapes_as_sort_key(node: _Node) -> None:
    assert [tuple(k) for k in node.order(SHAPES)] == [sort_key(n) for n in SHAPES]


@needs_node
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.from_regex(r"\A[0-9]{1,4}(\.[ ]?[0-9]{0,3}[a-z]{0,3}\.?)?\Z"), min_size=1, max_size=40))
def test_compare_js_orders_any_number_as_sort_key(node: _Node, numbers: list[str]) -> None:
    assert [tuple(k) for k in node.order(numbers)] == [sort_key(n) for n in numbers]
