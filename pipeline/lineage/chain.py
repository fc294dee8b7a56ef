"""The release chain: each release aligned with the one before, the lineages that follow.

``follow`` chains the steps between consecutive releases (``step.align_pair``):
a rule's lineage is the chain of its pairs, ended (removed or merged) where a
step leaves it unpaired, split from another where a step says so; its
canonical number is where it is in the newest release. The steps are
independent: aligned in a process pool (``align_steps``), ahead of time while the
sources are being cleaned (``Ahead``), or read from the step cache. Each
section's number is followed to the newest release as well
(``section_chain``).
"""

from __future__ import annotations

import multiprocessing.process
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType

from pipeline import workers
from pipeline.cache import SourceCache
from pipeline.lineage.evidence import Release, Step
from pipeline.lineage.step import align_pair
from pipeline.numbers import normalise as normalise_number
from pipeline.records import Element, Lineage, Source


@dataclass
class Lineages:
    """Every lineage, and which lineage each rule element of each source is in."""

    lineages: dict[str, Lineage] = field(default_factory=dict)
    of_element: dict[tuple[str, int], str] = field(default_factory=dict)  # (source, line) -> lineage
    by_number: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, number) -> lineage
    score: dict[tuple[str, int], float] = field(default_factory=dict)  # weakest step from here on
    sections: dict[tuple[str, str], str] = field(default_factory=dict)  # (release, section) -> current
    releases: list[str] = field(default_factory=list)
    step_keys: list[str] = field(default_factory=list)  # the cache entries of the steps

    def current(self, source_id: str, number: str) -> tuple[str, str]:
        """(lineage id, canonical number) of a number as one source wrote it."""
        lid = self.by_number.get((source_id, normalise_number(number)), "")
        return lid, self.lineages[lid].canonical_number if lid else ""


def follow(releases: Sequence[tuple[Source, Sequence[Element]]], jobs: int = 1,
           cache: SourceCache | None = None, ahead: Ahead | None = None) -> Lineages:
    """Chain the steps between consecutive releases (given in date order); the
    steps themselves are independent, aligned in ``jobs`` processes, each read
    from ``cache`` when the same two releases were aligned before, or taken from
    ``ahead`` when it aligned them while the sources were being cleaned."""
    out = Lineages(releases=[s.source_id for s, _ in releases])
    built = [ahead.built(s.source_id, els) if ahead else Release.build(s.source_id, els) for s, els in releases]
    steps = align_steps(built, jobs, cache, out.step_keys, ahead)
    ids: list[list[str]] = []
    for k, rel in enumerate(built):
        if k == 0:
            ids.append([_new(out, rel, j) for j in range(len(rel.rules))])
            continue
        prev = built[k - 1]
        step = steps[k - 1]
        back = {j: i for i, j in step.pairs.items()}
        here = []
        for j in range(len(rel.rules)):
            if j in back:
                here.append(ids[k - 1][back[j]])
            else:
                lid = _new(out, rel, j)
                if j in step.split_from:
                    out.lineages[lid].split_from = ids[k - 1][step.split_from[j]]
                here.append(lid)
        ids.append(here)
        for i in range(len(prev.rules)):
            if i in step.pairs:
                continue
            gone = out.lineages[ids[k - 1][i]]
            gone.ended, gone.ended_in = "removed", rel.source_id
            if i in step.merged_into:
                gone.ended, gone.merged_into = "merged", here[step.merged_into[i]]
    for k, rel in enumerate(built):
        for j, el in enumerate(rel.rules):
            lid = ids[k][j]
            line = out.lineages[lid]
            line.last_source, line.last_number = rel.source_id, rel.numbers[j]
            out.of_element[rel.source_id, el.line_start] = lid
            out.by_number.setdefault((rel.source_id, rel.numbers[j]), lid)
    if built:
        newest = built[-1]
        for j, lid in enumerate(ids[-1]):
            out.lineages[lid].canonical_number = newest.numbers[j]
        _weakest_steps(out, built, ids, steps)
        section_chain(out, built, steps)
    return out


def align_steps(built: Sequence[Release], jobs: int, cache: SourceCache | None, used: list[str],
           ahead: Ahead | None = None) -> list[Step]:
    """``align_pair`` of each release with the next, in order; the cache keys
    of the steps go to ``used``."""
    digests = [rel.digest() for rel in built] if cache else []
    keys = [cache.step_key(x, y) for x, y in zip(digests, digests[1:], strict=False)] if cache else []
    used.extend(keys)
    found: list[Step | None] = [cache.get(key) for key in keys] if cache else [None] * max(0, len(built) - 1)
    todo = [k for k, step in enumerate(found) if not isinstance(step, Step)]
    if ahead:
        for k in todo:
            found[k] = ahead.take(built[k], built[k + 1])
    rest = [k for k in todo if found[k] is None]
    if jobs <= 1 or len(rest) < 2:
        made = [align_pair(built[k], built[k + 1]) for k in rest]
    else:
        # Alignment reads numbers, wordings and sections only: the elements stay here.
        light = [rel.light() for rel in built]
        with workers.pool(jobs, fresh=True) as executor:
            made = list(executor.map(align_pair, [light[k] for k in rest], [light[k + 1] for k in rest],
                                     chunksize=4))
    for k, step in zip(rest, made, strict=True):
        found[k] = step
    if cache:
        for k in todo:
            cache.put(keys[k], found[k])
    return [step for step in found if isinstance(step, Step)]


def is_release(src: Source) -> bool:
    """A link of the chain: a whole, dated official document."""
    return (src.status == "ok" and src.format == "cr_document" and bool(src.effective_date)
            and "truncated" not in src.flags)


def chain_of(sources: Sequence[Source]) -> list[int]:
    """The indexes of the chain's releases, oldest first (by date, then id). One
    release per effective date: copies of a release (the same file twice, or
    saved again with other line ends or in another encoding) are one release.
    The copy named for the release it is (``cr-`` and its effective date), else
    the one nearest the top of raw/, else the first by id, stands for it, and
    the others are attached to it. (So a ``copy.txt`` of ``cr-2026-08-07.txt``
    does not name the reference, nor the lineages that start there.)"""
    order = sorted((k for k, s in enumerate(sources) if is_release(s)),
                   key=lambda k: (sources[k].effective_date, sources[k].source_id))
    firsts: dict[str, int] = {}
    for k in sorted(order, key=lambda k: (sources[k].source_id != f"cr-{sources[k].effective_date}",
                                          sources[k].path.count("/"), sources[k].source_id)):
        firsts.setdefault(sources[k].effective_date, k)
    return [k for k in order if firsts[sources[k].effective_date] == k]


class Ahead:
    """Steps aligned ahead: each release, once cleaned, is sent to a pool of
    ``jobs`` workers to be aligned with the release before it, while the main
    process cleans the rest (cleaning is the main process's alone, and would
    leave the second core idle). ``align_steps`` then takes the steps it needs; one
    it needs but was not aligned ahead (a release the checks after cleaning
    took out of the chain leaves a gap) is aligned then. A step already in the
    cache is not aligned ahead. A context manager: the pool ends with it."""

    def __init__(self, jobs: int, cache: SourceCache | None) -> None:
        self.jobs, self.cache = jobs, cache
        self._stack = ExitStack()
        self._executor: ProcessPoolExecutor | None = None
        self._releases: dict[str, tuple[Sequence[Element], Release]] = {}
        self._last: Release | None = None
        self._futures: dict[tuple[str, str], Future[Step]] = {}

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._executor is not None and not all(f.done() for f in self._futures.values()):
            workers.stop(self._executor)  # steps nobody took: not worth waiting for
        self._futures.clear()
        # Its releases hold the cleaned elements: let them go with the stage that
        # used them (kept, they held a whole generation of elements through dedupe).
        self._releases.clear()
        self._last = None
        self._stack.__exit__(kind, error, trace)  # on an error, the pool stops its workers at once

    def send(self, cleaning: Iterable[tuple[int, Source, list[Element]]], sources: Sequence[Source],
             ) -> tuple[list[Source], list[list[Element]]]:
        """The sources and their elements as the cleaning stage makes them (``cleaning``
        gives each source's index, the source and its elements), each release of the
        chain (as far as it is known before cleaning, which flags truncated ones) sent
        off to be aligned as soon as it is clean."""
        out = list(sources)
        cleaned: list[list[Element]] = [[] for _ in sources]
        in_chain = set(chain_of(sources))
        for i, src, els in cleaning:
            out[i], cleaned[i] = src, els
            if i in in_chain and is_release(src):
                self.add(src.source_id, els)
        return out, cleaned

    def add(self, source_id: str, elements: Sequence[Element]) -> None:
        """The next release of the chain, as far as is known before the checks (in date order)."""
        rel = Release.build(source_id, elements)
        self._releases[source_id] = (elements, rel)
        before, self._last = self._last, rel
        if before is None or self.jobs <= 1:
            return
        if self.cache and self.cache.has(self.cache.step_key(before.digest(), rel.digest())):
            return  # read from the cache by align_steps (a damaged entry is aligned then)
        if self._executor is None:
            self._executor = self._stack.enter_context(workers.pool(self.jobs, fresh=True))
        self._futures[before.digest(), rel.digest()] = self._executor.submit(align_pair, before.light(), rel.light())

    def built(self, source_id: str, elements: Sequence[Element]) -> Release:
        """The release ``add`` built from these very elements, else a new one."""
        found = self._releases.get(source_id)
        return found[1] if found and found[0] is elements else Release.build(source_id, elements)

    @property
    def pending(self) -> Mapping[tuple[str, str], Future[Step]]:
        """The steps aligned ahead and not yet taken, by the digests of their two releases."""
        return MappingProxyType(self._futures)

    @property
    def held(self) -> int:
        """How many releases it holds (with their elements) for ``built``."""
        return len(self._releases)

    def processes(self) -> list[multiprocessing.process.BaseProcess]:
        """Its pool's worker processes; none before a step was sent to be aligned ahead."""
        return workers.processes_of(self._executor) if self._executor is not None else []

    def take(self, a: Release, b: Release) -> Step | None:
        """The step from ``a`` to ``b``, if it was aligned ahead (waits for it)."""
        future = self._futures.pop((a.digest(), b.digest()), None)
        return future.result() if future is not None else None


def _new(out: Lineages, rel: Release, j: int) -> str:
    base = f"{rel.source_id}:{rel.numbers[j]}"
    lid, n = base, 1
    while lid in out.lineages:
        n += 1
        lid = f"{base}~{n}"
    out.lineages[lid] = Lineage(lid, rel.source_id, rel.numbers[j])
    return lid


def _weakest_steps(out: Lineages, built: list[Release], ids: list[list[str]], steps: list[Step]) -> None:
    """For each rule, the lowest similarity of the steps from it to today (100 when identical)."""
    ahead: dict[str, float] = {}
    for k in range(len(built) - 1, -1, -1):
        rel = built[k]
        for i, el in enumerate(rel.rules):
            lid = ids[k][i]
            here = 100.0 if k == len(built) - 1 else steps[k].scores.get(i, 0.0)
            if k < len(built) - 1 and i in steps[k].pairs:
                here = min(here, ahead.get(lid, 100.0))
            out.score[rel.source_id, el.line_start] = here
        for i, lid in enumerate(ids[k]):
            ahead[lid] = out.score[rel.source_id, rel.rules[i].line_start]


def section_chain(out: Lineages, built: list[Release], steps: list[Step]) -> None:
    """Each release's section numbers followed to the newest release. A
    section whose chain leads to one of another title is the newest
    release's one section of its own title, if there is one (and so are the
    sections of earlier releases it continues): Tokens
    (216) went into Permanents (110) in July 2009, and came back as a section
    of its own, 111 Tokens, in 2019."""
    newest = built[-1].sections
    titled = Counter(newest.values())
    own_title = {title: number for number, title in newest.items() if titled[title] == 1}
    current = {number: number for number in newest}
    for number, target in current.items():
        out.sections[built[-1].source_id, number] = target
    for k in range(len(built) - 2, -1, -1):
        step, sections = steps[k], built[k].sections
        current = {number: current.get(step.sections.get(number, ""), "") for number in sections}
        for number, target in current.items():
            title = sections[number]
            if target and newest.get(target) != title and title in own_title:
                current[number] = target = own_title[title]  # and so for what it continues
            out.sections[built[k].source_id, number] = target
