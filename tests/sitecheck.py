"""A link checker for the generated site: every internal href, src and action, and every
#anchor, resolves to a file and an id that exist. Also the links the scripts build from
``search-index.js`` and the data files ``compare.html`` loads."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

_ID = re.compile(r'\sid="([^"]*)"')
_LINK = re.compile(r'\s(href|src|action)="([^"]*)"')
_EXTERNAL = ("http:", "https:", "mailto:", "javascript:", "data:")


def ids_of(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        cache[path] = {html.unescape(m) for m in _ID.findall(path.read_text(encoding="utf-8"))}
    return cache[path]


def check(root: Path, page: Path, link: str, cache: dict[Path, set[str]]) -> str | None:
    """Why ``link`` (as written on ``page``) does not resolve, or None."""
    if link.startswith(_EXTERNAL):
        return f"{page.relative_to(root)}: external link {link}"
    parts = urlsplit(link)
    target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    if root.resolve() not in target.parents:
        return f"{page.relative_to(root)}: {link} leaves the site"
    if not target.is_file():
        return f"{page.relative_to(root)}: {link}: no file {target.relative_to(root.resolve())}"
    if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in ids_of(target, cache):
        return f"{page.relative_to(root)}: {link}: no id {parts.fragment!r} in {target.relative_to(root.resolve())}"
    return None


def broken_links(root: Path) -> tuple[list[str], int]:
    """(every broken link, how many links were checked) over the whole site."""
    cache: dict[Path, set[str]] = {}
    broken, checked = [], 0
    for page in sorted(root.rglob("*.html")):
        for _, raw in _LINK.findall(page.read_text(encoding="utf-8")):
            checked += 1
            problem = check(root, page, html.unescape(raw), cache)
            if problem:
                broken.append(problem)
    index = root / "search-index.js"
    entries = json.loads(index.read_text(encoding="utf-8").removeprefix("window.SEARCH_INDEX=").rstrip(";\n"))
    for entry in entries:
        checked += 1
        problem = check(root, root / "search.html", entry[3], cache)
        if problem:
            broken.append(f"search-index.js: {problem}")
    compare = (root / "compare.html").read_text(encoding="utf-8")
    sources = json.loads(re.search(r'id="site-sources">(.*?)</script>', compare, re.S).group(1))  # type: ignore[union-attr]
    for src in sources:
        for key in ("page", "data"):
            checked += 1
            problem = check(root, root / "compare.html", src[key], cache)
            if problem:
                broken.append(f"compare sources: {problem}")
    return broken, checked
