"""Which single-byte code page a file that is not UTF-8 is in: cp1252, MacRoman or cp437.

Each candidate decoding is scored by what it makes of the bytes outside ASCII:
accented card names the rules quote ("Dandân", "Juzám"), typography (curly
quotes, dashes), lower-case letters inside words; the best score wins, and its
evidence is what ``sources.csv`` records. ``decode`` asks for it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from importlib import resources
from itertools import compress
from operator import not_

import numpy as np

# Candidates for text that is not UTF-8, in order of prior likelihood: the
# first wins a tie.
SINGLE_BYTE = ("cp1252", "mac_roman", "cp437")

_NON_ASCII = re.compile("[^\x00-\x7f]")
_WORD = re.compile(r"[^\W\d_][\w’'-]*")
# The bytes that may decode to word characters in a single-byte encoding: ASCII
# letters and digits, _ ' and -, and every high byte.
_RUN_BYTE = np.zeros(256, dtype=bool)
_RUN_BYTE[list(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_'-")] = True
_RUN_BYTE[0x80:] = True
_TYPOGRAPHY = set("’‘“”–—…•™®©°·")


@lru_cache(maxsize=1)
def accented_names() -> frozenset[str]:
    """Card names with accents that the rules quote (evidence for encodings)."""
    data = resources.files("pipeline").joinpath("data/accented_names.txt")
    lines = data.read_text(encoding="utf-8").splitlines()
    return frozenset(x.strip() for x in lines if x.strip() and not x.startswith("#"))


def score_text(text: str) -> tuple[int, list[str]]:
    """How sensible a single-byte decoding looks: known names, typography, letters.
    (The definition; ``choose_single_byte`` computes it as ``score_bytes``.)"""
    score = 0
    seen: list[str] = []
    names = accented_names()
    for word in set(_WORD.findall(text)):
        if word in names:
            score += 20
            seen.append(word)
    for m in _NON_ASCII.finditer(text):
        i, ch = m.start(), m.group()
        cat = unicodedata.category(ch)
        prev = text[i - 1] if i else " "
        nxt = text[i + 1] if i + 1 < len(text) else " "
        if ch in _TYPOGRAPHY:
            score += 2
        elif cat == "Ll" and prev.isalpha() and prev.islower() and ord(ch) < 0x180:
            score += 1
        elif cat.startswith("L") and (prev.isalpha() or nxt.isalpha()):
            score += 0
        else:
            score -= 3
    return score, sorted(seen)


def score_bytes(sample: bytes, enc: str, contexts: Counter[bytes], runs: set[bytes]) -> tuple[int, list[str]]:
    """``score_text(sample.decode(enc))`` for a single-byte ``enc``, from the sample's
    distinct contexts instead of every character: each non-ASCII character
    scores by itself and its two neighbours (``contexts``: byte triples around
    each high byte, with counts), and a known name, all of which have an
    accent, lies in a run of word bytes holding a high byte (``runs``). In the
    single-byte encodings read, a byte decodes to one character, ASCII exactly
    when the byte is (a test holds both, and the result, to ``score_text``)."""
    score = 0
    for triple, count in contexts.items():
        prev, ch, nxt = tuple(triple.decode(enc))
        cat = unicodedata.category(ch)
        if ch in _TYPOGRAPHY:
            score += 2 * count
        elif cat == "Ll" and prev.isalpha() and prev.islower() and ord(ch) < 0x180:
            score += count
        elif not (cat.startswith("L") and (prev.isalpha() or nxt.isalpha())):
            score -= 3 * count
    names = accented_names()
    # The runs joined by spaces (no word character) read as they read apart.
    seen = {word for word in _WORD.findall(b" ".join(runs).decode(enc)) if word in names}
    return score + 20 * len(seen), sorted(seen)


def sample_contexts(sample: bytes) -> tuple[Counter[bytes], set[bytes]]:
    """The inputs of ``score_bytes`` (a space stands before and after the sample):
    the triples, counted as 24-bit numbers, and the maximal runs of word bytes that
    hold a high byte, cut where the run's edges are. In arrays, not a Python step
    per byte: most non-ASCII lines of an old release hold curly quotes, so the
    sample is most of the file (3-4 times faster than two patterns' scans)."""
    padded = np.frombuffer(b" " + sample + b" ", dtype=np.uint8)
    high = np.flatnonzero(padded[1:-1] >= 0x80)  # in the sample; in padded, the middle of a triple
    triples = (padded[high].astype(np.uint32) << 16) | (padded[high + 1].astype(np.uint32) << 8) | padded[high + 2]
    keys, counts = np.unique(triples, return_counts=True)
    contexts = Counter(dict(zip((k.to_bytes(3, "big") for k in keys.tolist()), counts.tolist(), strict=True)))
    edges = np.flatnonzero(np.diff(_RUN_BYTE[padded].astype(np.int8)))  # in the sample: run starts, run ends
    starts, ends = edges[0::2], edges[1::2]
    holding = np.unique(np.searchsorted(starts, high, side="right") - 1)  # the runs the high bytes lie in
    return contexts, {sample[a:b] for a, b in zip(starts[holding].tolist(), ends[holding].tolist(), strict=True)}


def non_ascii_sample(data: bytes) -> bytes:
    """The lines of ``data`` that hold non-ASCII bytes: all the evidence there is."""
    lines = data.splitlines()
    return b"\n".join(compress(lines, map(not_, map(bytes.isascii, lines))))  # C loops: a file has 10,000s


def choose_single_byte(data: bytes) -> tuple[str, str]:
    """Pick the single-byte encoding that decodes ``data`` most sensibly."""
    sample = non_ascii_sample(data)
    contexts, runs = sample_contexts(sample)
    best: tuple[int, int, str, str] | None = None
    for rank, enc in enumerate(SINGLE_BYTE):
        try:
            sample.decode(enc)
        except UnicodeDecodeError:
            continue
        score, names = score_bytes(sample, enc, contexts, runs)
        evidence = f"{enc} score {score}" + (f" names {','.join(names)}" if names else "")
        key = (score, -rank, enc, evidence)
        if best is None or key > best:
            best = key
    assert best is not None  # cp437 decodes every byte
    return best[2], best[3]
