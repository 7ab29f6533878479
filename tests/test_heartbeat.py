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
    """A solve in the dashboard's worker thread reports a stage, then is silent until the box
    says it is still at that stage; the box's label names the stage; the job's answer stands."""
    from ui.follow import follow

    box, got = _Box(), []

    def job(progress) -> None:
        progress(Progress("building model", 0.0))
        deadline = time.perf_counter() + 10
        while not any("still building model" in x for x in box.lines) and time.perf_counter() < deadline:
            time.sleep(0.02)
        progress("verifying the plan")
        got.append("plan")

    lines = follow(job, box, every_s=0.05)
    assert got == ["plan"]
    assert lines == box.lines
    assert lines[0] == "[   0.0 s] building model"
    assert any(line.split("] ", 1)[1].startswith("still building model (") for line in lines)
    assert lines[-1].endswith("] verifying the plan")
    assert box.labels[0].startswith("Solving… building model (")
    assert box.labels[-1].startswith("Solving… verifying the plan (")


def test_an_error_in_the_dashboard_solve_reaches_the_page() -> None:
    """The worker's exception is raised on the page's thread (which shows it in an error box)."""
    import pytest

    from planner.errors import InputError
    from ui.follow import follow

    def job(progress) -> None:
        raise InputError("clusters[0].gpus: -1 is below 0")

    with pytest.raises(InputError, match="clusters\\[0\\].gpus"):
        follow(job, _Box())
