"""A dashboard solve is a job: it runs in its own thread, a second Solve joins it, it stops when
everyone who asked for it has cancelled it, and a stop reaches the engine (planner.stop): its
deadline checks, its progress reports and a HiGHS solve in branch and bound."""

from __future__ import annotations

import random
import re
import threading
import time

import pulp
import pytest

from planner import stop
from planner.clock import Deadline
from planner.solving.backends import SolveRequest, from_name
from ui.follow import follow_job
from ui.jobs import JobHub


def _waiting(release: threading.Event, runs: list[str]):
    """Work that reports, then waits for ``release`` (or a stop) and returns a plan."""

    def work(job) -> dict:
        runs.append(job.key)
        job.report("building model")
        while not release.wait(0.02):
            stop.check("waiting")
        job.report("round 1: building solves: 2 of 3 done (B2)")
        return {"plan": {"status": "optimal"}}

    return work


def test_a_second_solve_of_the_same_scenario_joins_the_running_job() -> None:
    hub, release, runs = JobHub(), threading.Event(), []
    a = hub.start("k|decomposed", "region (decomposed)", _waiting(release, runs), "session-a")
    b = hub.start("k|decomposed", "region (decomposed)", _waiting(release, runs), "session-b")
    again = hub.start("k|decomposed", "region (decomposed)", _waiting(release, runs), "session-a")
    assert a is b is again
    assert (hub.started, len(hub.running()), a.watchers) == (1, 1, {"session-a", "session-b"})
    release.set()
    assert follow_job(a)["plan"] == {"status": "optimal"}
    assert runs == ["k|decomposed"]
    assert a.done_of == (2, 3)
    assert a.doing().startswith("round 1: building solves 2 of 3 done (ended after ")
    assert hub.running() == []


def test_a_job_stops_only_when_every_session_that_asked_for_it_cancels() -> None:
    hub, release, runs = JobHub(), threading.Event(), []
    job = hub.start("k", "small-hall (joint)", _waiting(release, runs), "session-a")
    hub.start("k", "small-hall (joint)", _waiting(release, runs), "session-b")
    hub.cancel(job, "session-a")
    assert not job.halt.is_set()
    assert job.running
    hub.cancel(job, "session-b")
    assert job.halt.is_set()
    entry = follow_job(job)
    assert entry["stopped"] is True
    assert entry["error"].startswith("stopped by the user after ")
    # a new Solve after a stop starts a fresh job
    fresh = hub.start("k", "small-hall (joint)", _waiting(release, runs), "session-a")
    assert fresh is not job
    assert hub.started == 2
    release.set()
    assert "plan" in follow_job(fresh)


def test_the_stop_is_raised_at_the_next_progress_report_and_deadline_check() -> None:
    event = threading.Event()
    with stop.stoppable(event):
        Deadline(60).check("building the model")
        event.set()
        with pytest.raises(stop.Stopped, match="stopped by the user while building the model"):
            Deadline(60).check("building the model")
    Deadline(60).check("building the model")  # outside the block: another run, not stopped
    assert not stop.requested()


def _market_split(m: int = 4, n: int = 34, seed: int = 7) -> tuple[pulp.LpProblem, pulp.LpAffineExpression]:
    """Σ a_ij x_j = ⌊Σ_j a_ij / 2⌋ over binaries (Cornuéjols–Dawande): branch and bound runs to any
    limit on it (HiGHS: its 10 s limit), passing its interrupt check at every node."""
    rng = random.Random(seed)
    prob = pulp.LpProblem("market_split", pulp.LpMaximize)
    x = [prob.add_variable(f"x{j}", 0, 1, cat=pulp.LpInteger) for j in range(n)]
    for i in range(m):
        a = [rng.randint(0, 99) for _ in range(n)]
        prob += pulp.lpSum(a[j] * x[j] for j in range(n)) == sum(a) // 2, f"r{i}"
    return prob, pulp.lpSum(x)


def test_a_highs_solve_in_branch_and_bound_is_interrupted_by_the_stop() -> None:
    """The same solve without a stop runs to its limit (120 s); stopped after 1 s it returns
    within a minute even on a busy machine, raising Stopped rather than answering."""
    prob, objective = _market_split()
    event = threading.Event()
    threading.Timer(1.0, event.set).start()
    t0 = time.perf_counter()
    with stop.stoppable(event), pytest.raises(stop.Stopped, match="while solving"):
        from_name("highs").solve(SolveRequest(prob, objective, True, 120, 0.0))
    assert time.perf_counter() - t0 < 60


def test_an_exception_in_a_progress_hook_interrupts_highs_and_is_raised_after_it() -> None:
    prob, objective = _market_split()

    def hook(_incumbent, _bound) -> None:
        raise KeyError("from the hook")

    t0 = time.perf_counter()
    with pytest.raises(KeyError, match="from the hook"):
        from_name("highs").solve(SolveRequest(prob, objective, True, 120, 0.0, on_progress=hook))
    assert time.perf_counter() - t0 < 60


def test_the_sidebar_shows_the_sessions_running_job_on_every_page_and_its_stop_button_stops_it() -> None:
    """A session whose solve runs (left running on another page): the Scenario page's sidebar names
    it with its stage and building count and offers Stop; pressed, the job stops (the session was
    its only watcher) and the sidebar says it is stopping until it has ended; nothing is kept."""
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP
    from ui.session import Session

    hub, release, runs = JobHub(), threading.Event(), []
    job = hub.start("k|decomposed", "region (decomposed)", _waiting(release, runs), "s1")
    job.report("round 1: building solves: 3 of 18 done (B4)")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["planner"] = Session(id="s1", jobs={job.key: job})
    at.switch_page("ui/scenario_page.py").run()
    lines = [c.value for c in at.sidebar.caption]
    assert any(
        re.fullmatch(r"Running: region \(decomposed\): round 1: building solves 3 of 18 done \(\d+ s\)", v)
        for v in lines
    ), lines
    at.sidebar.button(key="stop_k|decomposed").click().run()
    assert job.halt.is_set()
    entry = follow_job(job)
    assert entry["stopped"] is True
    at.run()
    assert at.session_state["planner"].jobs == {}  # ended and collected: nothing kept
    assert "k|decomposed" not in at.session_state["planner"].results
    assert runs == ["k|decomposed"]
