"""Text to typed lines, with the Lark grammar in ``grammars/dump.lark``.

The grammar only says what each line looks like on its own; blank lines carry
no meaning and are skipped. ``pipeline.ingest.assemble`` decides what the lines mean.

Two ways to run it, with the same result (a property test holds them equal):
``parse_with_lark`` is Lark's LALR parser on the grammar; ``parse``, the hot
path, compiles the grammar's line terminals into one regular expression, in
the order and with the priorities Lark's own lexer uses, and applies it line by
line. The grammar is line-oriented (each line is one token), so that is the
whole of what the parser does, and it runs about ten times faster than feeding
every token through the LALR machine.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial
from itertools import compress, count
from typing import NamedTuple, cast

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from pipeline.errors import ParseError
from pipeline.numbers import grammar_text

# The parser reads "\n\n" + text + "\n\n"; its line numbers are this much ahead.
_PAD = "\n\n"
_SHIFT = 2


class Line(NamedTuple):
    """One non-blank source line and the terminal that matched it (a named
    tuple: a source makes one per line, and a tuple is made several times
    faster than a frozen dataclass)."""

    kind: str
    lineno: int
    text: str


class _ToLines(Transformer[Token, list[Line]]):
    """Reshape the tree into a list of Line; no decisions are made here."""

    def start(self, tokens: list[Token]) -> list[Line]:
        return [Line(t.type, (t.line or 0) - _SHIFT, str(t)) for t in tokens]


@lru_cache(maxsize=1)
def parser() -> Lark:
    """The LALR parser, built once per process (and cached on disk by Lark).

    ``number`` is a second start symbol: it keeps the number-shape terminals
    that ``pipeline.numbers`` reads."""
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        start=["start", "number"],
        transformer=_ToLines(),
        propagate_positions=True,
        cache=True,
    )


def line_terminals() -> list[str]:
    """Names of the terminals a line can be, in the grammar's ``line`` rule."""
    return sorted({sym.name for r in parser().rules if r.origin.name == "line" for sym in r.expansion})


@lru_cache(maxsize=1)
def line_pattern() -> re.Pattern[str]:
    """The grammar's line terminals as one pattern, tried in Lark's lexer order."""
    lark = parser()
    names = set(line_terminals())
    terminals = [t for t in lark.terminals if t.name in names]
    terminals.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    alternatives = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terminals)
    return re.compile(alternatives, lark.lexer_conf.g_regex_flags)


def _blank(line: str) -> bool:
    """A blank line, as the grammar's ``_EOL`` defines it (spaces, tabs, FF, VT)."""
    return not line.strip(" \t\f\v")


# Line -> terminal, for the lines already typed in this process: releases repeat
# most of their predecessors' lines, and a line's terminal depends on the line
# alone (the pattern has no look-behind and sees up to the line's own newline).
# A blank line maps to "" (skipped).
_KINDS: dict[str, str] = {"": ""}
_KINDS_MAX = 1_000_000
_make_line = partial(tuple.__new__, Line)  # Line(kind, lineno, text) from a tuple, in C


def parse(text: str, source: str = "<text>") -> list[Line]:
    """Type every non-blank line of ``text`` (``\\n`` line ends)."""
    return parse_lines(text.split("\n"), source)


def forget() -> None:
    """Forget the lines typed in this process: the next ones are typed afresh."""
    _KINDS.clear()
    _KINDS[""] = ""


def remembered(line: str) -> str | None:
    """The kind this process typed ``line`` as ("" for a blank one), if it did."""
    return _KINDS.get(line)


def parse_lines(texts: list[str], source: str = "<text>") -> list[Line]:
    """``parse`` of the text these lines make (``text.split("\\n")``).

    Each distinct line is typed once per process: the lines are looked up, and
    their ``Line``s made, by C loops (``map``, ``compress``), and only the lines
    not seen before go through the pattern (a release repeats most of the lines
    of the one before it: about 12% of raw/'s lines are distinct)."""
    if len(_KINDS) > _KINDS_MAX:
        forget()
    kinds = list(map(_KINDS.get, texts))
    if None in kinds:
        match = line_pattern().match
        at = kinds.index(None)
        while True:
            line = texts[at]
            known = _KINDS.get(line)  # typed further up this text
            if known is not None:
                kind = known
            elif _blank(line):
                kind = ""
            else:
                # The line with its newline: all of the text the pattern looks at.
                m = match(line + "\n")
                if m is None or m.end() != len(line):
                    raise ParseError(source, at + 1, 1 + (m.end() if m else 0), line[:40])
                kind = m.lastgroup or ""
            kinds[at] = _KINDS[line] = kind
            try:
                at = kinds.index(None, at + 1)
            except ValueError:
                break
    typed = zip(compress(kinds, kinds), compress(count(1), kinds), compress(texts, kinds), strict=True)
    return list(map(_make_line, typed))


def parse_with_lark(text: str, source: str = "<text>") -> list[Line]:
    """The same as ``parse``, by Lark's LALR parser: the reference implementation."""
    padded = _PAD + text + _PAD
    try:
        result = cast(list[Line], parser().parse(padded, start="start"))
    except UnexpectedInput as exc:
        line = max(1, exc.line - _SHIFT)
        raise ParseError(source, line, exc.column, exc.get_context(padded, 40).strip()) from exc
    return result
