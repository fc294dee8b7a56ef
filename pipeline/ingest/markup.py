"""Web pages saved as they were served: markup to lines of text.

A rules page saved as HTML, perhaps on one line
(``<h2>Entwine</h2><p>702.42a Entwine is ...</p>``), says what the same page
as text would: each heading, paragraph, list item or table row becomes a line,
scripts and styles go, character references are read. The standard library's
HTML parser does the reading (it copes with the broken markup scrapers save);
nothing here is a regular expression over tags except the test for whether a
text is a web page at all.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Elements that start a line of their own.
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol",
    "p", "pre", "section", "table", "tbody", "td", "th", "thead", "title", "tr", "ul",
})
# Elements whose content is not text of the page.
_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object"})
_KNOWN = "|".join(sorted(_BLOCKS | _HIDDEN | {"html", "head", "body", "span", "a", "b", "i", "em", "strong", "meta"}))
_TAG = re.compile(rf"</?(?:{_KNOWN})\b[^<>]*>", re.I)
_CLOSING = re.compile(rf"</(?:{_KNOWN})\s*>|<!doctype\s+html", re.I)
_SPACE = re.compile(r"[ \t\r\n\f\v]+")


def is_html(text: str) -> bool:
    """Whether ``text`` is a web page: HTML tags, closed, not the odd ``<www.wizards.com>``.

    >>> is_html("<h2>Entwine</h2><p>702.42a Entwine is a static ability.</p>")
    True
    >>> is_html("See the website at <www.wizards.com>. Use <card name> here.")
    False
    """
    sample = text[:200_000]
    return len(_TAG.findall(sample, 0, 200_000)) >= 2 and _CLOSING.search(sample) is not None


class _Lines(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.hidden = 0
        self.pre = 0

    def _break(self) -> None:
        line = "".join(self.current)
        if self.pre:
            self.lines.extend(ln.rstrip() for ln in line.split("\n"))
        else:
            self.lines.append(_SPACE.sub(" ", line).strip())
        self.current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self._break()
            self.pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self._break()
            self.pre = max(0, self.pre - (tag == "pre"))

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.current.append(data)


def html_to_text(text: str) -> str:
    """The lines a browser would show, one per block, blank lines dropped.

    >>> print(html_to_text("<h2>Entwine</h2><p>702.42a Entwine is a <i>static</i>&nbsp;ability.</p>"))
    Entwine
    702.42a Entwine is a static\xa0ability.
    """
    parser = _Lines()
    parser.feed(text)
    parser.close()
    parser._break()
    return "\n".join(line for line in parser.lines if line.strip())
