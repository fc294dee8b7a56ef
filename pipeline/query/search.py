"""Full-text search of a published ``rules.sqlite``: rules, glossary and Q&A.

The index (``search``, FTS5) and ``search_in`` are built by
``pipeline.publish.sqlite``; this module only reads them. A search lists the
current rules first, then the current glossary, then older wordings and Q&A;
``release`` searches one source's own wordings. A query that is a number lists
the rules of that number first, as the source numbered them.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pipeline.errors import SearchError
from pipeline.numbers import RULE_NUMBER
from pipeline.numbers import normalise as normalise_number
from pipeline.query.dataset import cited_number, ending

__all__ = ["Hit", "SearchError", "fts_query", "number_query", "plain", "search"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One wording that matches: a rule (by its canonical number), glossary entry or Q&A."""

    kind: str  # rule, glossary, qa
    number: str  # canonical number (a Q&A's: its section); empty if unmapped
    number_as_written: str  # as source_id numbers it
    title: str  # a rule's section title, a glossary term, a Q&A's question
    snippet: str  # the matching words [bracketed]; a rule a number query found: its first words
    text: str  # the whole wording (a Q&A's answer)
    source_id: str  # the reference for a current wording, else the newest source with it
    current: bool  # the reference has this wording
    ended: str = ""  # a rule in no current release: removed or merged (where: merged_into); "" if unmapped
    merged_into: str = ""  # the current number its content stands under, for a rule merged away


def plain(text: str) -> str:
    """A query as the index reads text: compatibility forms composed (a
    decomposed "Dandân", full-width letters, the "ﬁ" ligature), zero-width
    characters dropped.

    >>> plain("Danda\u0302n ＥＮＴＷＩＮＥ \ufb01rst stri\u200bke")
    'Dandân ENTWINE first strike'
    """
    return unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)


_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def fts_query(text: str) -> str:
    """Words of a plain query, each quoted, so FTS syntax characters are harmless
    (joined by AND: FTS5 takes no implicit AND next to a parenthesised OR);
    a word ending in ``*`` matches as a prefix. A word with "ae" or "æ" matches
    either spelling (the index strips accents but keeps the ligature: releases
    wrote "Æther" until 2017, "AEther" in ASCII copies, "Aether" since).

    >>> fts_query('double strike')
    '"double" AND "strike"'
    >>> fts_query('umbr* "armor')
    '"umbr"* AND "armor"'
    >>> fts_query('Æther vial*')
    '("æther" OR "aether") AND "vial"*'
    """
    return " AND ".join(_either(w, star) for w, star in _WORD.findall(text))


_WORD = re.compile(r"([\w’'-]*\w[\w’'-]*)(\*?)")


def _either(word: str, star: str) -> str:
    """One word of a query, quoted, and its other spelling ("ae" for "æ") if it has one."""
    spellings = [word]
    if "æ" in word.lower() or "ae" in word.lower():
        spellings = list(dict.fromkeys([word.lower().replace("ae", "æ"), word.lower().replace("æ", "ae")]))
    quoted = [f'"{w.replace(chr(34), chr(34) * 2)}"{star}' for w in spellings]
    return quoted[0] if len(quoted) == 1 else f"({' OR '.join(quoted)})"


MAX_QUERY_WORDS = 64
_TITLED = "search.rowid IN (SELECT rowid FROM search WHERE search MATCH :titled)"  # the title has every word
_BEST = "bm25(search, 1.0, 1.0, 4.0, 1.0), search.rowid"


def _order(lead: str, then: str = "") -> str:
    """The rules that ``lead`` selects first: those of a section whose title has
    every word of the query in document order (so 702.42a "Entwine is ..." leads
    for ``entwine``), then the others by score; then the rest, by ``then`` and score."""
    rule = f"({lead}) AND kind = 'rule'"
    return f"{rule} DESC, {rule} AND {_TITLED} DESC, CASE WHEN {rule} AND {_TITLED} THEN pos END, {then}{_BEST}"


def number_query(text: str) -> str:
    """The rule or section number a query is (as ``resolve`` reads a citation:
    ``CR 702.42A``, ``rule 702. 37a``, ``702.``, 1999's ``408.f``), or "".

    >>> number_query("CR 702.42A"), number_query("702."), number_query("rule 702. 37a"), number_query("408.f")
    ('702.42a', '702', '702.37a', '408.f')
    >>> number_query("702.42 entwine"), number_query("٧٠٢.٤٢"), number_query("1000")
    ('', '', '')
    """
    number = cited_number(text)
    return number if number.isascii() and re.fullmatch(RULE_NUMBER, number) else ""


def search(path: Path, text: str, limit: int = 20, release: str | None = None) -> list[Hit]:
    """Wordings matching every word of ``text``: the current rules first, then the
    current glossary, then older wordings and Q&A. A query that is a number
    (``702.42``, ``CR 702.42a``) lists first the rules of that number and under
    it, in rule order: the current ones, or with ``release`` that source's own
    (an old number means something else in each release: ``resolve`` maps it);
    then what the words match (the glossary's "see rule 702.42", "100 cards").

    With ``release``, only that source's wordings, numbered as it numbers them,
    its rules first. Raises SearchError for a release the database does not have.
    """
    text = plain(text)
    query = fts_query(text)
    if not query:
        return []
    words = len(_WORD.findall(text))
    if words > MAX_QUERY_WORDS:  # the index's time grows with the square of the words (4,000: half a minute)
        raise SearchError(f"a query of {words} words: at most {MAX_QUERY_WORDS}, every one of which must match")
    snippet = "snippet(search, 3, '[', ']', '…', 16)"
    con = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True)
    try:
        if release is not None and not con.execute("SELECT 1 FROM sources WHERE source_id = ?", (release,)).fetchone():
            known = [r[0] for r in con.execute("SELECT source_id FROM sources ORDER BY source_id")]
            raise SearchError(f"no source {release!r} in {path}; sources: {', '.join(known)}")
        number = number_query(text)
        rows = _numbered(con, number, limit, release) if number else []
        if number:  # then the texts that cite it: the number's parts in a row, in a text ("702.2", not "2/2")
            query = 'text : "' + " ".join(re.findall(r"[0-9a-z]+", number)) + '"'
        titled = f"title : ({query.removeprefix('text : ')})"
        if release is None:
            rows += con.execute(
                f"SELECT kind, number, number_as_written, title, {snippet}, text, source_id, current, position AS pos "
                f"FROM search WHERE search MATCH :query ORDER BY {_order('current', 'current DESC, ')} LIMIT :limit",
                {"query": query, "titled": titled, "limit": limit},
            ).fetchall()
        else:
            mine = "FROM search_in m WHERE m.entry = search.rowid AND m.source_id = :release"
            rows += con.execute(
                f"SELECT kind, number, (SELECT min(m.number_as_written) {mine}), title, {snippet}, text, "
                f":release, current, (SELECT min(m.element) {mine}) AS pos FROM search WHERE search MATCH :query "
                "AND search.rowid IN (SELECT entry FROM search_in WHERE source_id = :release) "
                f"ORDER BY {_order('1')} LIMIT :limit",
                {"release": release, "query": query, "titled": titled, "limit": limit},
            ).fetchall()
        # A rule the number found comes once (the words may find it again, with a snippet).
        hits: dict[tuple[object, ...], Hit] = {}
        for kind, number, written, title, snip, text_, source, current, _ in rows:
            hits.setdefault((kind, number, written, source, text_),
                            Hit(kind, number, written or "", title, snip, text_, source, bool(current)))
        return [_ended(con, hit) for hit in list(hits.values())[:limit]]
    except sqlite3.OperationalError as exc:
        if path.stat().st_size == 0:  # SQLite reads an empty file as an empty database
            raise sqlite3.DatabaseError("an empty file") from None
        raise SearchError(f"{path}: {exc} (a database from another version? run `python -m pipeline ingest`)") from None
    finally:
        con.close()


def _ended(con: sqlite3.Connection, hit: Hit) -> Hit:
    """A rule hit with no current number, told how its lineage ended and where its
    content is now (``dataset.ending``); one the pipeline never mapped stays as it is."""
    if hit.kind != "rule" or hit.number:
        return hit
    row = con.execute("SELECT lineage_id FROM renumber_map WHERE source_id = ? AND number_as_written = ?",
                      (hit.source_id, hit.number_as_written)).fetchone()
    if not row or not row[0]:
        return hit

    def lineage(lid: str) -> dict[str, str] | None:
        found = con.execute("SELECT ended, ended_in, merged_into, canonical_number FROM lineages "
                            "WHERE lineage_id = ?", (lid,)).fetchone()
        return dict(zip(("ended", "ended_in", "merged_into", "canonical_number"),
                        ("" if v is None else str(v) for v in found), strict=True)) if found else None

    ended, _, into = ending(row[0], lineage)
    return replace(hit, ended=ended, merged_into=into)


def _numbered(con: sqlite3.Connection, number: str, limit: int, release: str | None) -> list[Any]:
    """The rules numbered ``number`` or lettered under it (702.42a under 702.42,
    702.1 under 702), in rule order: the current ones, or ``release``'s own (as
    it wrote them: cr-2009-07-11's "702. 37a" is 702.37a)."""
    def under(found: str) -> bool:
        if found == number:
            return True
        if "." not in number:  # a section: its rules
            return found.startswith(number + ".")
        return found.startswith(number) and found[len(number):].isalpha()  # a rule: its lettered subrules

    if release is None:
        rows = con.execute(
            "SELECT kind, number, number_as_written, title, text, text, source_id, current, position FROM search "
            "WHERE kind = 'rule' AND current AND number LIKE :prefix ORDER BY position",
            {"prefix": number.split(".")[0] + "%"}).fetchall()
        rows = [row for row in rows if under(str(row[1]))]
    else:
        rows = con.execute(
            "SELECT s.kind, s.number, m.number_as_written, s.title, s.text, s.text, m.source_id, s.current, "
            "m.element FROM search_in m JOIN search s ON s.rowid = m.entry WHERE m.source_id = :release "
            "AND s.kind = 'rule' AND m.number_as_written LIKE :prefix ORDER BY m.element",
            {"release": release, "prefix": number.split(".")[0] + "%"}).fetchall()
        rows = [row for row in rows if under(normalise_number(str(row[2])))]
    return [(*row[:4], _lead(str(row[4])), *row[5:]) for row in rows[:limit]]


def _lead(text: str, words: int = 16) -> str:
    """A wording's first words, as a snippet shows them."""
    split = text.split()
    return " ".join(split[:words]) + ("…" if len(split) > words else "")
