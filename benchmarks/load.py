"""A load generator the benchmarks start and stop themselves: ``busy(n)`` runs n processes that
spin on the CPU (a shared CI box, a laptop in a video call, a batch queue), so a run's wall time
under load is measured on the same machine in the same session as its idle one.

    with busy(20):        # 10× the cores of a 2-core machine
        ...               # the measured run

Each spinner is its own Python process at the default priority; all are killed on exit, also
when the measured run raises.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

SPIN = "import time\nwhile True:\n    sum(range(10_000))\n"


@contextlib.contextmanager
def busy(n: int) -> Iterator[list[int]]:
    """``n`` CPU spinners for the duration of the block; yields their PIDs."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SPIN],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(max(0, n))
    ]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()


def oversubscribed(factor: int = 10) -> int:
    """Spinners that oversubscribe this machine's cores ``factor`` times."""
    return factor * (os.cpu_count() or 1)


def tree_rss(pid: int) -> int:
    """Bytes resident in a process and all its descendants (0 once gone): the memory of a planning
    run with its workers, together."""
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.Error:
            pass
    return total
