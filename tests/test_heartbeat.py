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
