"""``make bench``: the full ingest at 1x and 2x the bundled data, against two references.

The bundled data is 46 MB of distinct real text (72 official releases and five
dumps), so 1x measures the pipeline on distinct work; 2x adds a copy of every
file (which measures the reuse of identical files as much as the pipeline).
Each scale replicates every file of ``raw/`` under distinct source ids and runs
the whole job (cold: no cache) in a fresh process, reporting per-stage seconds,
MB/s and peak memory; then an unchanged re-run (everything cached). On the same
bytes it times two references: a bare Lark parse with the project's grammar,
and a plain decode-and-split of every line. Results go to
``bench/results/latest.json`` (the previous one is kept as ``previous.json``
and compared against).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SCALES = (1, 2)
STAGES = ("decode", "parse", "clean", "align", "dedupe", "emit")


def make_corpus(raw: Path, dest: Path, copies: int) -> int:
    """Replicate every file of ``raw`` ``copies`` times under distinct names; returns bytes."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    total = 0
    for k in range(copies):
        for path in sorted(p for p in raw.rglob("*") if p.is_file()):
            target = dest / f"{path.stem}__copy{k}{path.suffix}"
            os.link(path, target) if _same_device(raw, dest) else shutil.copyfile(path, target)
            total += path.stat().st_size
    return total


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def one_run(raw: Path, out: Path, full: bool) -> dict[str, Any]:
    """Run the job once in this process and describe it (called in a fresh process)."""
    from pipeline.job import run_job
    from pipeline.run import Settings

    start = time.perf_counter()
    result = run_job(raw, out, Settings(), full=full, cache_dir=out.parent / "cache")
    seconds = time.perf_counter() - start
    report = result.report
    return {
        "seconds": round(seconds, 3),
        "status": result.status,
        "sources_parsed": report["stages"]["sources_parsed"],
        "stage_seconds": report.get("seconds", {}) if result.status == "published" else {},
        "peak_mb": _peak_mb(),
    }


def references(raw: Path) -> dict[str, float]:
    """Seconds for the two references on the bytes of ``raw``: a bare Lark parse, decode-and-split."""
    from pipeline.decode import to_text
    from pipeline.parse import parse_with_lark

    files = [p.read_bytes() for p in sorted(raw.iterdir())]
    start = time.perf_counter()
    texts = []
    for data in files:
        text = to_text(data)[0]
        texts.append(text.replace("\r\n", "\n").replace("\r", "\n"))
        text.splitlines()
    split = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        parse_with_lark(text)
    lark = time.perf_counter() - start
    return {"decode_and_split": round(split, 3), "lark_parse": round(lark, 3)}


def _run_child(*args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.bench", *args], check=True, capture_output=True, text=True, cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    work = ROOT / "bench" / "work"
    rows: list[dict[str, Any]] = []
    for scale in SCALES:
        raw = work / f"x{scale}" / "raw"
        out = work / f"x{scale}" / "out"
        shutil.rmtree(out.parent / "cache", ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        size = make_corpus(ROOT / "raw", raw, scale)
        cold = _run_child("--one", str(raw), str(out), "--full")
        warm = _run_child("--one", str(raw), str(out))
        refs = _run_child("--refs", str(raw))
        rows.append({"scale": scale, "mb": round(size / 1e6, 2), "cold": cold, "warm": warm, "refs": refs})
        print(f"x{scale}: {size / 1e6:.1f} MB in {cold['seconds']:.1f} s, re-run {warm['seconds']:.2f} s",
              file=sys.stderr)
    doc = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "runs": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    latest = RESULTS / "latest.json"
    previous = json.loads(latest.read_text()) if latest.exists() else None
    if previous:
        shutil.copyfile(latest, RESULTS / "previous.json")
    latest.write_text(json.dumps(doc, indent=1) + "\n")
    print(render(doc, previous))


def _stage_seconds(row: dict[str, Any]) -> list[float | None]:
    """Seconds of each stage of a run: CPU for the per-source stages, wall for the rest."""
    wall = row["cold"]["stage_seconds"].get("wall", {})
    cpu = row["cold"]["stage_seconds"].get("cpu_per_source_stages", {})
    return [cpu.get(s) if s in ("decode", "parse") else wall.get(s) for s in STAGES]


def render(doc: dict[str, Any], previous: dict[str, Any] | None) -> str:
    """The table ``make bench`` prints."""
    lines = [f"machine: {doc['machine']['cpus']} cores, Python {doc['machine']['python']}", ""]
    head = f"{'scale':>5} {'MB':>6} " + " ".join(f"{s:>7}" for s in STAGES)
    head += f" {'total s':>8} {'MB/s':>6} {'peak MB':>8} {'re-run s':>8} {'parsed':>6}"
    lines.append(head)
    for row in doc["runs"]:
        cells = [f"{v:>7.2f}" if v is not None else f"{'-':>7}" for v in _stage_seconds(row)]
        total = row["cold"]["seconds"]
        lines.append(
            f"{'x' + str(row['scale']):>5} {row['mb']:>6.1f} " + " ".join(cells)
            + f" {total:>8.2f} {row['mb'] / total:>6.1f} {row['cold']['peak_mb']:>8.0f}"
            + f" {row['warm']['seconds']:>8.2f} {row['warm']['sources_parsed']:>6}"
        )
    lines.append("(decode and parse: CPU seconds summed over parallel workers; other stages: wall seconds)")
    lines.append("")
    lines.append(f"{'MB/s':>12} " + " ".join(f"{s:>7}" for s in STAGES))
    for row in doc["runs"]:
        rates = [f"{row['mb'] / v:>7.1f}" if v else f"{'-':>7}" for v in _stage_seconds(row)]
        lines.append(f"{'x' + str(row['scale']):>12} " + " ".join(rates))
    lines.append("")
    lines.append(
        f"{'scale':>5} {'parse MB/s':>10} {'Lark MB/s':>10} {'ratio':>6} {'split MB/s':>10} {'ingest/split':>12}"
    )
    for row in doc["runs"]:
        parse = row["cold"]["stage_seconds"].get("cpu_per_source_stages", {}).get("parse") or float("nan")
        lark, split = row["refs"]["lark_parse"], row["refs"]["decode_and_split"]
        lines.append(
            f"{'x' + str(row['scale']):>5} {row['mb'] / parse:>10.1f} {row['mb'] / lark:>10.1f}"
            f" {lark / parse:>6.1f} {row['mb'] / split:>10.1f} {row['cold']['seconds'] / split:>12.1f}"
        )
    first, last = doc["runs"][0], doc["runs"][-1]
    growth = last["cold"]["seconds"] / first["cold"]["seconds"]
    lines.append("")
    lines.append(f"time growth x{last['scale']}/x{first['scale']}: {growth:.2f} (linear would be {last['scale']})")
    if previous:
        old = {r["scale"]: r["cold"]["seconds"] for r in previous["runs"]}
        diffs = [f"x{r['scale']} {r['cold']['seconds'] - old[r['scale']]:+.2f} s"
                 for r in doc["runs"] if r["scale"] in old]
        lines.append(f"against the previous run ({previous['when']}): " + ", ".join(diffs))
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one_run(Path(sys.argv[2]), Path(sys.argv[3]), "--full" in sys.argv)))
    elif sys.argv[1:2] == ["--refs"]:
        print(json.dumps(references(Path(sys.argv[2]))))
    else:
        main()
