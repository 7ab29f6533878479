"""No stage silent: every report is stamped with the seconds since the run started, and a stage
that stays silent gets a "still …" line naming it."""

from __future__ import annotations

import io
import time

from planner.cli.heartbeat import Heartbeat
from planner.solving.core import Progress


def test_a_silent_stage_is_named_until_it_reports_again() -> None:
    out = io.StringIO()
    t0 = time.perf_counter()
    with Heartbeat(t0, every_s=0.05, out=out) as beat:
        beat(Progress("building model", 0.0))
        deadline = time.perf_counter() + 10
        while "still building model" not in out.getvalue() and time.perf_counter() < deadline:
            time.sleep(0.05)
        beat("merged bound: solving the relaxation")
    lines = out.getvalue().splitlines()
    assert lines[0] == "[   0.0 s] building model"
    assert any(line.split("] ", 1)[1].startswith("still building model (") for line in lines)
    assert any(line.endswith("] merged bound: solving the relaxation") for line in lines)


class _Box:
    """What the dashboard's status box is told: lines written and labels set."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.labels: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)

    def update(self, label: str) -> None:
        self.labels.append(label)


def test_the_dashboard_box_names_a_silent_stage_and_the_stage_in_its_label() -> None:
    """A solve as a dashboard job reports a stage, then is silent until the box says it is still
    at that stage; the box's label names the stage; the job's answer stands."""
    from ui.follow import follow_job
    from ui.jobs import JobHub

    box = _Box()

    def work(job) -> dict:
        job.report(Progress("building model", 0.0))
        deadline = time.perf_counter() + 10
        while not any("still building model" in x for x in box.lines) and time.perf_counter() < deadline:
            time.sleep(0.02)
        job.report("verifying the plan")
        return {"plan": "the plan"}

    job = JobHub().start("k", "small-hall (joint)", work, "session-1")
    entry = follow_job(job, box, every_s=0.05)
    assert entry["plan"] == "the plan"
    assert entry["wall_s"] >= 0
    assert box.lines[0] == "[   0.0 s] building model"
    assert any(line.split("] ", 1)[1].startswith("still building model (") for line in box.lines)
    assert box.lines[-1].endswith("] verifying the plan")
    assert box.labels[0].startswith("Solving… building model (")
    assert box.labels[-1].startswith("Solving… verifying the plan (")


def test_an_error_in_the_dashboard_solve_reaches_the_page() -> None:
    """An exception in the job's work becomes the entry's error, never a traceback on the page."""
    from ui.follow import follow_job
    from ui.jobs import JobHub

    def work(job) -> dict:
        raise KeyError("site")

    entry = follow_job(JobHub().start("k", "t", work, "s"), _Box())
    assert entry["error"] == "internal error: KeyError: 'site'"
