"""``make lineage-stability``: follow the rules again with every other release
left out, and list the rules whose current number comes out otherwise.

A lineage is a chain of steps between neighbouring releases. Leaving out
every other official release doubles each step; a rule that comes out with
another current number (or ended in one run and not in the other) is a place
where one of the two chains went wrong. No key is needed, and none is made:
the list says where to read the releases, not which run is right (the longer
steps of a thinned chain are harder, so it is more often the thinned one).

Each thinned run is a whole run of the job (``run_job``) on links to the raw
files of its releases, in a temporary folder that is removed afterwards; the
published dataset and raw/ are only read. A dataset that raw/ as it is now (and
this code) did not make is refused (``run.json``'s fingerprint): the rules
would differ for the edits' sake. A source's id depends on the other files'
names, so the thinned runs' ids are read back as the full run's by path.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import TraceError
from pipeline.job import _previous_report, fingerprint, run_job
from pipeline.query.dataset import Published
from pipeline.query.dataset import rows as table_rows
from pipeline.query.trace import is_rule_row
from pipeline.run import Settings
from pipeline.tools.bench import link_tree

# A (source, number as written) pair of a release -> its lineage and current number ("" when it ended).
Numbers = dict[tuple[str, str], tuple[str, str]]


@dataclass(frozen=True)
class Divergence:
    """Rules that the full chain and a thinned one follow to different ends."""

    source_id: str  # the oldest release of the first such rule
    number: str
    full: str  # the current number in the full chain, "" for ended
    thinned: str
    rows: int  # how many (release, rule) pairs of the full chain's lineage have these two ends


def halves(releases: Sequence[str]) -> tuple[list[str], list[str]]:
    """The releases at odd places and those at even places of the chain, each
    with the first and the newest (so both start and end where the full chain does).

    >>> halves(["a", "b", "c", "d", "e"])
    (['a', 'c', 'e'], ['a', 'b', 'd', 'e'])
    >>> halves(["a", "b"])
    (['a', 'b'], ['a', 'b'])
    """
    ends = {releases[0], releases[-1]} if releases else set()
    odd = [s for k, s in enumerate(releases) if k % 2 == 0 or s in ends]
    even = [s for k, s in enumerate(releases) if k % 2 == 1 or s in ends]
    return odd, even


def current_numbers(out: Path, releases: Sequence[str], ids: Mapping[str, str] | None = None) -> Numbers:
    """Each rule of each release (as numbered there): its lineage and current
    number. ``ids`` renames the releases' source ids (a thinned run's to the
    full run's: a source's id depends on the other files' names)."""
    ids = ids or {sid: sid for sid in releases}
    wanted = set(releases)
    keep = {sid for sid, full in ids.items() if full in wanted}
    return {(ids[r["source_id"]], r["number_as_written"]): (r["lineage_id"], r["canonical_number"])
            for r in table_rows(out, "renumber_map")
            if r["source_id"] in keep and r["number_as_written"] and is_rule_row(r)}


def divergences(full: Numbers, thinned: Numbers, order: Sequence[str]) -> list[Divergence]:
    """The rules both runs number that they follow to different current
    numbers, one ``Divergence`` per lineage of the full chain and number
    the thinned one gives, named by its oldest row.

    >>> full = {("r1", "1.1"): ("A", "2.1"), ("r2", "1.1"): ("A", "2.1"), ("r1", "1.2"): ("B", "2.2"),
    ...         ("r1", "1.3"): ("C", "")}
    >>> thin = {("r1", "1.1"): ("X", ""), ("r2", "1.1"): ("X", ""), ("r1", "1.2"): ("Y", "2.2"),
    ...         ("r1", "1.3"): ("Z", "2.3")}
    >>> [(d.number, d.full, d.thinned, d.rows) for d in divergences(full, thin, ["r1", "r2"])]
    [('1.1', '2.1', '', 2), ('1.3', '', '2.3', 1)]
    """
    place = {sid: k for k, sid in enumerate(order)}
    differ = sorted((k for k in thinned if k in full and thinned[k][1] != full[k][1]),
                    key=lambda k: (place.get(k[0], len(place)), k[1]))
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for k in differ:
        groups.setdefault((full[k][0], thinned[k][1]), []).append(k)
    return [Divergence(ks[0][0], ks[0][1], full[ks[0]][1], thinned[ks[0]][1], len(ks)) for ks in groups.values()]


def thinned_run(raw: Path, data: Published, releases: Sequence[str], work: Path) -> tuple[Path, dict[str, str]]:
    """Run the job on ``releases`` alone (links to their raw files) in ``work``:
    its output folder, and its source ids mapped to the full run's (by path)."""
    folder = work / "raw"
    link_tree([raw / data.sources[sid]["path"] for sid in releases], raw, folder)
    out = work / "out"
    run_job(folder, out, Settings(), cache_dir=work / "cache")
    by_path = {data.sources[sid]["path"]: sid for sid in releases}
    return out, {r["source_id"]: by_path[r["path"]] for r in table_rows(out, "sources") if r["path"] in by_path}


def _made_with(out: Path) -> str:
    """The fingerprint of the run that published ``out`` (its inputs and code)."""
    report = _previous_report(out)
    made = report.get("fingerprint") if isinstance(report, dict) else None
    if not isinstance(made, str):
        raise TraceError(f"{out} holds no published dataset (no readable run.json): run `make ingest` first, "
                         "and give the raw folder first, the dataset's second")
    return made


def _check_made_from(raw: Path, out: Path, data: Published, made: str) -> None:
    """Refuse a dataset that ``raw`` (as it is now, with this code) did not make:
    its divergences would be the edits', not the thinning's."""
    missing = [sid for sid in data.releases if not (raw / data.sources[sid]["path"]).is_file()]
    if missing:
        raise TraceError(f"{raw} lacks the raw files of {len(missing)} of {out}'s releases "
                         f"({', '.join(missing[:3])}): is it the folder {out} was made from?")
    if made != fingerprint(raw, Settings()):
        raise TraceError(f"{out} was not made from {raw} as it is now with this code (a file or the pipeline "
                         f"changed since): run `make ingest` first")


def report(raw: Path, out: Path) -> str:
    """``make lineage-stability`` (``python -m pipeline lineage-stability``): the divergences of
    each thinned chain from the full one, one line each; a ``TraceError`` for a dataset
    that ``raw`` as it is now did not make, or one of fewer than three releases."""
    made = _made_with(out)
    data = Published.load(out)
    if len(data.releases) < 3:
        n = len(data.releases)
        raise TraceError(f"{out} has {n} official release{'' if n == 1 else 's'}: thinning needs three or more")
    _check_made_from(raw, out, data, made)
    full = current_numbers(out, data.releases)
    lines = []
    for name, half in zip(("odd", "even"), halves(data.releases), strict=True):
        with tempfile.TemporaryDirectory(prefix=f"thinned-{name}-") as tmp:
            thin_out, ids = thinned_run(raw, data, half, Path(tmp))
            thin = current_numbers(thin_out, half, ids)
        found = divergences(full, thin, data.releases)
        common = sum(1 for k in thin if k in full)
        differ = sum(d.rows for d in found)
        lines.append(f"{name} releases only ({len(half)} of {len(data.releases)}): {differ} of {common} rules "
                     f"({differ / max(common, 1):.2%}) have another current number, in {len(found)} lineages")
        lines += [f"  {d.source_id} {d.number}: {d.full or 'ended'} in the full chain, "
                  f"{d.thinned or 'ended'} thinned ({d.rows} rows)" for d in found]
    return "\n".join(lines)
