"""Decoding: every encoding and line ending, evidence for single-byte choices, damage kept."""

from __future__ import annotations

import codecs

import pytest

from pipeline.decode import choose_single_byte, decode, newline_style

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
