"""Decoding: every encoding and line ending, evidence for single-byte choices, damage kept."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.decode import (
    SINGLE_BYTE,
    _contexts,
    _is_utf8,
    _non_ascii_sample,
    _score,
    _score_bytes,
    accented_names,
    choose_single_byte,
    decode,
    newline_style,
)
from tests.conftest import RAW

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


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=300), _NAMES_AND_NOISE.map(lambda t: t.encode("utf-8", "replace"))),
       st.sampled_from(SINGLE_BYTE))
def test_fast_score_is_the_score(data: bytes, enc: str) -> None:
    """The encoding score from contexts and runs equals the score of the decoded text."""
    sample = _non_ascii_sample(data)
    try:
        text = sample.decode(enc)
    except UnicodeDecodeError:
        return
    assert _score_bytes(sample, enc, *_contexts(sample)) == _score(text)


def test_fast_score_on_every_single_byte_release() -> None:
    for path in sorted(RAW.iterdir()):
        data = path.read_bytes()
        if data.isascii() or _is_utf8(data):
            continue
        sample = _non_ascii_sample(data)
        for enc in SINGLE_BYTE:
            try:
                text = sample.decode(enc)
            except UnicodeDecodeError:
                continue
            assert _score_bytes(sample, enc, *_contexts(sample)) == _score(text), (path.name, enc)


def test_single_byte_encodings_map_one_byte_to_one_character() -> None:
    for enc in SINGLE_BYTE:
        for byte in range(256):
            try:
                char = bytes([byte]).decode(enc)
            except UnicodeDecodeError:
                continue
            assert len(char) == 1 and char.isascii() == (byte < 128), (enc, byte)
    assert not [name for name in accented_names() if name.isascii()]
