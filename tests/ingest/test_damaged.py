"""Damaged copies made from bundled files (tests/data/damaged, written by
make_damaged.py): each is read, and flagged, as the undamaged file would be."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.ingest.decode import decode
from pipeline.ingest.read import Settings, read_source
from pipeline.records import Element, Source
from tests.conftest import DATA, RAW
from tests.data.damaged import make_damaged
from tests.golden.make_excerpt import excerpt

DAMAGED = DATA / "damaged"


def _said(elements: list[Element]) -> list[tuple[int, str, str, str]]:
    return [(el.line_start, el.kind, el.number_as_written, el.body) for el in elements]


def _read(path: Path) -> tuple[Source, list[Element]]:
    src, elements, _ = read_source(path, path.parent, Settings(jobs=1))
    return src, elements


def _read_bytes(data: bytes, tmp_path: Path, name: str = "x.txt") -> tuple[Source, list[Element]]:
    (tmp_path / name).write_bytes(data)
    return _read(tmp_path / name)


def test_committed_cases_are_what_the_generator_writes() -> None:
    for name, data in make_damaged.cases().items():
        assert (DAMAGED / name).read_bytes() == data, f"run python -m tests.data.damaged.make_damaged ({name})"


@pytest.mark.parametrize(("name", "flags"), [
    ("cr-2016-08-26__mangled-bom.txt", {"bom_repaired"}),
    ("cr-2016-08-26__mangled-bom-cr-rewritten.txt", {"bom_repaired", "utf16_realigned"}),
])
def test_utf16_with_a_mangled_bom(name: str, flags: set[str], tmp_path: Path) -> None:
    """The file starts EF BF BD EF BF BD, then M\\0a\\0g\\0...: UTF-16 LE whose BOM
    went through UTF-8 (once quarantined as binary data, 49% control bytes, when
    its carriage returns had been rewritten too)."""
    data = (DAMAGED / name).read_bytes()
    assert data.startswith(b"\xef\xbf\xbd\xef\xbf\xbdM\x00a\x00g\x00")
    src, elements = _read(DAMAGED / name)
    clean_src, clean = _read_bytes(excerpt(RAW / "cr-2016-08-26.txt", [(1, 4), (18, 21), (171, 182), (3279, 3284)]),
                                   tmp_path)
    assert (src.status, src.encoding, src.format, src.effective_date) == (
        "ok", "utf-16-le", "cr_document", "2016-08-26")
    assert set(src.flags) == flags
    assert "BOM mangled" in src.evidence
    assert _said(elements) == _said(clean)
    assert "bom_repaired" in elements[0].flags and elements[0].body == "Magic: The Gathering Comprehensive Rules"
    assert ("702.41a" in {el.number_as_written for el in elements})


@pytest.mark.parametrize("damage", [make_damaged.mangle_bom,
                                    lambda d: make_damaged.rewrite_carriage_returns(make_damaged.mangle_bom(d))],
                         ids=["mangled-bom", "mangled-bom-cr-rewritten"])
def test_a_whole_release_with_a_mangled_bom_is_read_whole(damage: Callable[[bytes], bytes], tmp_path: Path) -> None:
    original = (RAW / "cr-2016-08-26.txt").read_bytes()
    src, elements = _read_bytes(damage(original), tmp_path, "cr-2016-08-26.txt")
    _, clean = _read(RAW / "cr-2016-08-26.txt")
    assert (src.status, src.format, src.effective_date) == ("ok", "cr_document", "2016-08-26")
    assert [c.passed for c in src.checks] == [True, True, True]
    assert _said(elements) == _said(clean)
    assert sum(1 for el in elements if el.kind == "rule") == 1974


def test_nul_padding_between_words(tmp_path: Path) -> None:
    """NUL runs where a scraper padded fields: dropped (a space where they parted
    two words), flagged, and the text reads as before."""
    data = (DAMAGED / "000__nul-padding.txt").read_bytes()
    assert data.count(0) > 200
    src, elements = _read(DAMAGED / "000__nul-padding.txt")
    seed = (RAW / "000_eb8496d4591d3274.txt").read_bytes()
    _, clean = _read_bytes(seed[: seed.index(b"\n", 2000) + 1], tmp_path)
    assert (src.status, src.format) == ("ok", "faq")
    assert "control_chars_removed" in src.flags
    assert [(a, k, n, " ".join(b.split())) for a, k, n, b in _said(elements)] == [
        (a, k, n, " ".join(b.split())) for a, k, n, b in _said(clean)]
    assert elements[0].body.startswith("Entwine is a static ability of modal spells (see rule 700.2)")


def test_a_whole_release_padded_with_nuls(tmp_path: Path) -> None:
    src, elements = _read_bytes(make_damaged.pad_with_nuls((RAW / "cr-2024-09-20.txt").read_bytes()), tmp_path,
                                "cr-2024-09-20.txt")
    _, clean = _read(RAW / "cr-2024-09-20.txt")
    assert (src.status, src.format) == ("ok", "cr_document")
    assert [(k, n, " ".join(b.split())) for _, k, n, b in _said(elements)] == [
        (k, n, " ".join(b.split())) for _, k, n, b in _said(clean)]


def test_binary_data_is_still_binary(tmp_path: Path) -> None:
    """NULs alone do not make text: bytes that are no text once they are dropped stay quarantined."""
    src, _ = _read_bytes(bytes(range(256)) * 64, tmp_path, "blob.bin")
    assert (src.status, src.error) == ("quarantined", "blob.bin: not text: binary data (10% control bytes)")


def test_html_on_one_line() -> None:
    """``<h2>Entwine</h2><p>702.42a Entwine is ...</p>``: markup stripped, the rule found."""
    assert (DAMAGED / "cr-2026-08-07__one-line.html").read_bytes().startswith(b"<h2>Entwine</h2><p>702.42a Entwine")
    src, elements = _read(DAMAGED / "cr-2026-08-07__one-line.html")
    _, release = _read(RAW / "cr-2026-08-07.txt")
    wanted = {el.number_as_written: el.body for el in release if el.number_as_written in ("702.42a", "702.42b")}
    assert (src.status, src.format, src.flags) == ("ok", "cr_numbered", ("html_stripped",))
    assert [(el.kind, el.number_as_written, el.body) for el in elements] == [
        ("section", "", "Entwine"), ("rule", "702.42a", wanted["702.42a"]), ("rule", "702.42b", wanted["702.42b"]),
    ]
    assert all("html_stripped" in el.flags for el in elements)


def test_a_whole_release_as_a_web_page(tmp_path: Path) -> None:
    text = decode((RAW / "cr-2026-08-07.txt").read_bytes()).text
    escape = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
    page = "<!DOCTYPE html><html><head><title>Comprehensive Rules</title><style>p {margin: 0}</style></head><body>"
    page += "".join(f"<p>{ln.translate(escape)}</p>" for ln in text.split("\n") if ln.strip()) + "</body></html>"
    src, elements = _read_bytes(page.encode(), tmp_path, "cr.html")
    _, release = _read(RAW / "cr-2026-08-07.txt")
    assert (src.status, src.format, src.effective_date) == ("ok", "cr_document", "2026-08-07")
    assert [(k, n, b) for _, k, n, b in _said(elements) if k != "front_matter"] == [
        (k, n, b) for _, k, n, b in _said(release) if k != "front_matter"]
