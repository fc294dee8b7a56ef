"""Every text normaliser of the pipeline, once: the keys under which two wordings,
titles or terms count as the same. Each is a pure ``str -> str`` function.

Which one a stage uses is part of what it means: dedupe folds quote style and
spacing only (two wordings that differ in case are two wordings), matching
across releases also folds case and dashes, titles fold more, and the site's
search folds accents as its page does.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pipeline import numbers

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})
_MATCH = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "_": ""})
# The end of a range after a masked number ("601.2e-g", "601.2e - g", "712.9–10"):
# the letters or digits of the last rule it names, which renumbering changes as
# it does the first.
_RANGE_END = re.compile(r"(?<=#) ?[-–—] ?(?:[a-z]{1,2}|\d{1,3})\b")
_TITLE = str.maketrans({"-": " ", "\u2019": "'", "\u2018": "'", "\u2013": " ", "\u2014": " "})


@lru_cache(maxsize=262_144)
def fold(text: str) -> str:
    """Quote style and spacing folded (the dedupe key's wording).

    >>> print(fold("“It’s”  here"))
    "It's" here
    """
    return " ".join(text.translate(_QUOTES).split())


def spacing_key(text: str) -> str:
    """Spacing and case folded (recurring boilerplate is counted under it).

    >>> spacing_key("  Magic  The Gathering ")
    'magic the gathering'
    """
    return " ".join(text.split()).casefold()


def match_text(text: str) -> str:
    """Wording as compared across sources: case, quotes, dashes and spacing folded.

    >>> match_text("“Entwine  [cost]” means")
    '"entwine [cost]" means'
    """
    return " ".join(text.translate(_MATCH).casefold().split())


@lru_cache(maxsize=262_144)
def folded(text: str) -> str:
    """Wording compared across versions: ``match_text`` with rule numbers masked."""
    return masked(match_text(text))


def masked(text: str) -> str:
    """Wording with rule numbers masked, so a renumbered cross-reference is no
    edit, the end of a range included (``601.2e-g`` is ``601.2f-h`` renumbered:
    2015-07-17 renumbered twenty such references).

    >>> masked("rules 601.2e - g and 409.1f-h"), masked("rules 712.5–6 and 712.14")
    ('rules # and #', 'rules # and #')
    """
    return _RANGE_END.sub("", numbers.IN_TEXT.sub("#", text))


def title_key(title: str) -> str:
    """A section title as matched across releases: spacing and case folded, underscores gone.

    >>> title_key("Totem  Armor")
    'totem armor'
    """
    return " ".join(title.replace("_", "").split()).casefold()


def folded_title(title: str) -> str:
    """A title with case, quote style, hyphens and spacing folded ("Phased-Out", "Phased Out").

    >>> folded_title("Phased-Out"), folded_title("Phased Out")
    ('phased out', 'phased out')
    """
    return " ".join(title_key(title).translate(_TITLE).split())


def search_fold(text: str) -> str:
    """Lower case without accents (as the site's search page folds queries).

    >>> search_fold("Dandân  Ærathi")
    'dandan aerathi'
    """
    if text.isascii():
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKD", text.replace("Æ", "Ae").replace("æ", "ae"))
    return " ".join("".join(ch for ch in text if not unicodedata.combining(ch)).lower().split())
