"""Progress a person can follow in the dashboard: a solve runs in a worker thread and the page's
own thread writes what it reports into the status box, stamped with the seconds since it started;
a stage that stays silent for :data:`EVERY_S` seconds (a large build, a bound, a verification)
gets a line saying it is still at work, and the box's label always names the stage and the time.
Every Streamlit call stays on the page's thread."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from planner.cli.heartbeat import stage_of, stamped

EVERY_S = 8.0
"""Silence before a "still …" line, s (checked every quarter second: no stage is silent 10 s)."""


def follow(
    job: Callable[[Callable[[object], None]], None],
    box=None,
    every_s: float = EVERY_S,
    title: str = "Solving",
) -> list[str]:
    """Run ``job(progress)`` in a worker thread; meanwhile write each report (and a "still …"
    line after ``every_s`` s of silence) into ``box`` (``write`` and ``update(label=…)``, a
    Streamlit status box) from this thread. Returns the lines written. An exception in ``job``
    is raised here."""
    t0 = time.perf_counter()
    reports: queue.SimpleQueue = queue.SimpleQueue()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            job(reports.put)
        except BaseException as e:  # noqa: BLE001 - handed to the page's thread
            failed.append(e)

    worker = threading.Thread(target=run, name="dashboard-solve", daemon=True)
    worker.start()
    lines: list[str] = []
    stage, last = "starting", time.perf_counter()

    def say(line: str) -> None:
        lines.append(line)
        if box is not None:
            box.write(line)
            box.update(label=f"{title}… {stage} ({time.perf_counter() - t0:.0f} s)")

    while worker.is_alive() or not reports.empty():
        try:
            report = reports.get(timeout=0.25)
        except queue.Empty:
            if time.perf_counter() - last >= every_s:
                now, quiet = time.perf_counter() - t0, time.perf_counter() - last
                say(f"[{now:6.1f} s] still {stage} ({quiet:.0f} s since the last report)")
                last = time.perf_counter()
            continue
        line = stamped(report, t0)
        stage, last = stage_of(report, line), time.perf_counter()
        say(line)
    worker.join()
    if failed:
        raise failed[0]
    return lines
