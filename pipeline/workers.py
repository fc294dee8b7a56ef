"""Worker processes for the stages that split into independent pieces (reading
files, aligning release pairs): one pool, one way of handling Ctrl-C."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager


def ignore_signals() -> None:
    """In a worker: Ctrl-C and SIGTERM are the parent's to handle; a worker that
    took them would die with a traceback of its own and break the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


@contextmanager
def pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool that, on Ctrl-C (or any error), drops its queued work
    instead of waiting for all of it."""
    with ProcessPoolExecutor(max_workers=jobs, initializer=ignore_signals) as executor:
        try:
            yield executor
        except BaseException:
            executor.shutdown(wait=False, cancel_futures=True)
            raise
