"""A link checker for the generated site: every internal href, src and action, and every
#anchor, resolves to a file and an id that exist. Also the links the scripts build from
``search-index.js`` and the data files ``compare.html`` loads.

Each page is read once (its ids and its links), then every link is resolved as the
browser would, relative to its page, on the list of files; nothing may leave the site.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from pipeline.publish.notice import FAN_CONTENT_POLICY

_ID = re.compile(r'\sid="([^"]*)"')
_LINK = re.compile(r'\s(?:href|src|action)="([^"]*)"')
_SOURCES = re.compile(r'id="site-sources">(.*?)</script>', re.S)
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
# The one page outside the site a page may link to: the policy the data notice cites.
ALLOWED = {FAN_CONTENT_POLICY}


def _problem(page: str, link: str, files: set[str], ids: dict[str, set[str]]) -> str | None:
    if link in ALLOWED:
        return None
    if _EXTERNAL.match(link):
        return f"{page}: not a link inside the site: {link}"
    path, _, fragment = link.partition("#")
    path = path.partition("?")[0]
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(path))) if path else page
    if target.startswith("../") or target not in files:
        return f"{page}: {link}: no file {target}"
    if fragment and target.endswith(".html") and unquote(fragment) not in ids[target]:
        return f"{page}: {link}: no id {fragment!r} in {target}"
    return None


def broken_links(root: Path) -> tuple[list[str], int]:
    """(every broken link, how many links were checked) over the whole site at ``root``."""
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    ids: dict[str, set[str]] = {}
    links: list[tuple[str, str]] = []
    for page in sorted(f for f in files if f.endswith(".html")):
        text = (root / page).read_text(encoding="utf-8")
        ids[page] = {html.unescape(i) for i in _ID.findall(text)}
        links.extend((page, html.unescape(link)) for link in _LINK.findall(text))
        if page == "compare.html":
            found = _SOURCES.search(text)
            for src in json.loads(found.group(1)) if found else []:
                links.extend(("compare.html", src[key]) for key in ("page", "data"))
    if "search-index.js" in files:
        lines = (root / "search-index.js").read_text(encoding="utf-8").splitlines()
        index = next(line for line in lines if line.startswith("window.SEARCH_INDEX="))
        for entry in json.loads(index.removeprefix("window.SEARCH_INDEX=").rstrip(";")):
            links.append(("search.html", entry[3]))
    broken = [p for page, link in links if (p := _problem(page, link, files, ids))]
    return broken, len(links)
