"""The benchmark's own measures: the CPU seconds of a run's processes, and its report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline import bench

# A child that starts a grandchild spending about 0.6 s of CPU, as the job's
# forkserver starts the alignment workers: neither its child nor the job's.
_BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
_PARENT = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {_BURN!r}], check=True)\n"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux /proc")
def test_group_usage_counts_the_cpu_of_every_process_of_the_group() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _PARENT], start_new_session=True)
    seen: dict[int, float] = {}
    try:
        while proc.poll() is None:
            _, _, spent = bench._group_usage(proc.pid)
            seen.update(spent)
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0
    others = {pid: s for pid, s in seen.items() if pid != proc.pid}
    assert others, "the grandchild was never seen"
    # The grandchild burned 0.6 s; a sample every 0.05 s misses at most its last 0.05 s.
    assert max(others.values()) >= 0.5
    assert sum(seen.values()) < 5  # nothing outside the group (the test itself, pytest's other work)


def test_group_usage_of_a_group_with_no_process() -> None:
    rss, pss, cpu = bench._group_usage(2**22 + 7)  # above pid_max's default: no such group
    assert (rss, pss, cpu) == (0, 0, {})


def _doc(cpu: float | None) -> dict:
    cold = {"seconds": 20.0, "run": "published", "status": "ok", "problems": 0,
            "stage_seconds": {"wall": {"read": 4.0, "clean": 6.0, "align": 4.0, "dedupe": 1.0, "emit": 5.0},
                              "cpu_per_source_stages": {"decode": 1.5, "parse": 2.5}},
            "peak_mb": 700.0, "peak_tree_mb": 900.0, "peak_tree_pss_mb": 850.0}
    if cpu is not None:
        cold["cpu_seconds"] = cpu
    return {"machine": {"cpus": 2, "python": "3.11.7"}, "load": [1.0, 1.0, 1.0],
            "corpus": {"path": "raw", "files": 77, "mb": 48.0},
            "generated": {"base": "cr-2026-08-07.txt", "after": "2026-08-07", "seed": 14},
            "runs": [{"scale": "real", "files": 77, "mb": 48.0, "cold": cold}]}


def test_render_shows_cpu_seconds_and_cores_busy() -> None:
    text = bench.render(_doc(36.0))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("scale files"))
    header, row = lines[at], lines[at + 1]
    cells = dict(zip(header.replace("total s", "total_s").replace("peak MB", "peak_MB").replace(
        "all MB", "all_MB").replace("all PSS", "all_PSS").replace("cpu s", "cpu_s").split(), row.split(), strict=True))
    assert cells["cpu_s"] == "36.0"
    assert cells["cores"] == "1.80"  # 36 CPU seconds in 20 wall seconds
    assert "at least cpu s / 2" in text


def test_render_of_results_from_before_cpu_seconds() -> None:
    """``previous.json`` from an older bench has no cpu_seconds: a dash, not an error."""
    row = next(line for line in bench.render(_doc(None)).splitlines() if line.lstrip().startswith("real"))
    assert row.split()[11:13] == ["-", "-"]
    json.dumps(_doc(None))  # still plain JSON


def test_render_shows_the_cpu_seconds_of_the_incremental_run() -> None:
    doc = _doc(36.0)
    doc["runs"][0]["cached"] = {"seconds": 0.05, "cpu_seconds": 0.4}
    doc["runs"][0]["incremental"] = {"seconds": 10.5, "cpu_seconds": 16.25, "sources_parsed": 1,
                                     "peak_mb": 520.0, "added": "gen-2026-09-30.txt"}
    lines = bench.render(doc).splitlines()
    at = next(i for i, line in enumerate(lines) if "incremental s" in line)
    assert lines[at + 1].split() == ["real", "0.05", "10.50", "16.2", "1", "520", "gen-2026-09-30.txt"]


def test_a_corpus_that_is_not_a_folder_of_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before anything is generated or run: the message names the folder."""
    missing, empty, file = tmp_path / "missing", tmp_path / "empty", tmp_path / "a.txt"
    empty.mkdir()
    file.write_text("702.1a text\n", encoding="utf-8")
    for corpus, why in ((missing, "not a folder"), (file, "not a folder"), (empty, "no files to time")):
        assert bench.main(["--corpus", str(corpus)]) == 2
        err = capsys.readouterr().err
        assert f"{corpus}: {why}" in err
        assert "generating" not in err
