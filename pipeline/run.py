"""The composer: the stages in the order data meets them, a straight sequence.

read (``ingest.read``: decode -> parse -> assemble -> describe -> per-source checks,
one source at a time, in worker processes, through the cache) -> the release checks
(each release's rule count against the others') -> noise -> clean (``corpus``) ->
numbering (``lineage``: the releases followed one to the next, every other source
attached to the release it matches) -> dedupe; then ``job`` publishes the ``Corpus``.
When ``raw/`` holds no release (or only older ones than the history's newest) the
numbering maps through a history (``lineage.history``: the shipped one by default).

The release chain is the one place where every source must be in memory at once,
and it is here, not hidden in a stage: while the main process cleans, each release
of the chain is sent to the lineage workers as soon as it is clean, so that the
steps between releases are aligned in parallel with the cleaning.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pipeline import workers
from pipeline.cache import SourceCache
from pipeline.corpus import clean, dedupe, noise
from pipeline.ingest import checks
from pipeline.ingest.read import Progress, Settings, discover, read_all
from pipeline.lineage import chain as lineage
from pipeline.lineage import numbering
from pipeline.lineage.history import History
from pipeline.records import Element, Lineage, Mapping, Source

__all__ = ["Corpus", "Progress", "Settings", "Stopwatch", "build"]


@dataclass
class Corpus:
    """Everything a run produced, ready to be written."""

    sources: list[Source]
    elements: list[Element]
    mappings: list[Mapping] = field(default_factory=list)
    reference: str = ""
    parsed: int = 0
    clock: Stopwatch = field(default_factory=lambda: Stopwatch())
    lineages: list[Lineage] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    step_keys: list[str] = field(default_factory=list)  # cache entries of the lineage steps used
    # The reference's elements when the reference is a release of the history, not a source.
    reference_elements: list[Element] = field(default_factory=list)
    history_used: str = ""  # the history the numbering mapped through ("shipped cr-...", a folder), if any
    lent_mappings: list[Mapping] = field(default_factory=list)  # its releases' renumber_map rows, for xrefs
    reference_date: str = ""  # the reference's date when it is the history's release, not a source


class Stopwatch:
    """Wall seconds by corpus-level stage, and CPU seconds summed over sources
    for the per-source stages (decode, parse), which may run in parallel."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.wall[stage] = self.wall.get(stage, 0.0) + time.perf_counter() - start


def build(
    raw: Path, settings: Settings | None = None, progress: Progress | None = None,
    cache: SourceCache | None = None, history: History | None = None,
) -> Corpus:
    """Run every stage on the files under ``raw``, mapping through ``history``
    where ``raw/`` lacks the releases (see ``lineage.history.to_use``)."""
    with workers.fewer_collections():
        return _build(raw, settings or Settings(), progress, cache, history)


def _build(raw: Path, settings: Settings, progress: Progress | None, cache: SourceCache | None,
           history: History | None) -> Corpus:
    clock = Stopwatch()
    paths = discover(raw)
    with clock("read"):
        results = read_all(paths, raw, settings, cache, progress)
    sources = [s for s, _, _ in results]
    for _, _, seconds in results:
        for stage, value in (seconds or {}).items():
            clock.cpu[stage] = clock.cpu.get(stage, 0.0) + value
    parsed = sum(1 for _, _, seconds in results if seconds is not None)
    # Each stage makes new elements; the previous stage's are let go as soon as
    # they are used, so that at most two generations are held at once.
    read = [els for _, els, _ in results]
    del results
    sources = checks.check_releases(sources, read)
    # The lineage steps are aligned in worker processes while the main process
    # cleans (``Ahead``): the releases are cleaned first, oldest first, and each
    # is sent off as soon as it is clean.
    with lineage.Ahead(settings.jobs, cache) as ahead:
        with clock("clean"):
            per_source = noise.classify(read)
            del read
            cleaning = clean.clean_sources(sources, per_source)
            sources, cleaned = ahead.send(cleaning, sources)
            del per_source
        with clock("align"):
            numbered = numbering.number(sources, cleaned, progress, settings.jobs, cache, ahead, history)
            del cleaned
            sources = [replace(s, numbering_like=numbered.attached.get(s.source_id, "")) for s in sources]
            elements = [el for els in numbered.elements for el in els]
            numbered.elements.clear()
    with clock("dedupe"):
        elements = list(dedupe.dedupe(elements))
    return Corpus(sources, elements, numbered.mappings, numbered.reference, parsed, clock,
                  numbered.lineages, numbered.history, numbered.step_keys, numbered.reference_elements,
                  numbered.history_used, numbered.lent_mappings, numbered.reference_date)
