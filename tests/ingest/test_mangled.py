"""A UTF-16 release whose bytes went through a UTF-8 round trip (issue 42): each accented
letter became U+FFFD in the trip, and read as UTF-16 as it was, a Hangul syllable in a card
name (``Dand뿯½n``) with the source ``ok``. The copies here are made from a real release by
that very round trip. The decoder reads the lost letters as U+FFFD and writes the known card
names again; the ``characters`` self-check makes the source suspect for what stays lost, and
for letters of a script the document otherwise never uses (the same copy, its BOM put back
by hand, read as it is)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from pipeline.ingest.checks import characters
from pipeline.ingest.decode import decode
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Check, Element, Source
from tests.conftest import RAW, Bundled

RELEASE = RAW / "cr-2016-08-26.txt"  # UTF-16 LE with a BOM; quotes Dandân, Juzám, Æther Storm ...
NAMES = ["Dandân", "El-Hajjâj", "Ghazbán Ogre", "Junún Efreet", "Juzám Djinn", "Khabál Ghoul", "Ma’rûf",
         "Æther Storm"]
# The lines whose ®, © a round trip loses for good: no card name to restore them from.
LOST_LINES = [7, 9, 478, 1181, 1201, 6581]


def _round_trip(data: bytes) -> bytes:
    """What a converter that took the file for UTF-8 wrote back."""
    return data.decode("utf-8", errors="replace").encode("utf-8")


def _read(raw: Path, name: str, data: bytes) -> tuple[Source, list[Element]]:
    (raw / name).write_bytes(data)
    src, elements, _ = read_source(raw / name, raw, Settings(jobs=1))
    return src, elements


@pytest.fixture(scope="module")
def original() -> tuple[Source, list[Element]]:
    src, elements, _ = read_source(RELEASE, RAW, Settings(jobs=1))
    assert src.status == "ok" and not any(c.name == "characters" for c in src.checks)
    return src, elements


def _check(src: Source) -> Check:
    (check,) = [c for c in src.checks if c.name == "characters"]
    return check


@pytest.mark.parametrize("order", ["utf-16-le", "utf-16-be"])
def test_a_round_tripped_release_gets_its_card_names_back_and_is_suspect(
        tmp_path: Path, original: tuple[Source, list[Element]], order: str) -> None:
    data = RELEASE.read_bytes()
    if order == "utf-16-be":  # the same release in the other byte order
        data = codecs.BOM_UTF16_BE + data[2:].decode("utf-16-le").encode("utf-16-be")
    mangled = _round_trip(data)
    assert mangled.startswith(b"\xef\xbf\xbd" * 2) and "Dand\ufffdn".encode("utf-16-le") not in mangled
    assert "Dand뿯½n" in mangled[6:].decode("utf-16-le", errors="replace") or order == "utf-16-be"
    src, elements = _read(tmp_path, "cr-2016-08-26.txt", mangled)
    assert (src.encoding, src.status) == (order, "suspect")
    assert "15 characters lost in it (U+FFFD), 9 restored in card names" in src.evidence
    check = _check(src)
    assert not check.passed
    assert check.detail.startswith("6 characters lost in decoding (U+FFFD) in 6 elements, at lines 7, 9, 478, 1181")
    assert src.error == f"cr-2016-08-26.txt: characters: {check.detail}"
    text = "\n".join(el.text_raw for el in elements)
    assert not [ch for ch in text if "\uac00" <= ch <= "\ud7a3"]  # no Hangul syllable
    for name in NAMES:
        assert name in text
    # Element for element as the release reads, but for the letters lost for good.
    _, before = original
    assert len(elements) == len(before)
    differ = [(a, b) for a, b in zip(before, elements, strict=True) if a.text_raw != b.text_raw]
    assert [b.line_start for _, b in differ] == LOST_LINES
    for a, b in differ:
        assert "chars_lost" in b.flags
        assert [x for x, y in zip(a.text_raw, b.text_raw, strict=True) if x != y] in (["®"], ["©"])
    restored = [el for el in elements if "name_restored" in el.flags]
    assert {el.line_start for el in restored} == {2593, 2597, 3692}
    assert "Dandân" in restored[0].text_raw


def test_letters_of_a_script_the_document_never_uses_make_it_suspect(tmp_path: Path) -> None:
    """The round-tripped copy with its BOM put back by hand: decoded as UTF-16 as it is,
    the Hangul stays in, and the self-check names where."""
    mangled = _round_trip(RELEASE.read_bytes())
    src, elements = _read(tmp_path, "bom-put-back.txt", codecs.BOM_UTF16_LE + mangled[6:])
    assert "Dand뿯½n" in "\n".join(el.text_raw for el in elements)
    assert src.status == "suspect"
    check = _check(src)
    assert check.detail.startswith(
        "15 letters of a script the document otherwise never uses (HANGUL 뿯) at line 7 (bom-put-back:L7), "
        "line 9 (bom-put-back:L9), line 478 (bom-put-back:L478)")


def _elements(*texts: str) -> list[Element]:
    return [Element("s", i, i, "paragraph", text) for i, text in enumerate(texts, 1)]


def test_words_of_another_script_are_the_documents() -> None:
    """A page that quotes Japanese card names writes words in it: not a misread."""
    check = characters(_elements("Rule 702.2 (Deathtouch)", "真火の神 is 火の神 in Japanese", "Æther Storm"))
    assert check == Check("characters", True, "letters of CJK in words")
    assert characters(_elements("Deathtouch", "Dandân, Æther, Lim-Dûl")) is None  # nothing to check
    single = characters(_elements("Deathtouch", "the Gathering뿯½ game", "Dandï뾽n"))
    assert single is not None and not single.passed
    assert single.detail == ("2 letters of a script the document otherwise never uses (HANGUL 뾽뿯) at "
                             "line 2 (s:L2), line 3 (s:L3)")
    # A Korean page: Hangul is its script, whatever its words' lengths, and Latin letters are never
    # out of place (rule numbers hold them: 702.2a).
    korean = characters(_elements("마법 규칙 게임 카드", "rule 702.2a"))
    assert korean == Check("characters", True, "letters of HANGUL in words")


def test_no_bundled_source_has_letters_out_of_place(bundled: Bundled) -> None:
    """The check is made only where it has something to check: on the bundled data, nowhere
    (so sources.csv is as it was), though 1999's release holds U+FFFD of its own."""
    corpus, _ = bundled
    assert not [s.source_id for s in corpus.sources if any(c.name == "characters" for c in s.checks)]
    assert "\ufffd" in decode((RAW / "cr-1999-04-23.txt").read_bytes()).text
