"""Text to paragraphs of typed lines, with the Lark grammar in ``grammars/dump.lark``.

The grammar only says what each line looks like and which lines stand together
without a blank line between them; ``pipeline.assemble`` gives them meaning.

Two ways to run it, with the same result (a property test holds them equal):
``parse_with_lark`` is Lark's LALR parser on the grammar; ``parse``, the hot
path, compiles the grammar's line terminals into one regular expression, in
the order and with the priorities Lark's own lexer uses, and applies it line by
line. The grammar is line-oriented (each line is one token, blank lines
separate paragraphs), so that is the whole of what the parser does, and it
runs about ten times faster than feeding every token through the LALR machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

# The parser reads "\n\n" + text + "\n\n"; its line numbers are this much ahead.
_PAD = "\n\n"
_SHIFT = 2


@dataclass(frozen=True, slots=True)
class Line:
    """One non-blank source line and the terminal that matched it."""

    kind: str
    lineno: int
    text: str


Paragraph = tuple[Line, ...]


class ParseError(ValueError):
    """A source could not be parsed; names the file, line and column."""

    def __init__(self, source: str, line: int, column: int, context: str) -> None:
        super().__init__(f"{source}:{line}:{column}: cannot parse near {context!r}")
        self.source, self.line, self.column, self.context = source, line, column, context


class _ToParagraphs(Transformer[Token, list[Paragraph]]):
    """Reshape the tree into tuples of Line; no decisions are made here."""

    def start(self, children: list[Paragraph]) -> list[Paragraph]:
        return children

    def paragraph(self, tokens: list[Token]) -> Paragraph:
        return tuple(Line(t.type, (t.line or 0) - _SHIFT, str(t)) for t in tokens)


@lru_cache(maxsize=1)
def parser() -> Lark:
    """The LALR parser, built once per process (and cached on disk by Lark)."""
    return Lark.open(
        "../grammars/dump.lark",
        rel_to=__file__,
        parser="lalr",
        lexer="contextual",
        transformer=_ToParagraphs(),
        propagate_positions=True,
        cache=True,
    )


@lru_cache(maxsize=1)
def line_pattern() -> re.Pattern[str]:
    """The grammar's line terminals as one pattern, tried in Lark's lexer order."""
    lark = parser()
    terminals = [t for t in lark.terminals if not t.name.startswith("_")]
    terminals.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    alternatives = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terminals)
    return re.compile(alternatives, lark.lexer_conf.g_regex_flags)


def _blank(line: str) -> bool:
    """A blank line, as the grammar's ``_BREAK`` defines it (spaces, tabs, FF, VT)."""
    return not line.strip(" \t\f\v")


def parse(text: str, source: str = "<text>") -> list[Paragraph]:
    """Split ``text`` (``\\n`` line ends) into paragraphs of typed lines."""
    match = line_pattern().match
    padded = text + "\n"
    paragraphs: list[Paragraph] = []
    current: list[Line] = []
    pos = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        end = pos + len(line)
        if _blank(line):
            if current:
                paragraphs.append(tuple(current))
                current = []
        else:
            m = match(padded, pos, end + 1)
            if m is None or m.end() != end:
                raise ParseError(source, lineno, 1 + (m.end() - pos if m else 0), line[:40])
            current.append(Line(m.lastgroup or "", lineno, line))
        pos = end + 1
    if current:
        paragraphs.append(tuple(current))
    return paragraphs


def parse_with_lark(text: str, source: str = "<text>") -> list[Paragraph]:
    """The same as ``parse``, by Lark's LALR parser: the reference implementation."""
    try:
        result = cast(list[Paragraph], parser().parse(_PAD + text + _PAD))
    except UnexpectedInput as exc:
        line = max(1, exc.line - _SHIFT)
        padded = _PAD + text + _PAD
        raise ParseError(source, line, exc.column, exc.get_context(padded, 40).strip()) from exc
    return result
