"""``rules.json`` is written by orjson (``publish.json``): the bytes are still those
``json.dumps`` writes (compact, ``ensure_ascii=False``), a newline after."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.publish.json import write_json

# Text of any character a decoded file can hold (no lone surrogate), control characters,
# quotes and backslashes among them; the integers of a line number, and the other JSON values.
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
_LEAF = st.one_of(_TEXT, st.integers(-(2**63), 2**63 - 1), st.none(), st.booleans())
_VALUE = st.recursive(_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=20)


@settings(deadline=None)
@given(st.dictionaries(_TEXT, _VALUE, max_size=4), st.lists(st.dictionaries(_TEXT, _VALUE, max_size=4), max_size=4))
def test_the_bytes_are_those_of_json_dumps(meta: dict[str, Any], sections: list[dict[str, Any]]) -> None:
    doc = {**meta, "sections": sections}
    expected = (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    with tempfile.TemporaryDirectory() as folder:  # hypothesis runs the test many times in one tmp_path
        path = Path(folder) / "rules.json"
        digest = write_json(path, doc)
        data = path.read_bytes()
    assert data == expected
    assert digest == hashlib.sha256(expected).hexdigest()
