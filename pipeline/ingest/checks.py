"""Self-checks: does what was read add up? A source that fails one is ``suspect``.

A misread costs whole releases silently (a missing blank line once turned
~2,300 rules into glossary entries and the run said ``ok``), so every source is
checked against itself, and every release against the others in the run:

- ``numbered_lines``: lines that look numbered (the grammar's rule, section and
  chapter lines), outside the contents and not the rest of a wrapped sentence,
  against the rule, section and chapter elements made;
- ``rule_order``: within each section, rules come in number order;
- ``glossary_text``: every glossary entry has a definition;
- ``characters``: every letter is of a script the document writes words in (a
  UTF-16 copy read out of step, or one whose letters a UTF-8 round trip lost,
  puts single CJK or Hangul letters among Latin ones: ``Dand뿯½n``), and no
  character was lost in decoding (U+FFFD where the decoder knows a letter was);
- ``rule_count``: a release's rule count against its date-neighbours' (releases
  only ever grow by a few percent, so one that breaks the run's growth, by
  missing rules or by reading more than there are, stands out).

The first four need only the source (``source_checks``); ``rule_count`` needs
the run (``release_checks``). ``judge`` sets the status and the error.
``glossary_text`` and ``characters`` are made only where they have something to
check (glossary entries; letters outside Latin, or repairs of lost letters).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from operator import itemgetter

from pipeline import numbers
from pipeline.ingest.layout import Layout, layout, split_number, toc_key
from pipeline.ingest.parse import Line
from pipeline.records import Check, Element, Source

# A release may have this much fewer rules than an earlier one (or more than a
# later one) before it is suspect. Real releases never shrink by more than 0.1%.
RULE_COUNT_TOLERANCE = 0.10
# Rules out of order a release may have before it is suspect: real releases
# carry a typo or two ("432.2b" among the 423s in 2006, "702.30d" twice in 2009).
MAX_OUT_OF_ORDER = 2


def numbered_lines(lines: Sequence[Line], elements: Sequence[Element], shape: Layout | None = None) -> Check:
    """Numbered lines seen against rule, section and chapter elements made.

    The count is taken from the typed lines, not from the regions the assembler
    chose: a contents entry is the first of two headings alike, before the first
    subrule of a whole document; a wrapped sentence's next line may start with
    a number ("See rule\\n212.2 ...") and is no numbered line.
    """
    shape = layout(lines) if shape is None else shape
    numbered = ("CHAPTER", "SECTION", "RULE", "DOTTED")
    keys = Counter(toc_key(ln.text) for ln in lines if ln.kind in numbered)
    first_subrule = next(
        (i for i, ln in enumerate(lines)
         if ln.kind == "RULE" and "." in split_number(numbers.RULE_AT_START, ln.text)[0]),
        len(lines),
    )
    seen, met = 0, set()
    wrap = shape.wrap
    for i, ln in enumerate(lines[:first_subrule]):
        if ln.kind in numbered:
            key = toc_key(ln.text)
            contents = shape.is_cr and keys[key] > 1 and key not in met
            met.add(key)
            if ln.kind != "DOTTED" and not contents and not wrap.breaks(lines[i - 1] if i else None, ln):
                seen += 1
    # From the first subrule on, no line is a contents entry: each numbered line
    # counts unless a hard wrap broke it off the line before (none is, unwrapped).
    if wrap.width:
        seen += sum(1 for i in range(first_subrule, len(lines))
                    if lines[i].kind in numbered[:3] and not wrap.breaks(lines[i - 1] if i else None, lines[i]))
    else:
        kinds = Counter(map(itemgetter(0), lines[first_subrule:]))  # Line.kind
        seen += sum(kinds[kind] for kind in numbered[:3])
    made = sum(1 for el in elements if el.kind in ("chapter", "section", "rule") and el.number_as_written)
    allowed = max(1, seen // 200)
    return Check("numbered_lines", abs(made - seen) <= allowed,
                 f"{made} rule, section and chapter elements from {seen} numbered lines")


def rule_order(elements: Sequence[Element]) -> Check:
    """Rules in number order within each section (a lost digit, 1999's ``408.f``
    after ``408.2e``, is read as the one before it had)."""
    sections = {el.line_start for el in elements if el.kind == "section"}
    previous: dict[int, tuple[str, str, str]] = {}
    out_of_order: list[str] = []
    rules = 0
    for el in elements:
        if el.kind != "rule" or el.parent_line not in sections:
            continue
        rules += 1
        parts = numbers.parts(el.number_as_written)
        if parts is None:
            continue
        before = previous.get(el.parent_line)
        if before is not None and not parts[1] and parts[2]:
            parts = (parts[0], before[1], parts[2])
        if before is not None and _key(parts) <= _key(before):
            out_of_order.append(f"{el.number_as_written} after {'.'.join(p for p in before[:2] if p)}{before[2]}")
        previous[el.parent_line] = parts
    detail = f"{len(out_of_order)} of {rules} rules out of order"
    if out_of_order:
        detail += ": " + ", ".join(out_of_order[:5]) + (" ..." if len(out_of_order) > 5 else "")
    return Check("rule_order", len(out_of_order) <= MAX_OUT_OF_ORDER, detail)


@lru_cache(maxsize=1 << 15)
def _key(parts: tuple[str, str, str]) -> tuple[int, int, int, str]:
    head, digits, letters = parts
    return (int(head), int(digits) if digits else -1, len(letters), letters)


def glossary_text(elements: Sequence[Element]) -> Check:
    """Every glossary entry has a definition."""
    entries = [el for el in elements if el.kind == "glossary"]
    empty = [el.term for el in entries if not el.body.strip()]
    detail = f"{len(entries) - len(empty)} of {len(entries)} entries have text"
    if empty:
        detail += ": none for " + ", ".join(repr(t) for t in empty[:5]) + (" ..." if len(empty) > 5 else "")
    return Check("glossary_text", not empty, detail)


# A script a document writes a word in (this many of its letters in a row) is its own.
WORD_LETTERS = 3
# The characters ``script`` does not call Latin by their code alone.
_BEYOND_LATIN = re.compile("[^\x00-\u024f\u1e00-\u1eff]")


def script(ch: str) -> str:
    """The script of a letter, by its Unicode name (Japanese's three as one).

    >>> script("â"), script("뿯"), script("の"), script("火"), script("ª")
    ('LATIN', 'HANGUL', 'CJK', 'CJK', 'LATIN')
    """
    code = ord(ch)
    if code < 0x250 or 0x1E00 <= code < 0x1F00:  # Latin's letters and its signs (ª, µ)
        return "LATIN"
    first = unicodedata.name(ch, "").split(" ", 2)
    if first[0] == "FULLWIDTH" and first[1:2] == ["LATIN"]:
        return "LATIN"
    return {"HIRAGANA": "CJK", "KATAKANA": "CJK", "IDEOGRAPHIC": "CJK"}.get(first[0], first[0])


def characters(elements: Sequence[Element]) -> Check | None:
    """Letters of a script the document otherwise never uses, and characters the
    decoder knows were lost (``chars_lost``; U+FFFD in the text); None when the
    document has no letter outside Latin and the decoder lost or restored none.

    A script is the document's when it holds its most letters, or when the
    document writes a word in it (``WORD_LETTERS`` of them in a row), and Latin
    always is (rule numbers hold its letters: 702.2a): single letters of another
    are what a misread leaves (``Dand뿯½n``: a UTF-16 copy whose accented letters
    a UTF-8 round trip lost, read as it was)."""
    found: dict[str, list[tuple[int, str, str]]] = {}  # script -> (line, letter, element id)
    longest: Counter[str] = Counter()
    lost = [el for el in elements if "chars_lost" in el.flags]
    restored = sum(1 for el in elements if "name_restored" in el.flags)
    for el in elements:
        text = el.text_raw
        # Only a letter outside Latin's ranges can be of another script (``script``):
        # most texts hold none, and skip the walk over their every character.
        if text.isascii() or not any(ch.isalpha() for ch in _BEYOND_LATIN.findall(text)):
            continue
        run, run_script = 0, ""
        for i, ch in enumerate(text):
            kind = script(ch) if ch.isalpha() and not ch.isascii() else "LATIN" if ch.isalpha() else ""
            run = run + 1 if kind and kind == run_script else (1 if kind else 0)
            run_script = kind
            if kind and kind != "LATIN":
                longest[kind] = max(longest[kind], run)
                found.setdefault(kind, []).append((el.line_start + text.count("\n", 0, i), ch, el.element_id))
    if not found and not lost and not restored:
        return None
    main = "LATIN"
    if found:
        latin = sum(1 for el in elements for ch in el.text_raw if ch.isalpha() and script(ch) == "LATIN")
        main = max([("LATIN", latin), *((k, len(v)) for k, v in found.items())], key=lambda kv: kv[1])[0]
    stray = sorted(hit for kind, hits in found.items() if kind != main and longest[kind] < WORD_LETTERS
                   for hit in hits)
    problems = []
    if stray:
        letters = ", ".join(f"{kind} {''.join(sorted({h[1] for h in hits}))}"
                            for kind, hits in sorted(found.items()) if kind != main and longest[kind] < WORD_LETTERS)
        places = list(dict.fromkeys((line, element) for line, _, element in stray))
        named = ", ".join(f"line {line} ({element})" for line, element in places[:5])
        problems.append(f"{len(stray)} letters of a script the document otherwise never uses ({letters}) at {named}"
                        + (" ..." if len(places) > 5 else ""))
    if lost:
        lines = ", ".join(str(el.line_start) for el in lost[:5]) + (" ..." if len(lost) > 5 else "")
        count = sum(el.text_raw.count("\ufffd") for el in lost)
        problems.append(f"{count} characters lost in decoding (U+FFFD) in {len(lost)} elements, at lines {lines}")
    if problems:
        return Check("characters", False, "; ".join(problems))
    scripts = ", ".join(sorted(k for k in found if k != "LATIN"))
    detail = f"letters of {scripts} in words" if scripts else "every letter Latin"
    if restored:
        detail += f"; lost letters of card names restored in {restored} elements"
    return Check("characters", True, detail)


def source_checks(lines: Sequence[Line], elements: Sequence[Element], shape: Layout | None = None
                  ) -> tuple[Check, ...]:
    """The checks one source can make on its own (``shape``: the lines' ``layout``, if made)."""
    checks = [numbered_lines(lines, elements, shape), rule_order(elements)]
    if any(el.kind == "glossary" for el in elements):
        checks.append(glossary_text(elements))
    found = characters(elements)
    if found is not None:
        checks.append(found)
    return tuple(checks)


def release_checks(releases: Sequence[tuple[Source, int]]) -> dict[str, Check]:
    """``rule_count`` for each dated release, given (source, rule count) pairs.

    Rule counts grow from release to release; the largest set of releases whose
    counts do (within ``RULE_COUNT_TOLERANCE``) is taken as right, and each
    release outside it fails, with the counts of the releases around it.
    """
    dated = sorted((r for r in releases if r[0].effective_date), key=lambda r: (r[0].effective_date, r[0].source_id))
    if len(dated) < 2:
        return {}
    counts = [n for _, n in dated]
    # Longest chain of releases whose counts grow (within tolerance); ties go to more rules.
    best: list[tuple[int, int]] = []
    before: list[int] = []
    for i, n in enumerate(counts):
        options = [(best[j][0] + 1, best[j][1] + n, j) for j in range(i) if _grows(counts[j], n)]
        length, total, j = max(options, default=(1, n, -1))
        best.append((length, total))
        before.append(j)
    end = max(range(len(counts)), key=lambda i: (best[i], -i))
    chain = set()
    while end >= 0:
        chain.add(end)
        end = before[end]
    out: dict[str, Check] = {}
    for i, (src, n) in enumerate(dated):
        earlier = next((k for k in range(i - 1, -1, -1) if k in chain), None)
        later = next((k for k in range(i + 1, len(dated)) if k in chain), None)
        around = ", ".join(f"{dated[k][0].source_id} {counts[k]}" for k in (earlier, later) if k is not None)
        out[src.source_id] = Check("rule_count", i in chain, f"{n} rules; around it: {around or 'none'}")
    return out


def _grows(earlier: int, later: int) -> bool:
    return later >= earlier * (1 - RULE_COUNT_TOLERANCE)


def judge(src: Source, checks: Sequence[Check]) -> Source:
    """The source with its checks, ``suspect`` when one failed (quarantine stands)."""
    failed = [c for c in checks if not c.passed]
    if src.status == "quarantined":
        return replace(src, checks=tuple(checks))
    if not failed:
        return replace(src, checks=tuple(checks), status="ok", error="")
    error = "; ".join(f"{c.name}: {c.detail}" for c in failed)
    return replace(src, checks=tuple(checks), status="suspect", error=f"{src.path}: {error}")


def problems(src: Source) -> list[str]:
    """One line per problem of a source, for the log (``quarantined: ...``, ``suspect: ...``)."""
    if src.status == "quarantined":
        return [f"quarantined: {src.error}"]
    return [f"suspect: {src.path}: {c.name}: {c.detail}" for c in src.checks if not c.passed]


def check_releases(sources: list[Source], per_source: Sequence[list[Element]]) -> list[Source]:
    """Each whole release's rule count against the others' (``release_checks``)."""
    releases = [
        (src, sum(1 for el in els if el.kind == "rule"))
        for src, els in zip(sources, per_source, strict=True)
        if src.format == "cr_document" and src.status != "quarantined"
    ]
    found = release_checks(releases)
    out = []
    for src in sources:
        kept = tuple(c for c in src.checks if c.name != "rule_count")
        extra = (found[src.source_id],) if src.source_id in found else ()
        out.append(judge(src, kept + extra) if src.status != "quarantined" else src)
    return out
