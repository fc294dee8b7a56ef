"""Run one golden input through the whole pipeline and describe what came out.

    python -m tests.golden.cases            # rewrite every *.expected.json
    python -m tests.golden.cases NAME ...   # only the named cases

Review a rewritten expectation line by line before committing it.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pipeline.run import Settings, build

HERE = Path(__file__).resolve().parent
CASES = sorted(p for p in HERE.glob("*/*.txt"))


def describe(path: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copyfile(path, Path(tmp) / path.name)
        corpus = build(Path(tmp), Settings(jobs=1))
    (src,) = corpus.sources
    return {
        "source": {
            "encoding": src.encoding, "newline": src.newline, "format": src.format,
            "effective_date": src.effective_date, "era": src.era, "status": src.status,
            "flags": list(src.flags),
        },
        "elements": [
            {
                "lines": [el.line_start, el.line_end], "kind": el.kind, "number": el.number_as_written,
                "parent": el.parent_line or None, "text": el.text,
                **({"noise_kind": el.noise_kind} if el.noise_kind else {}),
                **({"question": el.question, "answer": el.answer} if el.kind == "qa" else {}),
                **({"term": el.term} if el.kind == "glossary" else {}),
                **({"flags": list(el.flags)} if el.flags else {}),
            }
            for el in corpus.elements
        ],
    }


def dumps(doc: dict[str, Any]) -> str:
    """JSON with one element per line, so that a diff shows which element changed."""
    rows = ",\n  ".join(json.dumps(el, ensure_ascii=False) for el in doc["elements"])
    source = json.dumps(doc["source"], ensure_ascii=False)
    return f'{{\n "source": {source},\n "elements": [\n  {rows}\n ]\n}}\n'


def expected_path(case: Path) -> Path:
    return case.with_suffix(".expected.json")


def main(names: list[str]) -> None:
    for case in CASES:
        if names and case.stem not in names:
            continue
        text = dumps(describe(case))
        expected_path(case).write_text(text, encoding="utf-8")
        print(f"wrote {expected_path(case).relative_to(HERE)}")


if __name__ == "__main__":
    main(sys.argv[1:])
