"""Text to paragraphs of typed lines, with the Lark grammar in ``grammars/dump.lark``.

The grammar only says what each line looks like and which lines stand together
without a blank line between them; ``pipeline.assemble`` gives them meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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
        cache=True,
    )


def parse(text: str, source: str = "<text>") -> list[Paragraph]:
    """Split ``text`` (``\\n`` line ends) into paragraphs of typed lines."""
    try:
        result: list[Paragraph] = parser().parse(_PAD + text + _PAD)
    except UnexpectedInput as exc:
        line = max(1, exc.line - _SHIFT)
        padded = _PAD + text + _PAD
        raise ParseError(source, line, exc.column, exc.get_context(padded, 40).strip()) from exc
    return result
