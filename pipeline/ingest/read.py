"""Stage one, one source at a time: discover the files under ``raw/``, give each an
id, and read each into a ``Source`` and its elements (decode -> parse -> assemble ->
describe -> per-source checks), in worker processes, through the per-file cache.

Nothing here needs another source. A bad file never raises: it comes back
quarantined with its reason, and the run goes on.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import stat
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path, PurePath
from typing import Any, cast

from pipeline import workers
from pipeline.cache import SourceCache
from pipeline.errors import DecodeError, ParseError, Quarantine
from pipeline.ingest import checks, describe
from pipeline.ingest.assemble import assemble, with_line_flags
from pipeline.ingest.decode import decode_lines, sniff_binary
from pipeline.ingest.layout import layout
from pipeline.ingest.parse import parse_lines
from pipeline.publish import folder as publish
from pipeline.records import Element, Source

# progress(stage, done, total): called as work advances, for a progress bar.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Settings:
    """Limits that protect the machine; change with ``dataclasses.replace``."""

    max_file_bytes: int = 64 * 1024 * 1024
    max_line_chars: int = 1_000_000
    jobs: int = os.cpu_count() or 1

    def limits(self) -> tuple[int, int]:
        """The settings that change what a source parses to (not how fast)."""
        return (self.max_file_bytes, self.max_line_chars)


def discover(raw: Path) -> list[Path]:
    """Every file under ``raw``, sub-folders included, in a stable order."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(raw, followlinks=False):
        # Links to folders are not followed (loops), but listed, so that read_source
        # quarantines them with a reason instead of their being skipped unseen.
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = sorted(d for d in dirnames if d not in links)
        found.extend(Path(dirpath) / name for name in sorted(filenames + links))
    return sorted(found, key=lambda p: p.relative_to(raw).as_posix())


# What a shown name escapes besides bytes that are not UTF-8: control characters
# (a newline in a name would break every line-based log and list).
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def shown(name: str | PurePath) -> str:
    """A file name or path as the outputs show it: its bytes read as UTF-8, a
    byte that is not (``os.fsencode`` gives it back exactly) and a control
    character written ``\\xNN``. Files are always opened by their own name.

    >>> shown(os.fsdecode(b"x\\xff.txt")), shown("a\\nb.txt"), shown("Dand\u00e2n.txt")
    ('x\\\\xff.txt', 'a\\\\x0ab.txt', 'Dandân.txt')
    """
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def exact(name: str | PurePath) -> bool:
    """Whether ``shown`` gives ``name`` as it is (nothing escaped)."""
    return shown(name) == str(name)


def source_id(path: PurePath) -> str:
    """The file's name without its extension, as ``shown``."""
    name = shown(path.name)
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def source_ids(paths: Sequence[Path], raw: Path) -> list[str]:
    """Source ids, unique by construction and a function of the paths alone.

    A file's id is its name without extension. When several files share that
    name (a copy in a sub-folder, ``a.txt`` beside ``a.json``), the one nearest
    the top of ``raw`` (then first by path) keeps it, so adding a copy deeper
    down never renames a source; each other takes its path relative to ``raw``,
    extension included (``./`` in front at the top level). A name without
    extension never contains ``/``, and paths are unique, so no two ids collide,
    but for names ``shown`` escapes: ``x\\xff`` is both the escaped name of a
    file whose name holds the byte FF and the name of one that holds a
    backslash. An escaped path whose id another file has takes ``~`` and the
    start of its bytes' sha256 (the id of a name that needs no escaping never
    changes).

    >>> source_ids([Path("r/a.txt"), Path("r/x/a.txt"), Path("r/b.txt")], Path("r"))
    ['a', 'x/a.txt', 'b']
    >>> source_ids([Path("r/archive/cr-1.txt"), Path("r/cr-1.txt"), Path("r/cr-1.json")], Path("r"))
    ['archive/cr-1.txt', './cr-1.txt', 'cr-1']
    >>> source_ids([Path("r/x\\\\xff.txt"), Path("r/x\\\\xff.md"), Path(os.fsdecode(b"r/x\\xff.txt"))], Path("r"))
    ['./x\\\\xff.txt', 'x\\\\xff', './x\\\\xff.txt~92bdd82600d0']
    """
    rels = [p.relative_to(raw) for p in paths]
    groups: dict[str, list[int]] = {}
    for i, rel in enumerate(rels):
        groups.setdefault(source_id(rel), []).append(i)
    ids = [""] * len(paths)
    for stem, members in groups.items():
        members.sort(key=lambda i: (len(rels[i].parts), shown(rels[i]), os.fsencode(rels[i])))
        ids[members[0]] = stem
        for i in members[1:]:
            posix = shown(rels[i])
            ids[i] = posix if "/" in posix else f"./{posix}"
    taken = Counter(ids)
    for i, rel in enumerate(rels):
        if taken[ids[i]] > 1 and not exact(rel):
            ids[i] += "~" + hashlib.sha256(os.fsencode(rel)).hexdigest()[:12]
    return ids


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


ReadResult = tuple[Source, list[Element], dict[str, float] | None]  # what stage one gives for a file
# Stage one's result as it is cached: the source and its elements as columns
# (one tuple per field of ``Element._fields``, in order), pickled. Columns pickle
# and unpickle wholly in C (a named tuple pickles through a Python method per
# element), and the job makes its elements from them by C loops (``map``,
# ``zip``), with no Python step per element. Read in the job itself (a cached
# entry, or no worker), it comes unpickled: (source, columns); from a worker, as
# ``_Sent`` sends it (bytes).
Columns = tuple[tuple[Any, ...], ...]
Packed = tuple[bytes | tuple[Source, Columns], dict[str, float] | None]


def read_source(
    path: Path, raw: Path, settings: Settings, cache: SourceCache | None = None, sid: str = ""
) -> ReadResult:
    """Stage one for a single file: (source, elements, seconds spent by stage, or
    None when it came from the cache). Never raises: a bad file comes back
    quarantined with its reason."""
    return _Shared()(_read_packed(path, raw, settings, cache, sid))


def _read_packed(
    path: Path, raw: Path, settings: Settings, cache: SourceCache | None, sid: str, parse_missing: bool = True,
    to_send: str = "",
) -> Packed | None:
    """``read_source`` packed, or None for a file that is neither bad nor cached
    when ``parse_missing`` is false (it is then parsed elsewhere). A worker's
    task passes its pool's ``to_send`` token: the result then comes as ``_Sent``
    sends it."""
    rel = shown(path.relative_to(raw))
    sid = sid or source_id(path)
    try:
        info = path.stat()  # first: a link loop is an OSError here (ELOOP), quarantined below
        # A link to a file of a published dataset (raw/x.csv -> out/rules.csv): outputs never become inputs.
        if path.is_symlink() and publish.published_folder(path):
            raise Quarantine("a link into a dataset or site this pipeline published: outputs are never read as inputs")
        if not stat.S_ISREG(info.st_mode):
            raise Quarantine(f"not a regular file ({_file_type(info.st_mode)})")
        if info.st_size > settings.max_file_bytes:
            raise Quarantine(f"file is {info.st_size} bytes, over the limit of {settings.max_file_bytes}")
        if not parse_missing and not (cache and cache.reuse):
            return None  # no entry to look up: the file is read (and hashed) once, where it is parsed
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _pack(Source(sid, rel, "", 0, status="quarantined", error=f"{rel}: cannot read: {reason}"), []), {}
    except Quarantine as exc:
        return _pack(Source(sid, rel, "", 0, status="quarantined", error=f"{rel}: {exc}"), []), {}
    base = Source(sid, rel, hashlib.sha256(data).hexdigest(), len(data))
    key = cache.key(base.sha256, rel, sid, settings.limits()) if cache else ""
    if cache:
        hit = cache.get(key)  # read back here (a damaged entry is None: parsed again)
        if hit is not None:
            return hit, None
    if not parse_missing:
        return None
    seconds: dict[str, float] = {}
    try:
        src, elements = _ingest(base, data, settings, seconds)
    except (Quarantine, DecodeError, ParseError) as exc:
        src, elements = replace(base, status="quarantined", error=f"{rel}: {exc}"), []
    rows = _pack(src, elements)
    if cache:
        cache.put_pickled(key, pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
    return (_SENT.pack(to_send, rows) if to_send else rows), seconds


def _pack(src: Source, elements: list[Element]) -> tuple[Source, Columns]:
    return src, tuple(zip(*elements, strict=True)) if elements else ((),) * len(Element._fields)


def _ingest(
    base: Source, data: bytes, settings: Settings, seconds: dict[str, float] | None = None
) -> tuple[Source, list[Element]]:
    seconds = {} if seconds is None else seconds
    # CPU seconds of this thread, not wall seconds: the parallel workers share
    # two cores with the job, and a worker's wall clock runs on while it waits.
    t0 = time.thread_time()
    binary = sniff_binary(data)
    if binary:
        raise Quarantine(f"not text: {binary}")
    text_lines, decoded = decode_lines(data)
    t1 = time.thread_time()
    seconds["decode"] = t1 - t0
    if max(map(len, text_lines)) > settings.max_line_chars:  # the lengths in C; the first too long named
        i, line = next((i, line) for i, line in enumerate(text_lines, 1) if len(line) > settings.max_line_chars)
        raise Quarantine(f"line {i}: {len(line)} characters, over the limit of {settings.max_line_chars}")
    lines = parse_lines(text_lines, base.path)
    if not lines:  # nothing to read: said, not published as a source of nothing
        raise Quarantine("empty: no text (0 bytes)" if not data else f"no text: only blank lines ({len(data)} bytes)")
    shape = layout(lines)
    elements = assemble(base.source_id, lines, shape)
    seconds["parse"] = time.thread_time() - t1
    if decoded.line_flags:
        elements = with_line_flags(elements, decoded.line_flags)
    date = describe.effective_date(elements)
    fmt = describe.source_format(elements)
    elements = describe.as_recognised(elements, fmt)
    src = replace(
        base,
        encoding=decoded.encoding,
        newline=decoded.newline,
        evidence=decoded.evidence,
        format=fmt,
        effective_date=date,
        era=describe.era(elements, date),
        lines=len(text_lines) - (1 if text_lines and text_lines[-1] == "" else 0),
        flags=tuple(dict.fromkeys(f for _, f in decoded.line_flags)),
    )
    return checks.judge(src, checks.source_checks(lines, elements, shape)), elements


class _Sent:
    """What a worker sent the job in one pool (the pool's token): each distinct
    wording and number (``_SHARED``'s columns), in the order it was first sent.

    A worker sends its result with every wording it has sent before in the same
    pool as its index in that order, and only the new ones as text: releases
    repeat most of their predecessors' wordings, so most of the result is
    numbers in an array, which neither side pickles, sends, unpickles or hashes
    string by string (the job's own process, on the 90 MB benchmark corpus:
    170 MB received and 2.9 s to unpickle and share the elements before; see
    the commit). The job keeps each worker's list (``_Shared.receive``)."""

    def __init__(self) -> None:
        self.token = ""
        self.index: dict[str, int] = {}

    def pack(self, token: str, rows: tuple[Source, Columns]) -> bytes:
        """``rows`` as sent in the pool ``token``: (pid, how many wordings this
        worker had sent before, the new ones, the source, the columns, the
        shared ones as arrays of indices)."""
        if token != self.token:  # a new pool (a forked worker inherits its parent's)
            self.token, self.index = token, {}
        index = self.index
        start = len(index)
        fresh: list[str] = []
        src, columns = rows
        cols: list[Any] = list(columns)
        for i in _SHARED:
            column = cols[i]
            refs = list(map(index.get, column))  # in C: most were sent before
            at = refs.index(None) if None in refs else len(refs)
            while at < len(refs):
                text = column[at]
                ref = index.get(text)  # sent further up this result
                if ref is None:
                    ref = index[text] = len(index)
                    fresh.append(text)
                refs[at] = ref
                try:
                    at = refs.index(None, at + 1)
                except ValueError:
                    break
            cols[i] = array("I", cast(list[int], refs))  # no None left
        return pickle.dumps((os.getpid(), start, fresh, src, tuple(cols)), protocol=pickle.HIGHEST_PROTOCOL)


_SENT = _Sent()  # this process's, as a worker
_SHARED = tuple(Element._fields.index(name) for name in ("text_raw", "body", "number_as_written"))


class _Shared:
    """Packed results made elements again, with one string object per distinct
    wording and rule number across all sources. Releases repeat most of their
    predecessors' text and numbers, but each source's elements arrive with
    strings of their own (unpickled from the cache or a worker); sharing them as
    they arrive holds the first stage's output in well under half the memory
    (206 MB instead of 475 MB for the 90 MB benchmark corpus; the numbers take a
    further 9% off on raw/)."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}
        self._sent: dict[int, list[str]] = {}  # worker pid -> the wordings it sent, in order
        self._waiting: dict[tuple[int, int], tuple[int, Any, dict[str, float] | None]] = {}

    def __call__(self, packed: Packed | None) -> ReadResult:
        if packed is None or isinstance(packed[0], bytes):
            raise ValueError("no result to share")
        share = self._seen.setdefault
        rows, seconds = packed
        assert not isinstance(rows, bytes)
        src, columns = rows
        cols: list[Any] = list(columns)
        for i in _SHARED:  # setdefault(s, s) for each string of the column, in C
            cols[i] = map(share, cols[i], cols[i])
        return src, list(map(_make_element, zip(*cols, strict=True))), seconds

    def receive(self, k: int, packed: Packed) -> list[tuple[int, ReadResult]]:
        """The results a worker's result for task ``k`` completes, by task: it
        names wordings by their place in what that worker sent before, so one
        that arrives before an earlier one of the same worker waits for it (the
        pool sends results in the order they are made, but this does not rely
        on it)."""
        data, seconds = packed
        if not isinstance(data, bytes):
            raise ValueError("not a worker's result")
        pid, start, *sent = pickle.loads(data)
        self._waiting[pid, start] = (k, sent, seconds)
        table = self._sent.setdefault(pid, [])
        share = self._seen.setdefault
        done: list[tuple[int, ReadResult]] = []
        while (pid, len(table)) in self._waiting:
            task, (fresh, src, columns), took = self._waiting.pop((pid, len(table)))
            table += map(share, fresh, fresh)
            cols = list(columns)
            for i in _SHARED:
                cols[i] = map(table.__getitem__, cols[i])
            done.append((task, (src, list(map(_make_element, zip(*cols, strict=True))), took)))
        return done


_make_element = partial(tuple.__new__, Element)  # Element(*row) from a tuple, in C


def read_all(
    paths: Sequence[Path], raw: Path, settings: Settings, cache: SourceCache | None,
    progress: Progress | None,
) -> list[ReadResult]:
    args = [(p, raw, settings, cache, sid) for p, sid in zip(paths, source_ids(paths, raw), strict=True)]
    share = _Shared()
    if settings.jobs <= 1 or len(paths) < 2:
        results = []
        for a in args:
            results.append(share(_read_packed(*a)))
            if progress:
                progress("read", len(results), len(paths))
        return results
    # Cached and unreadable files here (a cached result sent back from a worker
    # would be unpickled twice); the rest parsed in the workers.
    found = [None if result is None else share(result)
             for result in (_read_packed(*a, parse_missing=False) for a in args)]
    todo = [k for k, result in enumerate(found) if result is None]
    done = len(args) - len(todo)
    if progress and todo and done:
        progress("read", done, len(args))
    if not todo:
        return [result for result in found if result is not None]
    token = os.urandom(8).hex()  # this pool's: what its workers sent before
    with workers.pool(settings.jobs) as executor:
        futures = {executor.submit(_read_packed, *args[k], parse_missing=True, to_send=token): k for k in todo}
        for future in as_completed(futures):
            # Let go of the future once its result is shared: kept, it holds the
            # worker's copy of every wording until the pool closes (stage one twice).
            packed = future.result()
            if packed is None:
                raise RuntimeError("a worker parsed nothing")
            for k, result in share.receive(futures.pop(future), packed):
                found[k] = result
                done += 1
                if progress:
                    progress("read", done, len(paths))
            del future
    if share._waiting:
        raise RuntimeError(f"{len(share._waiting)} results of the workers named wordings never sent")
    return [result for result in found if result is not None]
