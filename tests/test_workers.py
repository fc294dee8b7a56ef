"""The job's worker processes end with the job, however it ends.

A job killed outright (``kill -9``: no cleanup runs) left the lineage engine's
pool (the ``forkserver`` and its two workers) and the resource tracker asleep,
parented to init, for ever. Every process of a run here carries a marker in its
environment, so that the test finds exactly the processes it started (and
kills, if the check fails, only those).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, copy_raw

# The second release, once cleaned, starts the pool that aligns steps ahead; the July 2009
# renumbering takes seconds to align (the test of Ctrl-C there uses them too).
RELEASES = ["cr-2009-02-01.txt", "cr-2009-07-11.txt", "cr-2009-09-04.txt"]
MARK = "PIPELINE_TEST_RUN"


def _marked(mark: str) -> dict[int, str]:
    """pid -> command line of each live process whose environment has ``MARK=mark``."""
    wanted = f"{MARK}={mark}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile, or another user's
            continue
        if state not in ("Z", "X"):  # a zombie has ended; only its parent's wait is missing
            found[int(entry.name)] = command
    return found


def _until(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the run's processes in /proc")
def test_a_job_killed_outright_leaves_no_process_behind(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    raw = copy_raw(RELEASES, tmp_path / "raw")
    job = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "ingest", "--raw", str(raw), "--out", str(tmp_path / "out"), "--full",
         "--quiet", "--jobs", "2"],
        cwd=ROOT, env={**os.environ, MARK: mark}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        # The pool is up: the forkserver and its two workers (the same command line: forks of it).
        def pool_up() -> bool:
            return sum("multiprocessing.forkserver" in c for c in _marked(mark).values()) >= 3
        _until(lambda: pool_up() or job.poll() is not None, 120)
        assert pool_up(), f"the pool never started: {job.poll()=}, {_marked(mark)}"
        os.kill(job.pid, signal.SIGKILL)
        job.wait(timeout=10)
        _until(lambda: not _marked(mark), 10)
        left = _marked(mark)
        assert not left, f"still running after the job was killed: {left}"
    finally:
        for pid in _marked(mark):  # ours alone: they carry this run's marker
            os.kill(pid, signal.SIGKILL)
        if job.poll() is None:
            job.kill()
        job.wait()
        assert job.stderr is not None
        job.stderr.close()


_WAITER = """
import sys, time
from pipeline import workers
job = int(sys.argv[1])
workers.die_with(job, workers.started(job) + sys.argv[2])
print("waiting", flush=True)
time.sleep(60)
"""


def _waiter(job: int, since_suffix: str = "") -> subprocess.Popen[str]:
    """A process that ``die_with``s ``job`` (told a start time with ``since_suffix`` after it), then sleeps."""
    return subprocess.Popen([sys.executable, "-c", _WAITER, str(job), since_suffix], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)


def test_a_process_that_waits_for_the_job_ends_with_it() -> None:
    """``die_with``: the process ends within moments of the job it waits for;
    told of a job that has gone already, or of a pid that is another process's
    now (its start time differs), it ends at once."""
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with _waiter(job.pid) as waiting, _waiter(job.pid, "0") as mistaken:
            assert waiting.stdout is not None and mistaken.stdout is not None
            assert waiting.stdout.readline() == "waiting\n"
            assert (mistaken.wait(timeout=30), mistaken.stdout.read()) == (1, "")
            time.sleep(0.2)
            assert waiting.poll() is None  # still waiting: the job goes on
            job.kill()
            job.wait()
            assert waiting.wait(timeout=10) == 1
        with _waiter(job.pid) as late:
            assert late.stdout is not None
            assert (late.wait(timeout=30), late.stdout.read()) == (1, "")
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
