"""The time limit of a whole run, from the start of the ``planner`` process (interpreter start-up
and imports included: :func:`process_started`, :func:`run_started`) to the written plan (§8 solver
settings: ``time_limit_s``; ``--time-limit``).

Every stage asks the same :class:`Deadline`: building the model and first-fit check it and stop
(:class:`TimeUp`); the solver gets what is left less a reserve for what must follow it (filling
positions, verifying, figures), estimated from what touching every position cost so far; a stage
that needs more time than is left (a second solve for the failover gain) is skipped and says so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.stop import check as check_stopped

MIN_SOLVE_S = 0.5
"""Least time worth handing a MILP solver: below it the solver is not started (HiGHS may not stop
within a shorter limit on a large model: its presolve runs before the first clock check)."""


def process_started() -> float:
    """The perf_counter time this process started (interpreter start-up and imports included), from
    /proc/self/stat; the current time where /proc is not there."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time after boot, ticks
    except (OSError, ValueError, IndexError):
        return now
    return now - max(0.0, uptime - started)


RUN_STARTED: list[float] = []
"""Set by the ``planner`` command's entry point: when its process started (perf_counter time).
Empty when the planner runs inside another program (a test, the Python API)."""


def run_started() -> float:
    """When a command's time limit starts: the process's start for the ``planner`` command (the
    limit counts interpreter start-up and imports), else now."""
    return RUN_STARTED[0] if RUN_STARTED else time.perf_counter()


class TimeUp(Exception):
    """The time limit ran out in a stage that cannot return a partial answer."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"time limit reached while {stage}")
        self.stage = stage


@dataclass
class Deadline:
    """A time limit over a whole run: started at ``t0`` (seconds of ``clock``: perf_counter, or a
    virtual clock in tests of a schedule), ``limit_s`` long."""

    limit_s: float
    t0: float = field(default_factory=time.perf_counter)
    clock: Callable[[], float] = time.perf_counter

    @property
    def at(self) -> float:
        return self.t0 + self.limit_s

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def left(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - self.clock()

    def sooner(self, by_s: float) -> Deadline:
        """The same start and clock, ``by_s`` seconds earlier (never before the start)."""
        return Deadline(max(0.0, self.limit_s - by_s), self.t0, self.clock)

    def share(self, part: float) -> float:
        """The perf_counter time by which ``part`` of the limit has passed."""
        return self.t0 + part * self.limit_s

    def check(self, stage: str, until: float | None = None) -> None:
        """Raise :class:`TimeUp` when the limit (or ``until``, an earlier perf_counter time) has passed;
        :class:`~planner.stop.Stopped` when the user stopped the run."""
        check_stopped(stage)
        if self.clock() > (self.at if until is None else min(until, self.at)):
            raise TimeUp(stage)


def reserve_s(touch_s: float, left_s: float) -> float:
    """Time to keep for after the solve: filling positions, verifying and computing the figures take
    about twice what one pass over every position took (first-fit, or building the model), measured
    on the 1M-GPU benchmark; at most half of what is left, at least 0.2 s."""
    return min(max(0.2, 2.0 * touch_s), max(0.0, left_s) / 2)
