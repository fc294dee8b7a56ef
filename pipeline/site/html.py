"""Source text as HTML: escaped, with its cross-references as links, and word diffs.

Everything taken from a source goes through ``markupsafe.escape``; the only
markup added is the links and the ``<del>``/``<ins>`` of a diff.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from markupsafe import Markup, escape

from pipeline.changes import word_ops
from pipeline.text import fold

_SPECIAL = re.compile(r"[&<>'\"]")


def _esc(text: str) -> str:
    """``markupsafe.escape`` as a plain string, without a ``Markup`` per call (a release page
    makes hundreds of thousands): the same entities.

    >>> _esc("<a href='x'>&</a>") == str(escape("<a href='x'>&</a>")), _esc('"'), _esc("plain")
    (True, '&#34;', 'plain')
    """
    if not _SPECIAL.search(text):
        return text
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")
            .replace('"', "&#34;"))


# A resolver takes (target in the source's numbering, its canonical number) to an href, or None.
Resolver = Callable[[str, str], "str | None"]

_RANGE = re.compile(r"(.+?)(\s?[-–—]\s?)(.+)")


def _link(label: str, href: str | None, target: str) -> str:
    if href is None:
        return f'<span class="xref missing" title="no rule {_esc(target)} to link to">{_esc(label)}</span>'
    return f'<a class="xref" href="{_esc(href)}">{_esc(label)}</a>'


def _spans(text: str, written: Sequence[str]) -> list[tuple[int, int, str]]:
    """Where each cross-reference as written occurs, longest first, never inside a longer number."""
    taken: list[tuple[int, int, str]] = []
    for w in sorted(set(written), key=len, reverse=True):
        start = text.find(w)
        while start >= 0:
            end = start + len(w)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if not (before.isdigit() or before == "." or after.isalnum()) and all(
                end <= s or start >= e for s, e, _ in taken
            ):
                taken.append((start, end, w))
            start = text.find(w, end)
    return sorted(taken)


_WORDS = re.compile(r"\w+")


# A web address ("www.wizards.com/default.asp?x=magic"): no glossary term is linked inside one.
_IN_ADDRESS = re.compile(r"/|www\.|@")


def _token(text: str, start: int, end: int) -> str:
    """The run of non-blank characters around ``text[start:end]``."""
    left = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
    right = min((i for i in (text.find(" ", end), text.find("\n", end)) if i >= 0), default=len(text))
    return text[left:right]


def term_key(text: str) -> str:
    """A glossary term as matched in rule text: quote style, spacing and case folded."""
    return fold(text).casefold()


class TermIndex:
    """Every glossary term of a dataset, and where each occurs in a text: worked out once
    per distinct wording (the releases share most of theirs) for all glossaries at once;
    each glossary's ``Terms`` then picks its own."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.by_word: dict[str, list[tuple[int, tuple[str, ...], str]]] = {}
        for term in dict.fromkeys(terms):
            key = term_key(term)
            words = tuple(_WORDS.findall(key))
            if words and any(not w.isdigit() for w in words):
                self.by_word.setdefault(words[0], []).append((len(words), words, key))
        for found in self.by_word.values():
            found.sort(key=lambda t: -t[0])
        self._memo: dict[str, tuple[tuple[int, int, str], ...]] = {}

    def matches(self, text: str) -> tuple[tuple[int, int, str], ...]:
        """(start, end, term key) of every whole-word occurrence of every term, by start,
        the longest term first where several start at one word."""
        found = self._memo.get(text)
        if found is not None:
            return found
        words = list(_WORDS.finditer(text))
        low = [w.group().casefold() for w in words]
        out: list[tuple[int, int, str]] = []
        for i, word in enumerate(low):
            for count, term, key in self.by_word.get(word, ()):
                start, end = words[i].start(), words[i + count - 1].end() if i + count <= len(words) else 0
                if (end and tuple(low[i:i + count]) == term and term_key(text[start:end]) == key
                        and not _IN_ADDRESS.search(_token(text, start, end))):
                    out.append((start, end, key))
        self._memo[text] = found = tuple(out)
        return found


class Terms:
    """The glossary terms a page links rule text to: each term's first occurrence in
    a rule, whole words only (``Tap`` is not in ``Tapped``), the longest term where
    two start at the same word, case, quote style and spacing folded.

    >>> terms = Terms([("Active Player", "#G-active-player"), ("Player", "#G-player")])
    >>> terms.spans("The active player's turn; each player, a player.")
    [(4, 17, '#G-active-player'), (31, 37, '#G-player')]
    """

    def __init__(self, entries: Sequence[tuple[str, str]], index: TermIndex | None = None) -> None:
        self.index = index or TermIndex([term for term, _ in entries])
        self.href: dict[str, str] = {}
        for term, href in entries:
            self.href.setdefault(term_key(term), href)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, href) of each term's first whole-word occurrence in ``text``, in order."""
        out: list[tuple[int, int, str]] = []
        seen: set[str] = set()
        skip_to = 0
        for start, end, term in self.index.matches(text):
            href = self.href.get(term)
            if href is None or start < skip_to:
                continue
            skip_to = end  # a shorter term inside a longer one is no occurrence of its own
            if href not in seen:
                seen.add(href)
                out.append((start, end, href))
        return out


def linkify(text: str, refs: Sequence[tuple[str, str, str]], resolve: Resolver, terms: Terms | None = None) -> Markup:
    """``text`` escaped, each cross-reference a link (a range links its first and last rule),
    and with ``terms``, the first occurrence of each glossary term a link to its entry.

    >>> refs = [("601.2e-g", "601.2e", ""), ("601.2e-g", "601.2f", ""), ("601.2e-g", "601.2g", "")]
    >>> str(linkify("see rules 601.2e-g & more", refs, lambda t, c: "#" + t))
    'see rules <a class="xref" href="#601.2e">601.2e</a>-<a class="xref" href="#601.2g">g</a> &amp; more'
    >>> str(linkify("a Token", [], lambda t, c: None, Terms([("token", "#G-token")])))
    'a <a class="term" href="#G-token">Token</a>'
    """
    glossary = terms.spans(text) if terms is not None else ()
    if not refs and not glossary:
        return escape(text)
    targets: dict[str, list[tuple[str, str]]] = {}
    for written, target, canonical in refs:
        targets.setdefault(written, []).append((target, canonical))
    spans: list[tuple[int, int, str, str]] = [(s, e, "xref", w) for s, e, w in _spans(text, list(targets))]
    spans += [(s, e, "term", href) for s, e, href in glossary
              if all(e <= s2 or s >= e2 for s2, e2, _, _ in spans)]
    out, pos = [], 0
    for start, end, kind, what in sorted(spans):
        out.append(_esc(text[pos:start]))
        if kind == "term":
            out.append(f'<a class="term" href="{_esc(what)}">{_esc(text[start:end])}</a>')
            pos = end
            continue
        found = targets[what]
        ranged = _RANGE.fullmatch(what) if len(found) > 1 else None
        if ranged:
            first, dash, last = ranged.groups()
            out.append(_link(first, resolve(*found[0]), found[0][0]) + _esc(dash)
                       + _link(last, resolve(*found[-1]), found[-1][0]))
        else:
            out.append(_link(what, resolve(*found[0]), found[0][0]))
        pos = end
    out.append(_esc(text[pos:]))
    return Markup("".join(out))


@lru_cache(maxsize=65_536)
def diff_html(old: str, new: str) -> Markup:
    """A word diff as HTML.

    >>> str(diff_html("Totem armor <x>", "Umbra armor <x>"))
    '<del>Totem</del> <ins>Umbra</ins> armor &lt;x&gt;'
    """
    tags = {"=": "{}", "-": "<del>{}</del>", "+": "<ins>{}</ins>"}
    return Markup(" ".join(tags[op].format(escape(words)) for op, words in word_ops(old, new)))


def script_json(value: object) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``</script>`` can close it).

    >>> script_json({"t": "</script>"})
    '{"t":"\\\\u003c/script>"}'
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
