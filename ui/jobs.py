"""Solves as jobs of the dashboard's process, with no Streamlit in them.

A :class:`Job` runs one solve (a scenario in one mode) in its own thread and records what it
reports: the lines, the stage, buildings done of how many, and its result entry when it ends. The
page that started it follows it while the user stays there; a user who leaves finds it in the
sidebar of every page and its result on the page when coming back. :class:`JobHub` holds the
process's jobs by key (scenario key and mode): a second Solve of the same scenario, from the
same session or another, joins the running job instead of starting a second worker. A job is
stopped when every session that asked for it has cancelled it (:mod:`planner.stop`: at its next
check; a HiGHS root phase may keep it a while, and the job stays listed until it has ended).
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from planner import stop
from planner.cli.heartbeat import stage_of, stamped

BUILDINGS = re.compile(r"building solves?: (\d+) of (\d+) done")
"""A decomposed run's count of building solves done (planner.scale.rounds)."""
KEEP_FINISHED = 32
"""Finished jobs the hub keeps for the sessions that have not looked yet."""


@dataclass(eq=False)
class Job:
    """One solve running (or ended) in its own thread; read from any thread."""

    key: str
    title: str
    started: float = field(default_factory=time.perf_counter)
    lines: list[str] = field(default_factory=list)
    stage: str = "starting"
    done_of: tuple[int, int] | None = None
    """Building solves done and started in this round (decomposed runs); the stage says it while
    the building solves last."""
    entry: dict | None = None
    """The result entry once the job has ended (``error`` set when it failed or was stopped)."""
    halt: threading.Event = field(default_factory=threading.Event)
    watchers: set[str] = field(default_factory=set)
    ended: float | None = None

    @property
    def running(self) -> bool:
        return self.entry is None

    @property
    def stopping(self) -> bool:
        return self.halt.is_set() and self.running

    def elapsed(self) -> float:
        return (self.ended or time.perf_counter()) - self.started

    def report(self, message: object) -> None:
        """The progress callback: a stamped line, the stage, the buildings' count; raises
        :class:`~planner.stop.Stopped` once the job is stopped."""
        line = stamped(message, self.started)
        self.lines.append(line)
        self.stage = stage_of(message, line)
        m = BUILDINGS.search(line)
        if m:  # the stage names the count: "round 1: building solves 3 of 18 done"
            self.done_of = (int(m.group(1)), int(m.group(2)))
            said = line.split("] ", 1)[-1]
            self.stage = f"{said[: said.index(m.group(0))]}building solves {m.group(1)} of {m.group(2)} done"
        stop.check(self.stage)

    def doing(self) -> str:
        """What the job does now (building solves done of how many, while they last) and for how long."""
        if not self.running:
            return f"{self.stage} (ended after {self.elapsed():.0f} s)"
        what = "stopping (the solver ends at its next check)" if self.stopping else self.stage
        return f"{what} ({self.elapsed():.0f} s)"

    def status(self) -> str:
        """One line: the job's title and :meth:`doing`."""
        return f"{self.title}: {self.doing()}"


class JobHub:
    """The process's jobs by key: running ones joined, finished ones kept a while (bounded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self.started = 0
        """How many jobs this hub started (a joined Solve starts none)."""

    def start(self, key: str, title: str, work: Callable[[Job], dict], watcher: str) -> Job:
        """The running job for ``key`` (joined by ``watcher``), or a new one running ``work(job)``
        in a thread; ``work`` returns the result entry (its exceptions become an ``error``)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.running and not job.halt.is_set():
                job.watchers.add(watcher)
                return job
            job = Job(key, title, watchers={watcher})
            self._jobs[key] = job
            self._jobs.move_to_end(key)
            self.started += 1
            finished = [k for k, j in self._jobs.items() if not j.running]
            for k in finished[: max(0, len(finished) - KEEP_FINISHED)]:
                del self._jobs[k]
        threading.Thread(target=_run, args=(job, work), name=f"solve {title}"[:60], daemon=True).start()
        return job

    def cancel(self, job: Job, watcher: str) -> None:
        """``watcher`` no longer wants ``job``; stopped when no one does."""
        with self._lock:
            job.watchers.discard(watcher)
            if not job.watchers:
                job.halt.set()

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.running]


def _run(job: Job, work: Callable[[Job], dict]) -> None:
    """The job's thread: ``work`` under the job's stop event; the entry always set at the end."""
    entry: dict
    try:
        with stop.stoppable(job.halt):
            entry = work(job)
    except stop.Stopped:
        entry = {"error": f"stopped by the user after {job.elapsed():.0f} s", "stopped": True}
    except BaseException as e:  # noqa: BLE001 - the dashboard never shows a traceback
        entry = {"error": f"internal error: {type(e).__name__}: {str(e)[:500]}"}
    entry.setdefault("wall_s", job.elapsed())
    job.ended = time.perf_counter()
    job.entry = entry
