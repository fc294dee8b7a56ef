"""Worker processes for the stages that split into independent pieces (reading
files, aligning release pairs): one pool, one way of handling Ctrl-C; and how
often the garbage collector runs in the job and its workers."""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from multiprocessing import forkserver
from typing import Any, TypeVar

T = TypeVar("T")

# What a fresh worker needs loaded before its first task (numpy and rapidfuzz among it).
PRELOAD = ("pipeline.lineage.chain",)


# How long a stopped pool's manager thread may take to end (it ends at once: its
# workers are killed and its result pipe closed).
MANAGER_JOIN_SECONDS = 5.0

# Allocations between two collections of the youngest generation (Python's default: 700).
COLLECT_EVERY = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector every ``COLLECT_EVERY`` allocations, not
    every 700. The stages make millions of short-lived tuples (elements, rows) that
    refcounting frees; at 700 the collector ran 5,000 times and traversed the
    run's long-lived elements 18 times in a 90 MB build, a third of its time
    (5.4 s of 16). Cycles are still collected, just in fewer, larger batches."""
    before = gc.get_threshold()
    gc.set_threshold(COLLECT_EVERY, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def ignore_signals() -> None:
    """In a worker: Ctrl-C and SIGTERM are the parent's to handle; a worker that
    took them would die with a traceback of its own and break the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


@contextmanager
def _handlers(handlers: dict[signal.Signals, Any]) -> Iterator[dict[signal.Signals, Any]]:
    """Set signal handlers for the block, and put back the ones they replaced;
    yields those. Only the main thread can set a handler: elsewhere, and for a
    signal whose handler was set outside Python (which it cannot put back),
    nothing is set."""
    if threading.current_thread() is not threading.main_thread():
        yield {}
        return
    before = {signum: signal.getsignal(signum) for signum in handlers}
    before = {signum: handler for signum, handler in before.items() if handler is not None}
    for signum in before:
        signal.signal(signum, handlers[signum])
    try:
        yield before
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def start_forkserver() -> None:
    """Start the ``forkserver`` if it is not running, with Ctrl-C ignored in it
    from its first instruction. It ignores Ctrl-C itself only once it has
    imported ``PRELOAD``; a Ctrl-C before that (the first second of a run) made it
    print a traceback of its own under the job's "interrupted". An ignored
    signal stays ignored across the exec that starts it (a blocked one does
    not: the mask is reset), so this process ignores Ctrl-C while it starts it:
    for the moment of a fork and an exec, when a Ctrl-C here is lost."""
    with _handlers({signal.SIGINT: signal.SIG_IGN}):
        forkserver.ensure_running()


# The signals a job takes as "stop now" (SIGTERM is raised in it like Ctrl-C: cli.Guarded).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C (or a SIGTERM) back until the block is done, then take it
    as it would have been taken. Python's forkserver, asked for a process, reads
    the asker's pipes from a socket, and the new process then reads its start-up
    data from a pipe: a Ctrl-C that cut the asking short made the forkserver
    fail with a traceback of its own, and one that came after the asking but
    before the pool had recorded the new worker left that worker unknown to
    ``stop``, to fail with a traceback of its own (its pool's semaphores gone)
    under the job's "interrupted". (Off the main thread the block just runs.)"""
    held: list[int] = []
    with _handlers({signum: lambda number, frame: held.append(number) for signum in STOP_SIGNALS}) as before:
        yield
    for number in dict.fromkeys(held):
        handler = before[signal.Signals(number)]
        if callable(handler):
            handler(number, None)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(number)


class _Pool(ProcessPoolExecutor):
    """A process pool that starts its workers (it does so as work is submitted)
    with Ctrl-C and SIGTERM held back (``ctrl_c_held``), so that every worker it
    started is one ``stop`` knows of."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        with ctrl_c_held():
            return super().submit(fn, *args, **kwargs)


def _start_worker(job: int, since: str) -> None:
    ignore_signals()
    _die_with_parent()
    if os.getppid() != job:  # a worker of the forkserver, not of the job
        die_with(job, since)
    gc.set_threshold(COLLECT_EVERY, *gc.get_threshold()[1:])  # a worker lives for one run


PR_SET_PDEATHSIG = 1  # prctl(2)


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the process that started
    it ends. A worker ignores SIGTERM (its parent stops it), so one whose parent
    died before it could (a SIGTERM sent to the whole process group, as
    `timeout` and `systemctl stop` send it) ran on for ever, holding the job's
    output open: a cron job that never finished."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent had gone already
        os._exit(1)


# How often a worker whose kernel cannot tell it that a process ended (no pidfd)
# looks whether the job is still there.
JOB_POLL_SECONDS = 0.5


def die_with(job: int, since: str = "") -> None:
    """End this process soon after process ``job`` (started at ``since``, as
    ``started`` said then) ends, however it ends: a thread waits for it.

    For a worker the ``forkserver`` started: its parent is the forkserver, not
    the job, and ``_die_with_parent`` ties it to that. A job killed outright
    (``kill -9``, no cleanup) left the forkserver and its workers asleep for
    ever: each worker holds the job's end of the forkserver's "still wanted"
    pipe, so the forkserver never saw the job go, and it never went itself.
    Once the workers go, the forkserver (and the resource tracker) see their
    last client gone and exit too."""
    try:
        watched: int | None = os.pidfd_open(job)  # readable once the process has ended (Linux 5.3)
    except ProcessLookupError:
        os._exit(1)
    except (OSError, AttributeError):
        watched = None  # not Linux, or an older kernel: look every JOB_POLL_SECONDS instead
    if gone(job, since):  # the pid is another process's by now
        os._exit(1)
    threading.Thread(target=_wait_for, args=(job, since, watched), name="job-gone", daemon=True).start()


def _wait_for(job: int, since: str, watched: int | None) -> None:
    if watched is not None:
        select.select([watched], [], [])
    else:
        while not gone(job, since):
            time.sleep(JOB_POLL_SECONDS)
    os._exit(1)  # as the kernel ends a forked worker whose job died: nothing of the run is worth finishing


@contextmanager
def pool(jobs: int, fresh: bool = False) -> Iterator[ProcessPoolExecutor]:
    """A process pool that, on Ctrl-C (or any error), drops its queued work and
    stops its running workers instead of waiting for them.

    ``fresh`` workers start from a small server process (``forkserver``) that has
    only the alignment modules loaded, not as copies of this process: by the
    time releases are aligned this process holds every element of the run (GBs
    at scale), and a forked copy's garbage collector touches each of them,
    copying the pages it shares with its parent."""
    context = None
    if fresh:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))
        start_forkserver()
    job = os.getpid()
    with _Pool(max_workers=jobs, mp_context=context, initializer=_start_worker,
               initargs=(job, started(job))) as executor:
        try:
            yield executor
        except BaseException:
            stop(executor)
            raise


def stop(executor: ProcessPoolExecutor) -> None:
    """Drop a pool's queued work and kill its workers, in the middle of their tasks."""
    running = processes_of(executor)  # shutdown forgets them, and these
    results = getattr(executor, "_result_queue", None)
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in running:
        with suppress(OSError, ValueError, AttributeError):
            process.kill()
    # A worker killed while it sent a result leaves half a message: with this
    # process's own end of the results pipe closed too, the pool's reader sees
    # the pipe end instead of waiting for the rest for ever.
    with suppress(OSError, AttributeError):
        results._writer.close()  # type: ignore[union-attr]
    # The pool's manager thread closes its wake-up pipe on its way out. Python
    # 3.11's exit hook writes to that pipe without a lock, and a close at the
    # same moment printed "OSError: [Errno 9] Bad file descriptor" after a
    # clean Ctrl-C (fixed in Python 3.12): the thread ends here instead.
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=MANAGER_JOIN_SECONDS)


def processes_of(executor: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes, to be stopped at once, in the middle of their
    tasks, when the run is over: waiting for them kept a Ctrl-C during alignment
    waiting for seconds, and left them running after the job had gone. They write
    nothing but cache entries, each atomically (a killed one leaves a temporary
    file, which the next run prunes). ``_processes`` is the pool's own table of
    its workers (Python 3.14 has ``terminate_workers`` for this)."""
    return list((getattr(executor, "_processes", None) or {}).values())


# --- processes gone: what a killed run left (a staging folder, a cache entry being written) ---

def started(pid: int) -> str:
    """When process ``pid`` started (clock ticks after boot, from ``/proc``), or ''
    where that cannot be read: with the pid, it tells a process from a later one
    that was given the same pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""  # field 22 of proc(5); the first two precede ")"


def gone(pid: int, since: str = "") -> bool:
    """Whether process ``pid`` (started at ``since``, as ``started`` said then, if
    known) has ended: it is no more, or the pid is another process's now. The
    pipeline's own process never has."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass  # it exists, and is someone else's
    now = started(pid)
    return bool(since and now and now != since)  # the pid is another process's now
