"""Decoding: every encoding and line ending, evidence for single-byte choices, damage kept."""

from __future__ import annotations

import codecs
import re

import ftfy
import pytest
from ftfy.badness import is_bad
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import DecodeError
from pipeline.ingest import markup
from pipeline.ingest.codepages import (
    SINGLE_BYTE,
    accented_names,
    choose_single_byte,
    non_ascii_sample,
    sample_contexts,
    score_bytes,
    score_text,
)
from pipeline.ingest.decode import Decoded, decode, is_utf8, newline_style
from tests.conftest import RAW, examples

TEXT = "Ghazbán Ogre, Juzám Djinn and Dandân™ – it’s “quoted”\r\nline two\rline three\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8-sig"),
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16-le+bom"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16-be+bom"),
        (TEXT.encode("utf-16-le"), "utf-16-le"),
        (TEXT.encode("cp1252"), "cp1252"),
        (TEXT.replace("™", "").replace("–", "-").replace("’", "'").replace("“", '"').replace("”", '"')
         .encode("mac_roman"), "mac_roman"),
        (TEXT.replace("™", "").replace("–", "-").replace("’", "'").replace("“", '"').replace("”", '"')
         .replace("á", "â").encode("cp437"), "cp437"),
    ],
)
def test_encodings(data: bytes, encoding: str) -> None:
    decoded = decode(data)
    assert decoded.encoding == encoding
    assert decoded.newline == "mixed(CRLF=1,CR=1,LF=1)"
    assert decoded.text.split("\n")[1:] == ["line two", "line three", ""]
    assert "Juzám" in decoded.text or "Juzâm" in decoded.text


def test_single_byte_choice_names_its_evidence() -> None:
    enc, evidence = choose_single_byte("El-Hajjâj".encode("mac_roman"))
    assert enc == "mac_roman"
    assert "El-Hajjâj" in evidence


def test_replacement_character_is_kept() -> None:
    decoded = decode("Ma\ufffdr\u00fbf".encode())
    assert "\ufffd" in decoded.text


def test_mixed_utf8_and_cp1252_lines() -> None:
    data = "Dandân\n".encode() + "Juzám ’\n".encode("cp1252")
    decoded = decode(data)
    assert decoded.text == "Dandân\nJuzám ’\n"
    assert decoded.encoding == "utf-8+cp1252"


def test_mojibake_repaired_and_spaces_folded() -> None:
    decoded = decode("itâ€™s\u00a0here\nfine".encode())
    assert decoded.text == "it’s here\nfine"
    assert decoded.fixed_lines == frozenset({1})


def test_newline_styles() -> None:
    assert newline_style("a\nb") == "LF"
    assert newline_style("a\r\nb") == "CRLF"
    assert newline_style("a\rb") == "CR"
    assert newline_style("ab") == "none"


_NAMES_AND_NOISE = st.lists(
    st.one_of(st.sampled_from(sorted(accented_names())), st.sampled_from(["’s", "“", "”", " ", "-", "'", "\n", "x1"]),
              st.text(max_size=6)),
    max_size=12,
).map("".join)


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.binary(max_size=300), _NAMES_AND_NOISE.map(lambda t: t.encode("utf-8", "replace"))),
       st.sampled_from(SINGLE_BYTE))
def test_fast_score_is_the_score(data: bytes, enc: str) -> None:
    """The encoding score from contexts and runs equals the score of the decoded text."""
    sample = non_ascii_sample(data)
    try:
        text = sample.decode(enc)
    except UnicodeDecodeError:
        return
    assert score_bytes(sample, enc, *sample_contexts(sample)) == score_text(text)


def test_fast_score_on_every_single_byte_release() -> None:
    for path in sorted(RAW.iterdir()):
        data = path.read_bytes()
        if data.isascii() or is_utf8(data):
            continue
        sample = non_ascii_sample(data)
        for enc in SINGLE_BYTE:
            try:
                text = sample.decode(enc)
            except UnicodeDecodeError:
                continue
            assert score_bytes(sample, enc, *sample_contexts(sample)) == score_text(text), (path.name, enc)


def test_single_byte_encodings_map_one_byte_to_one_character() -> None:
    for enc in SINGLE_BYTE:
        for byte in range(256):
            try:
                char = bytes([byte]).decode(enc)
            except UnicodeDecodeError:
                continue
            assert len(char) == 1 and char.isascii() == (byte < 128), (enc, byte)
    assert not [name for name in accented_names() if name.isascii()]


def _decode_by_whole_text(data: bytes) -> Decoded:
    """``decode`` as it was written first, with a pattern over the whole text at
    each step: the reference that the line-by-line and byte-level shortcuts keep."""
    from pipeline.ingest.decode import CONTROL, FTFY, SUSPECT, drop_control_lines, fold_spaces, to_text

    text, encoding, evidence, flags = to_text(data)
    newline = newline_style(text)
    text = re.sub(r"\r\n|\r", "\n", text)
    html = markup.is_html(text)
    if html:
        text = markup.html_to_text(text)
        flags = [(1, flag) for _, flag in flags] + [(n, "html_stripped") for n in range(1, text.count("\n") + 2)]
    if CONTROL.search(text):  # in the text, always
        text = drop_control_lines(text, flags)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if SUSPECT.search(line) and is_bad(line):
            repaired = ftfy.fix_text(line, FTFY)
            if repaired != line and "\n" not in repaired:
                lines[i] = repaired
                flags.append((i + 1, "encoding_fixed"))
    return Decoded(fold_spaces("\n".join(lines)), encoding, newline, evidence, tuple(sorted(flags)))


_MESSY_TEXT = st.lists(
    st.sampled_from([
        "Juzám Djinn", "it’s “quoted”", "AurÃ©lie", "Ã¢â‚¬â„¢", "a\u00a0b", "zero\u200bwidth", "\x00\x00",
        "bell\x07", "\x7f", "702.1a ", "rule", " ", "\r\n", "\n", "\r", "\t", "€", "∞",
        "<p>", "</p>", "<h2>", "&amp;", "&#7;",
    ]),
    max_size=30,
).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(_MESSY_TEXT, st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "mac_roman", "cp437", "utf-16"]))
def test_decode_equals_its_whole_text_reference(text: str, encoding: str) -> None:
    data = text.encode(encoding, "replace")
    try:
        expected = _decode_by_whole_text(data)
    except DecodeError:
        return
    assert decode(data) == expected


def test_bytes_below_0x80_are_ascii_in_every_encoding_but_utf16() -> None:
    """What lets ``decode`` look for control characters in the bytes."""
    for encoding in ("utf-8", *SINGLE_BYTE):
        assert bytes(range(128)).decode(encoding) == "".join(map(chr, range(128))), encoding
