"""Bytes to text: encoding detection, newline normalisation, mojibake repair.

The decoded text is what every line number in the output refers to: it is
split at ``\\r\\n``, ``\\r`` or ``\\n`` and re-joined with ``\\n``. The choice of
encoding is recorded with the evidence that decided it, so that a reader of
``sources.csv`` can check it.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import compress
from itertools import count as counting
from operator import not_

import ftfy
import numpy as np
from ftfy.badness import is_bad

from pipeline.errors import DecodeError
from pipeline.ingest import markup
from pipeline.ingest.codepages import accented_names, choose_single_byte

_ODD_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_INVISIBLE = re.compile("[\u200b\u2060\ufeff]")
_NEWLINES = re.compile(r"\r\n|\r|\n")
# ftfy's badness check is slow; mojibake always leaves some character outside
# ASCII and common typography, so only lines with one are checked.
SUSPECT = re.compile("[^\x00-\x7f’‘“”–—…•™®©°−×]")
CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")
_NUL_BETWEEN = re.compile("(?<=[^\\s\x00])\x00+(?=[^\\s\x00])")

# A UTF-16 byte-order mark (FF FE or FE FF) after a UTF-8 round trip: each
# byte was invalid UTF-8 and became U+FFFD.
MANGLED_BOM = b"\xef\xbf\xbd\xef\xbf\xbd"

# Signatures of binary formats that are sometimes scraped by mistake.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"%PDF-", "PDF document"), (b"PK\x03\x04", "ZIP archive"), (b"PK\x05\x06", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"), (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"), (b"Rar!", "RAR archive"),
    (b"\x7fELF", "ELF executable"), (b"BZh", "bzip2 archive"), (b"\xfd7zXZ\x00", "xz archive"),
    (b"RIFF", "RIFF media"), (b"\x00\x00\x01\x00", "icon image"), (b"OggS", "Ogg media"),
)
FTFY = ftfy.TextFixerConfig(
    unescape_html=False,
    remove_terminal_escapes=False,
    uncurl_quotes=False,
    fix_latin_ligatures=False,
    fix_character_width=False,
    fix_line_breaks=False,
    fix_surrogates=True,
    remove_control_chars=False,
    normalization=None,
    explain=False,
)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded source: its text with ``\\n`` line ends, and how it was read.

    ``line_flags`` names what decoding did to particular lines (1-based):
    ``encoding_fixed`` (mojibake repaired), ``encoding_mixed`` (the line was not
    UTF-8 like the rest), ``control_chars_removed`` (NUL padding and other C0
    controls), ``bom_repaired`` (a UTF-16 byte-order mark mangled by a UTF-8
    round trip), ``utf16_realigned`` (a stray byte that broke UTF-16's byte
    pairs was dropped), ``html_stripped`` (the text is a web page's, markup
    removed).
    """

    text: str
    encoding: str
    newline: str
    evidence: str = ""
    line_flags: tuple[tuple[int, str], ...] = ()

    @property
    def fixed_lines(self) -> frozenset[int]:
        return frozenset(n for n, flag in self.line_flags if flag == "encoding_fixed")


def newline_style(text: str | bytes) -> str:
    """Name the line endings of ``text`` (or of the bytes of a text in an
    encoding that codes them as ASCII does): ``LF``, ``CRLF``, ``CR``, ``none`` or a mix.

    >>> newline_style("a\\r\\nb\\rc"), newline_style(b"a\\r\\nb\\rc")
    ('mixed(CRLF=1,CR=1)', 'mixed(CRLF=1,CR=1)')
    """
    if isinstance(text, bytes):  # a byte a character: counted faster than a text with two bytes a character
        crlf, cr, lf = text.count(b"\r\n"), text.count(b"\r"), text.count(b"\n")
    else:
        crlf, cr, lf = text.count("\r\n"), text.count("\r"), text.count("\n")
    cr -= crlf
    lf -= crlf
    found = [(n, c) for n, c in (("CRLF", crlf), ("CR", cr), ("LF", lf)) if c]
    if not found:
        return "none"
    if len(found) == 1:
        return found[0][0]
    return "mixed(" + ",".join(f"{n}={c}" for n, c in found) + ")"


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le``/``-be`` when every other byte is NUL, as in UTF-16 text."""
    if len(data) < 4 or len(data) % 2:
        return None
    even = data[0::2].count(0) / (len(data) // 2)
    odd = data[1::2].count(0) / (len(data) // 2)
    if odd > 0.6 and even < 0.1:
        return "utf-16-le"
    if even > 0.6 and odd < 0.1:
        return "utf-16-be"
    return None


def _decode_mixed(data: bytes) -> tuple[str, str, str, list[tuple[int, str]]]:
    """Decode line by line: UTF-8 where a line is UTF-8, a single-byte guess elsewhere."""
    chunks = data.splitlines(keepends=True)
    valid = [is_utf8(c) for c in chunks]
    fallback, evidence = choose_single_byte(b"\n".join(c for c, ok in zip(chunks, valid, strict=True) if not ok))
    parts: list[str] = []
    odd: list[int] = []
    for chunk, ok in zip(chunks, valid, strict=True):
        if not ok:
            odd.append(len(parts))
        parts.append(chunk.decode("utf-8" if ok else fallback))
    text = "".join(parts)
    # Line numbers of the odd chunks, counted as the text will be split.
    starts = [m.end() for m in _NEWLINES.finditer(text)]
    offsets, pos = [], 0
    for part in parts:
        offsets.append(pos)
        pos += len(part)
    lines = [(1 + bisect_right(starts, offsets[i]), "encoding_mixed") for i in odd]
    return text, f"utf-8+{fallback}", f"lines not UTF-8 read as {evidence}", lines


def is_utf8(chunk: bytes) -> bool:
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_SNIFF_CONTROL = bytes([*range(0, 9), *range(14, 32)])  # what sniff_binary counts as control bytes


def sniff_binary(data: bytes) -> str:
    """Why ``data`` is not text (a known binary signature, or mostly control bytes), or ''.

    >>> sniff_binary(b"%PDF-1.4 ..."), sniff_binary(b"702.1a Text")
    ('PDF document', '')
    """
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    head = data[:65536]
    if not head or _utf16_without_bom(head[: len(head) // 2 * 2]) or utf16_shaped(head):
        return ""
    control = len(head) - len(head.translate(None, _SNIFF_CONTROL))  # in one pass, not one a byte
    nul = head.count(0)
    # Text a scraper padded with NUL bytes reads once they are dropped.
    padded = nul and control - nul <= 0.01 * (len(head) - nul) and re.search(rb"[A-Za-z]{3}", head)
    if control > 0.1 * len(head) and not padded:
        return f"binary data ({100 * control // len(head)}% control bytes)"
    return ""


def utf16_shaped(data: bytes) -> bool:
    """Whether ``data`` looks like UTF-16 text even where its byte pairs slip
    (a byte lost or added at line ends): about every other byte NUL, the NULs
    alone, and the other bytes text.

    >>> utf16_shaped("Magic rules\\r\\n".encode("utf-16-le")), utf16_shaped(b"a\\x00\\x00\\x00\\x00b")
    (True, False)
    """
    if len(data) < 8:
        return False
    nul = data.count(0)
    if not 0.3 * len(data) <= nul <= 0.6 * len(data) or data.count(b"\x00\x00") > 0.02 * nul:
        return False
    others = data.replace(b"\x00", b"")
    texty = sum(others.count(bytes([b])) for b in (*range(9, 14), *range(32, 127), 0x13, 0x14, 0x18, 0x19,
                                                   0x1C, 0x1D, 0x20, 0x22, 0x26))
    return texty >= 0.9 * len(others)


def to_text(data: bytes) -> tuple[str, str, str, list[tuple[int, str]]]:
    """Decode ``data``: (text, encoding name, evidence, flags for particular lines)."""
    if data.startswith(MANGLED_BOM) and utf16_shaped(data[len(MANGLED_BOM):len(MANGLED_BOM) + 65536]):
        evidence = "BOM mangled to EF BF BD EF BF BD (U+FFFD twice, a UTF-8 round trip); NUL in every other byte"
        undone = round_trip_undone(data[len(MANGLED_BOM):])
        if undone is None:
            text, enc, slips = _utf16(data[len(MANGLED_BOM):])
            return text, enc, evidence, [(1, "bom_repaired"), *((n, "utf16_realigned") for n in slips)]
        text, enc = undone
        text, restored = restore_names(text, enc)
        lost = [m.start() for m in re.finditer("\ufffd", text)]
        if lost or restored:
            evidence += (f"; {len(lost) + len(restored)} characters lost in it (U+FFFD), "
                         f"{len(restored)} restored in card names")
        starts = [m.end() for m in _NEWLINES.finditer(text)]
        flags = [(1, "bom_repaired")]
        flags += [(n, "name_restored") for n in sorted({1 + bisect_right(starts, i) for i in restored})]
        flags += [(n, "chars_lost") for n in sorted({1 + bisect_right(starts, i) for i in lost})]
        return text, enc, evidence, flags
    for bom, enc in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            body = data[len(bom) :]
            name = enc + "+bom" if "16" in enc else enc
            try:
                return body.decode(enc.replace("-sig", "")), name, "BOM", []
            except UnicodeDecodeError as exc:
                if "16" in enc:
                    raise DecodeError(f"{enc} BOM but invalid {enc} at byte {exc.start + len(bom)}") from exc
                text, _, evidence, odd = _decode_mixed(body)
                return text, name + "+" + evidence.split()[-1], "BOM; " + evidence, odd
    utf16 = _utf16_without_bom(data)
    if utf16:
        try:
            return data.decode(utf16), utf16, "NUL in every other byte, no BOM", []
        except UnicodeDecodeError:
            pass
    if utf16_shaped(data[:65536]):
        text, enc, slips = _utf16(data)
        return text, enc, "NUL in every other byte, no BOM, byte pairs slipping", [
            (n, "utf16_realigned") for n in slips]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return text, "ascii" if text.isascii() else "utf-8", "valid UTF-8", []
    if utf8_pair(data):
        return _decode_mixed(data)
    enc, evidence = choose_single_byte(data)
    return data.decode(enc), enc, evidence, []


def utf8_pair(data: bytes) -> bool:
    """Whether ``data`` holds a byte C2-F4 followed by one 80-BF (what a UTF-8
    sequence starts with): ``re.search(rb"[\\xc2-\\xf4][\\x80-\\xbf]", data)``, in
    arrays (a pattern's scan is slow over a file that holds none).

    >>> utf8_pair("Dandân".encode()), utf8_pair("Dandân".encode("cp1252")), utf8_pair(b"\\xc2")
    (True, False, False)
    """
    a = np.frombuffer(data, dtype=np.uint8)
    step = 1 << 22  # in slices, so that the masks stay small whatever the file's size
    for start in range(0, max(0, len(a) - 1), step):
        lead, follow = a[start:start + step], a[start + 1:start + step + 1]
        lead = lead[:len(follow)]
        if np.any((lead >= 0xC2) & (lead <= 0xF4) & (follow >= 0x80) & (follow <= 0xBF)):
            return True
    return False


def round_trip_undone(data: bytes) -> tuple[str, str] | None:
    r"""UTF-16 text (no BOM) that went through a UTF-8 round trip, read back:
    (text, encoding), each character that lost a byte in the trip U+FFFD; None
    when the trip cannot be undone whole (its byte pairs slip).

    The trip turned each byte that was not UTF-8 (a byte of 0x80 or more, as
    the low byte of a Latin letter: ``â`` is E2 00 in UTF-16 LE) into U+FFFD,
    three bytes, EF BF BD: read as UTF-16 as they are, they make a Hangul
    syllable and another character (``Dand뿯½n``). Each EF BF BD is one byte
    lost; the bytes around it are as they were.

    >>> mangled = "Dandân, ‘Juzám’\r\n".encode("utf-16-le").decode("utf-8", "replace").encode()
    >>> mangled.decode("utf-16-le")
    'Dand뿯½n, ‘Juz뿯½m’\r\n'
    >>> text, enc = round_trip_undone(mangled)
    >>> text.replace("\ufffd", "?"), enc
    ('Dand?n, ‘Juz?m’\r\n', 'utf-16-le')
    """
    pieces = data.split(_FFFD_UTF8)
    lost: list[int] = []  # offsets of the lost bytes in the data as it was
    size = 0
    for piece in pieces[:-1]:
        size += len(piece)
        lost.append(size)
        size += 1
    if (size + len(pieces[-1])) % 2:
        return None
    first = data.split(b"\n", 1)[0]
    enc = "utf-16-be" if first[0::2].count(0) > first[1::2].count(0) else "utf-16-le"
    restored = b"\x80".join(pieces)  # a stand-in byte for each lost one: its character is replaced whole
    parts, start = [], 0
    for unit in sorted({offset // 2 for offset in lost}):
        parts += [restored[start:2 * unit].decode(enc, errors="replace"), "\ufffd"]
        start = 2 * unit + 2
    parts.append(restored[start:].decode(enc, errors="replace"))
    text = "".join(parts)
    return None if _slipped(text) else (text, enc)


_FFFD_UTF8 = "\ufffd".encode()


@lru_cache(maxsize=4)
def _lost_names(enc: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """Each known accented name as ``round_trip_undone`` reads it after the trip
    in ``enc`` (``Dand`` U+FFFD ``n``), when that is one name's alone: a pattern that
    finds them at the start of a word, and the name each stands for."""
    seen: dict[str, set[str]] = {}
    for name in accented_names():
        mangled = name.encode(enc).decode("utf-8", "replace").encode()
        undone = round_trip_undone(mangled)
        if undone and "\ufffd" in undone[0]:
            seen.setdefault(undone[0], set()).add(name)
    names = {lost: next(iter(found)) for lost, found in seen.items() if len(found) == 1}
    if not names:
        return None, names
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + ")")
    return pattern, names


def restore_names(text: str, enc: str) -> tuple[str, list[int]]:
    r"""Known card names whose accented letters a UTF-8 round trip of UTF-16 text
    in ``enc`` lost (U+FFFD) written again: (text, offsets of the letters put back).

    >>> text, restored = restore_names("Dand\ufffdn, El-Hajj\ufffdj and Gathering\ufffd", "utf-16-le")
    >>> text.replace("\ufffd", "?"), restored
    ('Dandân, El-Hajjâj and Gathering?', [4, 15])
    """
    pattern, names = _lost_names(enc)
    if pattern is None or "\ufffd" not in text:
        return text, []
    restored: list[int] = []

    def put_back(m: re.Match[str]) -> str:
        name = names[m.group()]
        restored.extend(m.start() + i for i, ch in enumerate(m.group()) if ch == "\ufffd" and name[i] != ch)
        return name

    text = pattern.sub(put_back, text)
    return text, restored


def _utf16(data: bytes) -> tuple[str, str, list[int]]:
    """UTF-16 whose byte pairs may slip at line ends (a byte added or lost around
    a line break): (text, encoding, lines where a stray byte was dropped).

    Each stretch between newline bytes is read with the alignment that puts its
    NUL bytes where UTF-16 has them; a byte left over is dropped.

    >>> _utf16("ab\\r\\ncd\\r\\n".encode("utf-16-le").replace(b"\\r\\x00\\n", b"\\r\\x00\\r\\n"))
    ('ab\\r\\ncd\\r\\n', 'utf-16-le', [1, 2])
    """
    first = data.split(b"\n", 1)[0]
    big_endian = first[0::2].count(0) > first[1::2].count(0)
    enc = "utf-16-be" if big_endian else "utf-16-le"
    if len(data) % 2 == 0:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            text = ""
        if text and not _slipped(text):
            return text, enc, []
    parts: list[str] = []
    slips: list[int] = []  # character offsets of stretches with a stray byte
    size = 0
    for piece in data.split(b"\n"):
        if parts:
            parts.append("\n")
            size += 1
        # NULs on the wrong side of the pairs: the stretch starts one byte late.
        nul_even, nul_odd = piece[0::2].count(0), piece[1::2].count(0)
        start = 1 if (nul_odd > nul_even if big_endian else nul_even > nul_odd) else 0
        usable = piece[start:]
        if len(usable) % 2:
            usable = usable[:-1]
            slips.append(size)
        text = usable.decode(enc, errors="replace")
        parts.append(text)
        size += len(text)
    text = "".join(parts)
    starts = [m.end() for m in _NEWLINES.finditer(text)]
    return text, enc, sorted({1 + bisect_right(starts, offset) for offset in slips})


def _slipped(text: str) -> bool:
    """UTF-16 read out of step somewhere: ASCII comes out as code units ending in a
    zero byte (``Ma`` as U+4D00 U+6100), a line break as U+0A0D or U+0D00.

    >>> _slipped("Magic\\r\\n"), _slipped("\\u4d00\\u6100\\u6700"), _slipped("rules\\r\\u0a0d\\u0d00\\n")
    (False, True, True)
    """
    odd = sum(1 for ch in text if (ord(ch) >= 0x100 and not ord(ch) & 0xFF) or ch in "\u0a0d\u0d0a")
    return odd > 0


def drop_controls(line: str) -> str:
    """Drop C0 control characters; a run of NULs padding two words apart becomes a space.

    >>> drop_controls("Entwine\\x00\\x00\\x00is a\\x00 static\\x07 ability.")
    'Entwine is a static ability.'
    """
    return CONTROL.sub("", _NUL_BETWEEN.sub(" ", line))


def drop_control_lines(text: str, flags: list[tuple[int, str]]) -> str:
    """``drop_controls`` on each line of ``text`` that holds a control character,
    each such line flagged ``control_chars_removed`` in ``flags``."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if CONTROL.search(line):
            lines[i] = drop_controls(line)
            flags.append((i + 1, "control_chars_removed"))
    return "\n".join(lines)


_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])  # what CONTROL matches


def _has_control_bytes(data: bytes) -> bool:
    return len(data.translate(None, _CONTROL_BYTES)) != len(data)


def _ascii_compatible(encoding: str) -> bool:
    """Whether every byte below 0x80 decodes, in ``encoding`` as ``to_text`` names it,
    to the ASCII character it codes (all but UTF-16)."""
    return "16" not in encoding


def fold_spaces(text: str) -> str:
    """Fold non-breaking and other odd spaces to a plain space; drop invisible ones.

    >>> fold_spaces("a\\u00a0b\\u200bc")
    'a bc'
    """
    return _INVISIBLE.sub("", _ODD_SPACES.sub(" ", text))


def _repair(line: str) -> tuple[str, bool]:
    """A line that is not ASCII as ``decode`` leaves it: mojibake repaired (and
    whether it was), odd spaces folded."""
    # Odd and invisible spaces are suspect too: other lines need nothing.
    if not SUSPECT.search(line):
        return line, False
    fixed = False
    if is_bad(line):
        repaired = ftfy.fix_text(line, FTFY)
        if repaired != line and "\n" not in repaired:
            line, fixed = repaired, True
    return fold_spaces(line), fixed


# Line -> ``_repair(line)``, for the lines already repaired in this process: the
# repair depends on the line alone, and releases repeat most of their lines
# (the check for mojibake is a pattern's scan of each line, and ftfy's).
_REPAIRS: dict[str, tuple[str, bool]] = {}
_REPAIRS_MAX = 200_000


def forget() -> None:
    """Forget the lines repaired in this process: the next ones are repaired afresh."""
    _REPAIRS.clear()


def remembered(line: str) -> tuple[str, bool] | None:
    """What this process repaired ``line`` into, and whether that changed it, if it did."""
    return _REPAIRS.get(line)


def decode(data: bytes) -> Decoded:
    """Decode raw bytes into normalised text, recording encoding, newlines and repairs."""
    lines, decoded = decode_lines(data)
    return replace(decoded, text="\n".join(lines))


def decode_lines(data: bytes) -> tuple[list[str], Decoded]:
    """``decode``, its text as its lines (``text.split("\n")``: what the parser
    reads), and how it was read (its ``text`` left empty): most texts are
    split here already, to repair the lines that are not ASCII, and are not
    joined only to be split again."""
    text, encoding, evidence, flags = to_text(data)
    if "\r" in text:
        newline = newline_style(data if _ascii_compatible(encoding) else text)
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # what _NEWLINES.sub does, faster
    else:
        newline = "LF" if "\n" in text else "none"
    html = markup.is_html(text)
    if html:
        # Line numbers now count the page's lines of text, not its lines of markup.
        text = markup.html_to_text(text)
        flags = [(1, flag) for _, flag in flags] + [(n, "html_stripped") for n in range(1, text.count("\n") + 2)]
    # In the encodings read other than UTF-16, a byte below 0x80 is the ASCII
    # character it codes: control characters are then found in the bytes, which
    # ``bytes.translate`` scans several times faster than a pattern scans text
    # (a web page's text, with its character references resolved, is not its bytes).
    if (_has_control_bytes(data) if _ascii_compatible(encoding) and not html else CONTROL.search(text)):
        text = drop_control_lines(text, flags)
    lines = text.split("\n")
    if not text.isascii():
        # Line by line: most lines are ASCII, which ``str.isascii`` tells at once,
        # where a pattern would scan every character of the text.
        if len(_REPAIRS) > _REPAIRS_MAX:
            forget()
        # The lines that are not ASCII, found by C loops (most lines are ASCII).
        for i in compress(counting(), map(not_, map(str.isascii, lines))):
            line = lines[i]
            done = _REPAIRS.get(line)
            if done is None:
                done = _REPAIRS[line] = _repair(line)
            if done[1]:
                flags.append((i + 1, "encoding_fixed"))
            lines[i] = done[0]
    return lines, Decoded("", encoding, newline, evidence, tuple(sorted(flags)))
