"""Progress a person can follow: every report goes to standard error with the seconds since the
run started, and a stage that stays silent for :data:`EVERY_S` seconds (a large build, a bound, a
verification) gets a line saying it is still at work, so no stage is silent for 10 s."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

EVERY_S = 5.0
"""Silence before a "still …" line, s (checked every half second: no stage is silent 10 s, with room
for a loaded machine, where this thread waits its turn for the interpreter: at 8 s, 20 CPU spinners
on 2 cores stretched the gaps to 11-15 s in benchmarks/LIMITS-600.md)."""


def stamped(report: object, t0: float) -> str:
    """A report as one line: the solver's own "[  1.0 s] …" lines as they are, others stamped with
    the seconds since ``t0``."""
    text = str(report)
    return text if text.startswith("[") else f"[{time.perf_counter() - t0:6.1f} s] {text}"


def still(elapsed_s: float, stage: str, quiet_s: float) -> str:
    """The line for a stage silent ``quiet_s`` seconds, stamped ``elapsed_s`` since the start."""
    return f"[{elapsed_s:6.1f} s] still {stage} ({quiet_s:.0f} s since the last report)"


def stage_of(report: object, line: str) -> str:
    """The stage a report names: a :class:`~planner.solving.core.Progress`'s own, else the line's
    text after its stamp; up to the first colon."""
    stage = getattr(report, "stage", None) or line.split("] ", 1)[-1]
    return stage.split(":", 1)[0][:80]


class Heartbeat:
    """A progress callback (takes a :class:`~planner.solving.core.Progress` or a plain message)
    that also speaks up for a silent stage; use it as a context manager around the run."""

    def __init__(self, t0: float, every_s: float = EVERY_S, out: TextIO | None = None) -> None:
        self.t0, self.every_s, self.out = t0, every_s, out or sys.stderr
        self.stage = "starting"
        self.last = time.perf_counter()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="heartbeat", daemon=True)

    def __call__(self, report: object) -> None:
        text = stamped(report, self.t0)
        with self.lock:
            self.stage, self.last = stage_of(report, text), time.perf_counter()
            print(text, file=self.out, flush=True)

    def _watch(self) -> None:
        while not self.stopped.wait(0.5):
            with self.lock:
                quiet = time.perf_counter() - self.last
                if quiet >= self.every_s:
                    now = time.perf_counter() - self.t0
                    print(still(now, self.stage, quiet), file=self.out, flush=True)
                    self.last = time.perf_counter()

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(timeout=2)
