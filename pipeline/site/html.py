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

# A resolver takes (target in the source's numbering, its canonical number) to an href, or None.
Resolver = Callable[[str, str], "str | None"]

_RANGE = re.compile(r"(.+?)(\s?[-–—]\s?)(.+)")


def _link(label: str, href: str | None, target: str) -> str:
    if href is None:
        return f'<span class="xref missing" title="no rule {escape(target)} to link to">{escape(label)}</span>'
    return f'<a class="xref" href="{escape(href)}">{escape(label)}</a>'


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


def linkify(text: str, refs: Sequence[tuple[str, str, str]], resolve: Resolver) -> Markup:
    """``text`` escaped, each cross-reference a link (a range links its first and last rule).

    >>> refs = [("601.2e-g", "601.2e", ""), ("601.2e-g", "601.2f", ""), ("601.2e-g", "601.2g", "")]
    >>> str(linkify("see rules 601.2e-g & more", refs, lambda t, c: "#" + t))
    'see rules <a class="xref" href="#601.2e">601.2e</a>-<a class="xref" href="#601.2g">g</a> &amp; more'
    """
    if not refs:
        return escape(text)
    targets: dict[str, list[tuple[str, str]]] = {}
    for written, target, canonical in refs:
        targets.setdefault(written, []).append((target, canonical))
    out, pos = [], 0
    for start, end, written in _spans(text, list(targets)):
        out.append(str(escape(text[pos:start])))
        found = targets[written]
        ranged = _RANGE.fullmatch(written) if len(found) > 1 else None
        if ranged:
            first, dash, last = ranged.groups()
            out.append(_link(first, resolve(*found[0]), found[0][0]) + str(escape(dash))
                       + _link(last, resolve(*found[-1]), found[-1][0]))
        else:
            out.append(_link(written, resolve(*found[0]), found[0][0]))
        pos = end
    out.append(str(escape(text[pos:])))
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
