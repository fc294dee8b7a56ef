"""The benchmark's own measures: the CPU seconds of a run's processes, and its report."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.tools import bench, benchgen
from tests.conftest import Bundled

_PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux /proc")

# Burns about 0.6 s of CPU, then waits, so that a later sample sees all of it.
_BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\ntime.sleep(0.3)\n"
# The group's leader starts a child that starts the burner: the burner is neither the
# leader's child nor has it for parent, as the forkserver's workers are to the job.
_START = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', {code!r}], check=True)\n"
_TREE = _START.format(code=_START.format(code=_BURN))


@_PROC
def test_group_usage_counts_the_cpu_of_every_process_of_the_group() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _TREE], start_new_session=True)
    seen: dict[int, float] = {}
    parents: dict[int, int] = {}
    try:
        while proc.poll() is None:
            _, _, spent = bench.group_usage(proc.pid)
            seen.update(spent)
            for pid in spent:
                try:
                    stat = Path(f"/proc/{pid}/stat").read_bytes()
                    parents[pid] = int(stat[stat.rfind(b")") + 2:].split()[1])
                except OSError:
                    pass
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0
    burner = max(seen, key=seen.__getitem__)
    assert burner != proc.pid and parents.get(burner) != proc.pid  # a grandchild of the leader
    assert seen[burner] >= 0.5
    assert sum(seen.values()) < 5  # nothing outside the group (the test itself, pytest's other work)


@_PROC
def test_group_usage_of_a_group_with_no_process() -> None:
    rss, pss, cpu = bench.group_usage(2**22 + 7)  # above the largest pid Linux allows: no such group
    assert (rss, pss, cpu) == (0, 0, {})


def _doc(cpu: float | None) -> dict[str, Any]:
    cold: dict[str, Any] = {
        "seconds": 20.0, "run": "published", "status": "ok", "problems": 0,
        "stage_seconds": {"wall": {"read": 4.0, "clean": 6.0, "align": 4.0, "dedupe": 1.0, "emit": 5.0},
                          "cpu_per_source_stages": {"decode": 1.5, "parse": 2.5}},
        "peak_mb": 700.0, "peak_tree_mb": 900.0, "peak_tree_pss_mb": 850.0}
    if cpu is not None:
        cold.update(cpu_seconds=cpu, process_seconds=22.5)
    return {"machine": {"cpus": 2, "python": "3.11.7"}, "load": [1.0, 1.0, 1.0],
            "corpus": {"path": "raw", "files": 77, "mb": 48.0},
            "generated": {"base": "cr-2026-08-07.txt", "after": "2026-08-07", "seed": 14},
            "runs": [{"scale": "real", "files": 77, "mb": 48.0, "cold": cold}]}


def _table(text: str, header_has: str) -> tuple[str, str]:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if header_has in line)
    return lines[at], lines[at + 1]


def test_render_shows_cpu_seconds_and_cores_busy() -> None:
    text = bench.render(_doc(36.0))
    header, row = _table(text, "scale files")
    for two_words in ("total s", "peak MB", "all MB", "all PSS", "cpu s"):
        header = header.replace(two_words, two_words.replace(" ", "_"))
    cells = dict(zip(header.split(), row.split(), strict=True))
    assert cells["cpu_s"] == "36.0"
    assert cells["cores"] == "1.60"  # 36 CPU seconds in the 22.5 wall seconds of the whole process
    assert cells["total_s"] == "20.00"  # the job's own seconds, as before
    assert "at least cpu s / 2" in text


def test_render_of_results_from_before_cpu_seconds() -> None:
    """``previous.json`` from an older bench has no cpu_seconds: a dash, not an error."""
    _, row = _table(bench.render(_doc(None)), "scale files")
    assert row.split()[11:13] == ["-", "-"]


def test_render_shows_the_cpu_seconds_of_the_incremental_run() -> None:
    doc = _doc(36.0)
    doc["runs"][0]["cached"] = {"seconds": 0.05, "cpu_seconds": 0.4}
    doc["runs"][0]["incremental"] = {"seconds": 10.5, "cpu_seconds": 16.25, "sources_parsed": 1,
                                     "peak_mb": 520.0, "added": "gen-2026-09-30.txt"}
    header, row = _table(bench.render(doc), "incremental s")
    assert header.split() == ["scale", "cached", "s", "incremental", "s", "cpu", "s", "parsed", "peak", "MB", "added"]
    assert row.split() == ["real", "0.05", "10.50", "16.2", "1", "520", "gen-2026-09-30.txt"]


def test_a_corpus_that_is_not_a_folder_of_releases_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before anything is generated, run or written (a regression fails
    here at once instead of timing 90 MB and replacing bench/results)."""
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the benchmark went on")

    monkeypatch.setattr(benchgen, "generate", never)  # the module bench calls
    monkeypatch.setattr(bench, "run_scale", never)
    work = tmp_path / "work"
    monkeypatch.setattr(bench, "WORK", work)
    missing, empty, file, inside = tmp_path / "missing", tmp_path / "empty", tmp_path / "a.txt", work / "real"
    empty.mkdir()
    inside.mkdir(parents=True)
    (inside / "cr-2026-08-07.txt").write_text("702.1a text\n", encoding="utf-8")
    file.write_text("702.1a text\n", encoding="utf-8")
    cases = ((missing, "not a folder"), (file, "not a folder"), (empty, "no files to time"),
             (inside, "which the benchmark rewrites"), (bench.ROOT, "the checkout itself"))
    for corpus, why in cases:
        result = CliRunner().invoke(main, ["bench", "--corpus", str(corpus)])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"Error: {corpus}: ") and why in result.output
        assert len(result.output.splitlines()) == 1  # one line, no traceback


def test_time_queries_measures_each_query_in_a_process_of_its_own(bundled: Bundled) -> None:
    """Every query of the benchmark answers on a published folder (exit 0), and its peak
    is the query process's own: far below this test process's, which holds the whole
    bundled corpus (a peak read from ``wait4`` would count the pages of the parent)."""
    _, out = bundled
    found = bench.time_queries(out, runs=1)
    assert set(found) == set(bench.QUERIES)
    mine = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for name, got in found.items():
        assert got["exit_codes"] == [0], name
        assert 5 < got["peak_mb"] < min(100, mine / 2), (name, got, mine)
        assert got["seconds"] > 0


def test_render_shows_the_queries() -> None:
    doc = _doc(36.0)
    doc["runs"][0]["queries"] = {n: {"seconds": 0.12, "peak_mb": 26.0, "exit_codes": [0]} for n in bench.QUERIES}
    header, row = _table(bench.render(doc), "scale resolve")
    assert header.split()[:3] == ["scale", "resolve", "s"]
    assert row.split() == ["real", *(["0.12", "26"] * len(bench.QUERIES))]
