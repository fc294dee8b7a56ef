"""The JSON writer: ``rules.json`` written as ``json.dumps`` would write it, a section at a time."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from pipeline.publish.sink import HashingFile


def write_json(path: Path, doc: dict[str, Any]) -> str:
    """Write ``doc`` as ``json.dumps`` does (compact, UTF-8) with a newline after,
    its sections one at a time rather than as one string; returns the file's sha256."""
    sink = HashingFile(path)
    with io.TextIOWrapper(io.BufferedWriter(sink, 1 << 20), encoding="utf-8", newline="") as fh:
        fh.write("{")
        for i, (key, value) in enumerate(doc.items()):
            fh.write("," * bool(i) + _compact(key) + ":")
            if key == "sections":  # nearly all of the file
                fh.write("[")
                for j, section in enumerate(value):
                    fh.write("," * bool(j) + _compact(section))
                fh.write("]")
            else:
                fh.write(_compact(value))
        fh.write("}\n")
    return sink.digest.hexdigest()


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
