"""The scheduled job: build, validate and publish ``out/``, and say what changed.

One call of ``run_job`` is one run: it refuses folders that overlap, takes
the lock, refuses an output folder that is not the pipeline's, skips the work
when neither the inputs nor the pipeline changed since the published run (and
its outputs are all there), else builds everything in a staging folder,
validates it, refuses to publish a dataset that shrank far below the published
one, writes ``run.json`` and ``changes.md``, swaps the folder in, and prunes the
cache. Any exception before the swap leaves the published ``out/`` untouched.
Dumps whose releases ``raw/`` lacks map through the history the package ships,
or through a dataset published earlier (``history``); run.json names it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import stat
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.cache import SourceCache, code_version
from pipeline.changes import Worded, compare
from pipeline.errors import Shrinking
from pipeline.ingest import checks
from pipeline.ingest.read import discover
from pipeline.lineage import history as histories
from pipeline.publish import datapackage as package
from pipeline.publish import emit
from pipeline.publish import folder as publish
from pipeline.publish.rows import COLUMNS
from pipeline.query.dataset import source_status
from pipeline.run import Corpus, Progress, Settings, build

RUN_JSON = "run.json"
CHANGES = "changes.md"
# A run that would lose more than this share of the published run's sources,
# or of its rules, publishes nothing unless told the shrink is meant.
SHRINK_LIMIT = 0.25


# run.json "status": every source ok; some suspect (read, a self-check failed);
# some quarantined (not read). Either of the last two exits 3.
RUN_STATUSES = ("ok", "suspect", "quarantined")


@dataclass(frozen=True, slots=True)
class JobResult:
    """What a run did: its status, the run.json document, and its problems, one
    line each (``quarantined: ...`` for a source not read, ``suspect: ...`` for
    each failed self-check)."""

    status: str  # "published", "unchanged"
    report: dict[str, Any]
    problems: list[str]
    corpus: Corpus | None = None  # what was built (None when the run was unchanged)


def fingerprint(raw: Path, settings: Settings, history: Path | None = None) -> str:
    """Inputs (paths and bytes), limits, code (the shipped history with it) and the
    dataset named as the history: equal fingerprints, equal output."""
    digest = hashlib.sha256(f"{code_version()}\0{settings.limits()!r}".encode())
    if history is not None:
        digest.update(_history_identity(history).encode())
    for path in discover(raw):
        digest.update(path.relative_to(raw).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):  # a named pipe would block a read
                digest.update(f"not a file {stat.S_IFMT(info.st_mode)}".encode())
                continue
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError as exc:
            digest.update(f"unreadable {exc.errno}".encode())
    return digest.hexdigest()


def _history_identity(history: Path) -> str:
    """A published folder named as the history: its place, and what its run.json
    says its inputs and outputs were (a republished folder is another history)."""
    report = _previous_report(history)
    outputs = report.get("outputs")
    hashes = sorted(str(o.get("sha256")) for o in outputs if isinstance(o, dict)) if isinstance(outputs, list) else []
    return json.dumps([str(history.resolve()), report.get("fingerprint"), hashes])


def _previous_report(out: Path) -> dict[str, Any]:
    try:
        report: dict[str, Any] = json.loads((out / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return report


def _outputs_intact(out: Path, report: dict[str, Any]) -> bool:
    """Every output the report lists is there with its size and last-modified
    time (a cheap check, no hashing: a byte changed in place changes the time)."""
    try:
        for o in report["outputs"]:
            info = (out / o["file"]).stat()
            if info.st_size != o["bytes"] or info.st_mtime_ns != o.get("mtime_ns", info.st_mtime_ns):
                return False
        return True
    except (OSError, KeyError, TypeError, AttributeError):
        return False


def _ok_inputs(report: dict[str, Any]) -> list[dict[str, Any]]:
    inputs = report.get("inputs")
    if not isinstance(inputs, list):
        return []
    return [i for i in inputs if isinstance(i, dict) and i.get("status") == "ok"]


def _rows(report: dict[str, Any], name: str) -> int | None:
    outputs = report.get("outputs")
    for item in outputs if isinstance(outputs, list) else []:
        if isinstance(item, dict) and item.get("file") == name and isinstance(item.get("rows"), int):
            return int(item["rows"])
    return None


def shrinkage(previous: dict[str, Any], corpus: Corpus, rules: int) -> str:
    """Why publishing ``corpus`` (with ``rules`` canonical rules) would shrink the
    dataset far below the ``previous`` run.json, or "" when it would not.

    A previous source is gone when no ingested source has its id or its bytes.
    """
    if not corpus.sources:
        return "no sources found"
    before = _ok_inputs(previous)
    ok = [s for s in corpus.sources if s.status == "ok"]
    ids, shas = {s.source_id for s in ok}, {s.sha256 for s in ok}
    gone = [str(i.get("source_id")) for i in before if i.get("source_id") not in ids and i.get("sha256") not in shas]
    if before and len(gone) > SHRINK_LIMIT * len(before):
        named = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        # Still there but not read now (a limit, damage): say why, as the run would have.
        flagged = [s.error for s in corpus.sources if s.source_id in gone and s.status != "ok" and s.error]
        why = f"; not ok now: {flagged[0]}" + (f" (and {len(flagged) - 1} more)" if len(flagged) > 1 else "") \
            if flagged else ""
        return f"{len(gone)} of the {len(before)} sources of the published run would be gone ({named}){why}"
    rules_before = _rows(previous, "rules.csv")
    if rules_before and rules < (1 - SHRINK_LIMIT) * rules_before:
        return f"the reference numbering would have {rules} rules instead of {rules_before}"
    return ""


def run_job(
    raw: Path, out: Path, settings: Settings, *, full: bool = False, cache_dir: Path | None = None,
    progress: Progress | None = None, allow_shrink: bool = False, history: Path | None = None,
) -> JobResult:
    """One run of the job (see the module docstring); ``history``, a published
    folder to map through instead of the shipped history. Raises publish.Overlap,
    publish.Busy, publish.ForeignOutput, Shrinking, OSError, package.InvalidOutput,
    DatasetError (a ``history`` that is no published dataset with a release); the
    published ``out/`` is unchanged when it does."""
    started, started_at = time.monotonic(), _now()
    publish.check_folders(raw, out, cache_dir)
    if out.is_symlink():
        out = out.resolve()  # publish into the folder it names; the link stays
    publish.check_owned(out)  # before the lock too, so that a refusal leaves no lock file behind
    with publish.lock(out):
        publish.check_owned(out)
        print_ = fingerprint(raw, settings, history)
        previous = _previous_report(out)
        if (not full and previous.get("fingerprint") == print_ and previous.get("status") in RUN_STATUSES
                and _outputs_intact(out, previous)):
            report = dict(previous)
            report.update(
                run="unchanged", started_at=started_at, finished_at=_now(),
                duration_seconds=round(time.monotonic() - started, 3),
            )
            report["stages"] = dict(previous.get("stages", {}), sources_parsed=0)
            # changes.md stays as it is: it tells what the last run that published changed
            # (run.json's list of outputs, kept, names it with its sha256).
            _replace_file(out / RUN_JSON, _json(report))
            _replace_file(out / publish.MARKER, publish.marker_text(publish.owned_names(out) or ()))
            if cache_dir is not None:  # what runs that failed or were killed since wrote there goes
                SourceCache(cache_dir).prune_unused()
            return JobResult("unchanged", report, list(report.get("problems", [])))
        cache = None if cache_dir is None else SourceCache(cache_dir, reuse=not full)
        lent = histories.published(history) if history is not None else histories.shipped()
        corpus = build(raw, settings, progress, cache, lent)
        with publish.staging(out) as staging:
            with corpus.clock("emit"):
                written = emit.write(corpus, staging)
                hashes = {**written.sha256, **package.write(staging, written.sha256, corpus.history_used)}
            counts = written.rows
            (staging / CHANGES).write_text(changes(out, written.rules, corpus), encoding="utf-8")
            why = shrinkage(previous, corpus, counts.get("rules.csv", 0))
            if why and not allow_shrink:
                raise Shrinking(why)
            report = _report(corpus, staging, counts, hashes, print_, (started, started_at))
            (staging / RUN_JSON).write_text(_json(report), encoding="utf-8")
            (staging / publish.MARKER).write_text(publish.marker_text(publish.written_files(staging)),
                                                  encoding="utf-8")
            publish.swap_in(staging, out)
        if cache is not None:
            cache.prune({cache.key(s.sha256, s.path, s.source_id, settings.limits())
                         for s in corpus.sources if s.sha256} | set(corpus.step_keys))
    return JobResult("published", report, report["problems"], corpus)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def _replace_file(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _report(
    corpus: Corpus, staging: Path, counts: dict[str, int], hashes: dict[str, str], print_: str,
    started: tuple[float, str],
) -> dict[str, Any]:
    """run.json: ``started`` is the run's start, on the monotonic clock and as a UTC time."""
    els = corpus.elements
    kinds = Counter(el.kind for el in els)
    noise = Counter(el.noise_kind for el in els if el.kind == "noise")
    rules = [el for el in els if el.kind == "rule"]
    quarantined = [s for s in corpus.sources if s.status == "quarantined"]
    suspect = [s for s in corpus.sources if s.status == "suspect"]
    outputs = []
    for path in sorted(staging.rglob("*")):
        name = path.relative_to(staging).as_posix()
        if name in (RUN_JSON,) or not path.is_file():
            continue
        info = path.stat()
        outputs.append({
            "file": name, "bytes": info.st_size, "mtime_ns": info.st_mtime_ns,
            "sha256": hashes.get(name) or package.sha256_of(path),
            "rows": counts.get(name),
        })
    return {
        "pipeline_version": __version__,
        "code_version": code_version(),
        "fingerprint": print_,
        # "full": every source read anew; "incremental": some came from the cache.
        "run": "incremental" if corpus.parsed < len(corpus.sources) else "full",
        "status": "quarantined" if quarantined else "suspect" if suspect else "ok",
        "exit_code": 3 if quarantined or suspect else 0,
        "problems": [line for s in corpus.sources for line in checks.problems(s)],
        "started_at": started[1],
        "finished_at": _now(),
        "duration_seconds": round(time.monotonic() - started[0], 3),
        "reference": corpus.reference,
        # The history the dumps were mapped through, when raw/ lacked the releases:
        # "shipped cr-...", or the folder given with --history; "" when raw/ had them.
        "history": corpus.history_used,
        "inputs": [
            {"path": s.path, "source_id": s.source_id, "sha256": s.sha256, "bytes": s.bytes,
             "status": s.status, "error": s.error,
             "checks": {c.name: {"passed": c.passed, "detail": c.detail} for c in s.checks}}
            for s in corpus.sources
        ],
        "stages": {
            "sources": len(corpus.sources),
            "sources_parsed": corpus.parsed,
            "sources_cached": len(corpus.sources) - corpus.parsed,
            "sources_quarantined": len(quarantined),
            "sources_suspect": len(suspect),
            "lines_read": sum(s.lines for s in corpus.sources),
            "elements": len(els),
            "elements_by_kind": dict(sorted(kinds.items())),
            "noise_by_kind": dict(sorted(noise.items())),
            "duplicates": sum(1 for el in els if el.duplicate_of),
            "rules_mapped": sum(1 for el in rules if el.canonical_number),
            "rules_unmapped": sum(1 for el in rules if not el.canonical_number),
        },
        "outputs": outputs,
        "seconds": {
            "wall": {k: round(v, 3) for k, v in corpus.clock.wall.items()},
            "cpu_per_source_stages": {k: round(v, 3) for k, v in corpus.clock.cpu.items()},
        },
    }


def _reference(out: Path) -> str:
    """The reference release of a published folder (``run.json``), or ''."""
    report = _previous_report(out)
    found = report.get("reference", "") if isinstance(report, dict) else ""
    return found if isinstance(found, str) else ""


def _read_csv(path: Path, *required: str) -> list[dict[str, str]]:
    """The rows of a CSV; none when it is missing, damaged, or lacks a ``required`` column."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            if not set(required) <= set(reader.fieldnames or ()):
                return []
            return [{k: v or "" for k, v in row.items() if isinstance(k, str)} for row in reader]
    except (OSError, ValueError, csv.Error):
        return []


def changes(old: Path, rules: Sequence[Sequence[Any]], corpus: Corpus) -> str:
    """``changes.md``: sources and rules that differ from the published run in
    ``old``; ``rules`` are the rows of the rules table of this run (as written),
    compared with the published ones by ``pipeline.changes.compare``.

    A quarantined source is listed as quarantined (with its reason), never as
    added or changed; one that was quarantined before and is ingested now is added.
    A suspect source (read, but a self-check failed) is added or changed like any
    other, and listed as suspect with its reason.
    """
    old_all = {r["source_id"]: r for r in _read_csv(old / "sources.csv", "source_id", "sha256", "status")}
    old_sources = {k: r["sha256"] for k, r in old_all.items() if r["status"] != "quarantined"}
    new_sources = {s.source_id: s.sha256 for s in corpus.sources if s.status != "quarantined"}
    old_flagged = {k: (source_status(r), r["sha256"]) for k, r in old_all.items() if source_status(r) != "ok"}
    newly = [s for s in corpus.sources if s.status != "ok" and old_flagged.get(s.source_id) != (s.status, s.sha256)]
    quarantined = [s.error for s in newly if s.status == "quarantined"]
    suspect = [s.error for s in newly if s.status == "suspect"]
    still = sum(1 for s in corpus.sources if s.status != "ok") - len(newly)
    old_rules = _read_csv(old / "rules.csv", "number", "text")
    new_rules = [dict(zip(COLUMNS["rules"], row, strict=True)) for row in rules]
    # Rules are matched by lineage (by number against a dataset published before
    # lineages, or when the reference release is the very one published before:
    # its rules are the same, and only how they were followed back can differ).
    same_reference = (_reference(old) == corpus.reference
                      and old_sources.get(corpus.reference) == new_sources.get(corpus.reference))
    by_lineage = bool(old_rules and old_rules[0].get("lineage_id")) and not same_reference
    key = "lineage_id" if by_lineage else "number"
    before = {r[key]: Worded(r["number"], r["text"]) for r in old_rules}
    after: dict[str, Worded] = {}
    for r in new_rules:
        after.setdefault(r[key], Worded(r["number"], r["text"]))
    lineage_before = {r[key]: r["lineage_id"] for r in old_rules if "lineage_id" in r}
    retraced = [r["number"] for r in new_rules
                if r[key] in lineage_before and lineage_before[r[key]] != r.get("lineage_id", "")]
    found = compare(dict.fromkeys([*after, *before]), before.get, after.get)
    added = [c.new_number for c in found if c.kind == "added"]
    edited = [c.new_number for c in found if c.kind == "edited"]
    moved = [f"{c.old_number} → {c.new_number}" + (" (edited)" if c.kind == "moved+edited" else "")
             for c in found if c.kind in ("moved", "moved+edited")]
    removed = [c.old_number for c in found if c.kind == "removed"]
    # A number added and removed at once is one rule followed back another way.
    both = set(added) & set(removed)
    retraced += sorted(both)
    added, removed = [n for n in added if n not in both], [n for n in removed if n not in both]
    lines = ["# Changes", ""]
    first = not old_all
    if first:
        lines += ["First published run.", ""]
    old_reference = _reference(old)
    moved_reference = not first and bool(old_reference) and old_reference != corpus.reference
    if moved_reference:  # every canonical number is now read in another release's numbering
        lines += [f"The reference numbering is now {corpus.reference}'s (it was {old_reference}'s): "
                  "canonical numbers are the numbers it gives.", ""]
    section = [
        ("Sources added", sorted(set(new_sources) - set(old_sources))),
        ("Sources quarantined", quarantined),
        ("Sources suspect (read, but a self-check failed)", suspect),
        ("Sources removed", sorted(set(old_sources) - {s.source_id for s in corpus.sources})),
        # Never read, so nothing of theirs leaves the dataset: not "removed".
        ("Sources gone that were quarantined (never read)", sorted(set(old_all) - set(old_sources)
                                                           - {s.source_id for s in corpus.sources})),
        ("Sources changed", sorted(k for k in set(new_sources) & set(old_sources) if new_sources[k] != old_sources[k])),
        ("Rules added", added), ("Rules edited", edited), ("Rules moved", moved), ("Rules removed", removed),
        ("Rules whose lineage was re-traced (the same rule, a new lineage_id)", retraced),
    ]
    if not first and not moved_reference and not any(items for _, items in section):
        lines.append("No changes to sources or rules since the previous run.")
    if still:
        lines += [f"{still} source{'s' if still > 1 else ''} still quarantined or suspect, as in the previous run "
                  "(`status` and `error` in sources.csv).", ""]
    for title, items in section:
        if items and (not first or title.startswith("Sources")):
            lines += [f"## {title} ({len(items)})", ""]
            lines += [f"- {x}" for x in items[:100]]
            if len(items) > 100:
                lines.append(f"- … and {len(items) - 100} more")
            lines.append("")
    if first:
        lines.append(f"{len(new_rules)} rules in the reference numbering ({corpus.reference}).")
    return "\n".join(lines).rstrip() + "\n"
