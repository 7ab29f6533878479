"""Progress a person can follow in the dashboard: a solve runs as a job in its own thread
(:mod:`ui.jobs`) and the page's thread writes what it reports into a status box, stamped with the
seconds since the job started; a stage that stays silent for :data:`EVERY_S` seconds (a large
build, a bound, a verification) gets a line saying it is still at work, and the box's label names
the stage, the time and the buildings done, refreshed every second. Every Streamlit call stays on
the page's thread; leaving the page stops the following, never the job."""

from __future__ import annotations

import time

from planner.cli.heartbeat import still
from ui.jobs import Job

EVERY_S = 8.0
"""Silence before a "still …" line, s (checked every quarter second: no stage is silent 10 s)."""
LABEL_EVERY_S = 1.0
"""How often the box's label is refreshed, s (each refresh lets Streamlit end the run when the
user leaves the page)."""


def follow_job(job: Job, box=None, every_s: float = EVERY_S, title: str = "Solving") -> dict:
    """Write ``job``'s lines (from the first) into ``box`` (``write`` and ``update(label=…)``, a
    Streamlit status box) until it ends, with a "still …" line after ``every_s`` s of silence;
    returns its result entry."""
    seen, quiet_since, labelled = 0, time.perf_counter(), 0.0
    while True:
        ended = not job.running  # read before the lines: the last ones are written before the entry
        lines = job.lines[seen:]
        seen += len(lines)
        now = time.perf_counter()
        if lines:
            quiet_since = now
        elif job.running and now - quiet_since >= every_s:
            lines = [still(job.elapsed(), job.stage, now - quiet_since)]
            quiet_since = now
        if box is not None:
            for line in lines:
                box.write(line)
            if lines or now - labelled >= LABEL_EVERY_S:
                box.update(label=f"{title}… {job.doing()}")
                labelled = now
        if ended:
            return job.entry or {}
        time.sleep(0.25)
