"""A rule's history as readable text: every version, its number then, and a word diff."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from difflib import SequenceMatcher
from pathlib import Path


class TraceError(LookupError):
    """The number is not a canonical rule in the published dataset."""


def word_diff(old: str, new: str) -> str:
    """Inline word diff, ``[-removed-]{+added+}`` as ``git diff --word-diff`` shows it.

    >>> word_diff("Play this ability only", "Activate this ability only")
    '[-Play-] {+Activate+} this ability only'
    """
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(" ".join(a[i1:i2]))
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def history_rows(out: Path, number: str) -> list[dict[str, str]]:
    path = out / "rule_history.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: run `python -m pipeline ingest` first")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["canonical_number"] == number]
    if not rows:
        raise TraceError(f"{number} is not a rule of the reference numbering in {path}")
    return rows


def versions(out: Path, number: str) -> list[dict[str, str]]:
    """The rows of ``rule_history.csv`` for canonical rule ``number``, in date order,
    each with ``diff``: its word diff against the previous wording, when it changed."""
    rows = history_rows(out, number)
    previous = ""
    for row in rows:
        text = row["text"]
        changed = row["change"] in ("edited", "moved", "moved+edited") and text and previous and text != previous
        row["diff"] = word_diff(previous, text) if changed else ""
        if text:
            previous = text
    return rows


def trace(out: Path, number: str) -> Iterator[str]:
    """Lines describing the history of canonical rule ``number``."""
    rows = versions(out, number)
    yield f"Rule {number}: {len(rows)} versions"
    for row in rows:
        when = row["effective_date"] or "undated"
        head = f"{when:<10}  {row['source_id']:<28} {row['number_as_written'] or '-':<10} {row['change']}"
        yield head
        if row["change"] == "added":
            yield f"    {row['text']}"
        elif row["diff"]:
            yield f"    {row['diff']}"
