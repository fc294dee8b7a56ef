"""The scheduled job: build, validate and publish ``out/``, and say what changed.

One call of ``run_job`` is one run: it takes the lock, skips the work when
neither the inputs nor the pipeline changed since the published run, else
builds everything in a staging folder, validates it, writes ``run.json`` and
``changes.md``, and swaps the folder in. Any exception before the swap leaves
the published ``out/`` untouched.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import stat
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import __version__, checks, emit, package, publish
from pipeline.align import masked, match_text
from pipeline.cache import SourceCache, code_version
from pipeline.run import Corpus, Progress, Settings, build, discover

RUN_JSON = "run.json"
CHANGES = "changes.md"
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


def fingerprint(raw: Path, settings: Settings) -> str:
    """Inputs (paths and bytes), limits and code: equal fingerprints, equal output."""
    digest = hashlib.sha256(f"{code_version()}\0{settings.limits()!r}".encode())
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


def _previous_report(out: Path) -> dict[str, Any]:
    try:
        report: dict[str, Any] = json.loads((out / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return report


def run_job(
    raw: Path, out: Path, settings: Settings, *, full: bool = False, cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> JobResult:
    """One run of the job (see the module docstring). Raises publish.Busy, OSError,
    package.InvalidOutput; the published ``out/`` is unchanged when it does."""
    started = time.monotonic()
    with publish.lock(out):
        print_ = fingerprint(raw, settings)
        previous = _previous_report(out)
        if not full and previous.get("fingerprint") == print_ and previous.get("status") in RUN_STATUSES:
            report = dict(previous)
            report.update(
                run="unchanged", started_at=_now(), duration_seconds=round(time.monotonic() - started, 3),
            )
            report["stages"] = dict(previous.get("stages", {}), sources_parsed=0)
            _replace_file(out / RUN_JSON, _json(report))
            _replace_file(out / CHANGES, "# Changes\n\nNo changes since the previous run: the inputs and the "
                                         "pipeline are the same.\n")
            return JobResult("unchanged", report, list(report.get("problems", [])))
        cache = None if cache_dir is None else SourceCache(cache_dir, reuse=not full)
        corpus = build(raw, settings, progress, cache)
        staging = publish.staging_dir(out)
        try:
            with corpus.clock("emit"):
                counts = emit.write(corpus, staging)
                hashes = package.write(staging)
            (staging / CHANGES).write_text(changes(out, staging, corpus), encoding="utf-8")
            report = _report(corpus, staging, counts, hashes, print_, started)
            (staging / RUN_JSON).write_text(_json(report), encoding="utf-8")
            publish.swap_in(staging, out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
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
    corpus: Corpus, staging: Path, counts: dict[str, int], hashes: dict[str, str], print_: str, started: float
) -> dict[str, Any]:
    els = corpus.elements
    kinds = Counter(el.kind for el in els)
    noise = Counter(el.noise_kind for el in els if el.kind == "noise")
    rules = [el for el in els if el.kind == "rule"]
    quarantined = [s for s in corpus.sources if s.status == "quarantined"]
    suspect = [s for s in corpus.sources if s.status == "suspect"]
    outputs = []
    for path in sorted(staging.iterdir()):
        if path.name in (RUN_JSON,) or not path.is_file():
            continue
        outputs.append({
            "file": path.name, "bytes": path.stat().st_size,
            "sha256": hashes.get(path.name) or package.sha256_of(path),
            "rows": counts.get(path.name),
        })
    return {
        "pipeline_version": __version__,
        "code_version": code_version(),
        "fingerprint": print_,
        "run": "full",
        "status": "quarantined" if quarantined else "suspect" if suspect else "ok",
        "exit_code": 3 if quarantined or suspect else 0,
        "problems": [line for s in corpus.sources for line in checks.problems(s)],
        "started_at": _now(),
        "duration_seconds": round(time.monotonic() - started, 3),
        "reference": corpus.reference,
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


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    except OSError:
        return []


def changes(old: Path, new: Path, corpus: Corpus) -> str:
    """``changes.md``: sources and rules that differ from the published run."""
    old_sources = {r["source_id"]: r["sha256"] for r in _read_csv(old / "sources.csv")}
    new_sources = {s.source_id: s.sha256 for s in corpus.sources}
    old_rules = {r["number"]: r["text"] for r in _read_csv(old / "rules.csv")}
    new_rules = {r["number"]: r["text"] for r in _read_csv(new / "rules.csv")}
    fold = {n: masked(match_text(t)) for n, t in old_rules.items()}
    old_by_text = {t: n for n, t in fold.items()}
    added, edited, moved, removed = [], [], [], []
    new_texts = set()
    for number, text in new_rules.items():
        key = masked(match_text(text))
        new_texts.add(key)
        if number in old_rules:
            if fold[number] != key:
                edited.append(number)
        elif key in old_by_text:
            moved.append(f"{old_by_text[key]} → {number}")
        else:
            added.append(number)
    for number, key in fold.items():
        if number not in new_rules and key not in new_texts:
            removed.append(number)
    lines = ["# Changes", ""]
    if not old_sources:
        lines += ["First published run.", ""]
    section = [
        ("Sources added", sorted(set(new_sources) - set(old_sources))),
        ("Sources removed", sorted(set(old_sources) - set(new_sources))),
        ("Sources changed", sorted(k for k in set(new_sources) & set(old_sources) if new_sources[k] != old_sources[k])),
        ("Rules added", added), ("Rules edited", edited), ("Rules moved", moved), ("Rules removed", removed),
    ]
    if old_sources and not any(items for _, items in section):
        lines.append("No changes to sources or rules since the previous run.")
    for title, items in section:
        if items and (old_sources or title.startswith("Sources")):
            lines += [f"## {title} ({len(items)})", ""]
            lines += [f"- {x}" for x in items[:100]]
            if len(items) > 100:
                lines.append(f"- … and {len(items) - 100} more")
            lines.append("")
    if not old_sources:
        lines.append(f"{len(new_rules)} rules in the reference numbering ({corpus.reference}).")
    return "\n".join(lines).rstrip() + "\n"
