"""Solving from the dashboard: every solve is a job of the session (:mod:`ui.jobs`).

Pressed Solve starts a job (or joins the one running for the same scenario and mode) and the
page follows it in a status box; a user who leaves finds it in the sidebar of every page (stage,
time, buildings done, a Stop button) and its result on the page when coming back. A proven plan
of the same scenario and mode in the plan library is reused without a job; a plan the job finds
goes into the library once it verifies, and a better stored plan (a time-limited one kept from
before) is shown instead of a worse fresh one. Nothing here imports pulp."""

from __future__ import annotations

import streamlit as st

from planner.errors import InputError
from planner.library import rank
from planner.plan import Plan
from planner.schema import Scenario
from ui.cache import SolveHub
from ui.follow import follow_job
from ui.jobs import Job, JobHub
from ui.session import session
from ui.state import _keep, hub, library, plan_of, result_key, scenario_key, with_library

PANEL_EVERY_S = 2.0
"""How often the sidebar's job panel refreshes while a job runs, s."""


@st.cache_resource
def jobs() -> JobHub:
    """The process's solve jobs (one per scenario and mode at a time)."""
    return JobHub()


def start(text: str, scenario: Scenario, mode: str = "joint") -> dict | Job:
    """A proven stored plan or a final cached one (the entry, kept as this session's), else the
    session's job for the scenario and mode: running already, joined, or started."""
    key = result_key(text, mode)
    proven = with_library(lambda lib: lib.best(scenario_key(text), mode, proven=True))
    if proven is not None:  # a proven optimum of this scenario and mode, verified again: reused
        entry = {**proven[1], "library_id": proven[0], "reused": True}
        _keep(key, entry)
        return entry
    ss = session()
    job = ss.jobs.get(key)
    if (
        job is None or job.halt.is_set()
    ):  # none, or one this session stopped: a new job (or another's, joined)
        work = _work(text, scenario, mode, ss.scenario_source or "scenario", hub())
        job = ss.jobs[key] = jobs().start(key, f"{scenario.name} ({mode})", work, ss.id)
        with st.sidebar:  # the sidebar was drawn before the job began: it joins the panel now
            _panel_of([job])
    return job


def solve_text(text: str, scenario: Scenario, box=None, mode: str = "joint") -> dict:
    """Solve (or reuse) a scenario in ``mode`` and follow the job here; its result entry.
    ``mode``: joint (default), rolling (phased scenarios, phase by phase), stochastic (scenarios
    with demand futures: one first phase for all) or decomposed (joint, decomposed by building in
    the job's thread: a region's buildings one after another)."""
    got = start(text, scenario, mode)
    if isinstance(got, dict):
        return got
    follow_job(got, box)
    return collect().get(got.key) or got.entry or {}


def resume(text: str, mode: str = "joint", label: str = "Solving") -> dict | None:
    """This session's job for the scenario and mode, if it has one: followed here in a status box
    to its end (a user who left the page and came back), its entry; else None."""
    job = session().jobs.get(result_key(text, mode))
    if job is None:
        return None
    if job.stopping:
        st.info(f"Stopping: {job.status()}. Solve again to start afresh.")
        return None
    if job.running:
        with st.status(f"{label}… {job.doing()}", expanded=True) as box:
            entry = follow_job(job, box, title=label)
            box.update(
                label=_outcome(entry), state="complete" if "plan" in entry else "error", expanded=False
            )
    return collect().get(job.key) or job.entry


def collect() -> dict[str, dict]:
    """Move this session's ended jobs into its results: {key: entry} of those moved."""
    ss = session()
    moved = {}
    for key, job in list(ss.jobs.items()):
        if job.running:
            continue
        del ss.jobs[key]
        slot = ss.stop_slots.pop(key, None)
        if slot is not None:  # its Stop button, drawn while it ran, goes
            slot.empty()
        entry = dict(job.entry or {})
        if entry.get("library_error"):
            ss.ended.append(
                f"The plan library cannot be used: {entry['library_error']}. The plan is shown but not kept."
            )
        if not entry.get("stopped"):
            _keep(key, entry)
        moved[key] = entry
    return moved


def cancel(job: Job) -> None:
    """This session no longer wants ``job``: it stops when no other session does (and stays in
    this session's panel, "stopping", until it has ended); else the session forgets it."""
    jobs().cancel(job, session().id)
    if not job.halt.is_set():
        session().jobs.pop(job.key, None)


def job_panel() -> None:
    """In the sidebar of every page (drawn before the page): this session's solves that ended
    collected (and a library fault of theirs said), those still running shown (stage, time,
    building solves done of how many, refreshed every :data:`PANEL_EVERY_S` s; a Stop button
    each)."""
    ss = session()
    ss.panel_drawn, ss.stop_slots = False, {}  # a past run's placeholders are not this run's
    collect()  # solves that ended while the session looked elsewhere: their results kept
    for line in ss.ended:
        st.sidebar.warning(line)
    ss.ended.clear()
    if ss.jobs:
        with st.sidebar:
            _panel_of(list(ss.jobs.values()))


def _panel_of(shown: list[Job]) -> None:
    """The panel's title and refreshing lines (once per page run), and a Stop button for each of
    ``shown`` that runs. The Stop buttons are the page's own widgets, not the refreshing part's:
    a click ends the page's run at once (a page following the job included), where a click inside
    the refreshing part would wait for that run to end."""
    ss = session()
    if not ss.panel_drawn:
        st.markdown("**Solves of this session**")
        _status()
        ss.panel_drawn = True
    for job in shown:
        if job.running and not job.stopping:
            slot = ss.stop_slots[job.key] = st.empty()  # emptied when the job's result is collected
            if slot.button(
                f"Stop {job.title}", key=f"stop_{job.key}", help="Stop this solve; nothing of it is kept"
            ):
                cancel(job)
                st.rerun()


@st.fragment(run_every=PANEL_EVERY_S)
def _status() -> None:
    """The session's jobs, one line each, and how many solves this server runs."""
    if not session().jobs:
        st.caption("None running now.")
    for job in list(session().jobs.values()):
        if job.stopping:
            st.caption(f"Stopping: {job.status()}")
        elif job.running:
            st.caption(f"Running: {job.status()}")
        else:
            st.caption(f"Done: {job.title}: {_outcome(job.entry or {})}. Shown on its page.")
    n = len(jobs().running())
    st.caption(f"{n} solve{'s' if n != 1 else ''} running on this server")


def _outcome(entry: dict) -> str:
    """A job's result in a few words."""
    p = (entry or {}).get("plan")
    if p is None:
        return (entry or {}).get("error", "no result")[:200]
    gpus = ((p.get("kpis") or {}).get("gpus")) or 0
    return f"{p.get('status')}, {gpus:,} GPUs in {entry.get('wall_s', 0):.0f} s"


def _work(text: str, scenario: Scenario, mode: str, source: str, solved: SolveHub):
    """The job's work: solve ``scenario`` in ``mode`` (a final answer shared through ``solved``),
    keep a verified plan in the library and prefer a better stored one. No Streamlit call."""
    key = result_key(text, mode)

    def work(job: Job) -> dict:
        stored, fault = None, None
        try:
            stored = library().best(scenario_key(text), mode)
        except InputError as e:
            fault = e.lines()[0]
        entry = dict(solved.run(key, lambda: _solve(scenario, mode, job)))  # a copy: the hub's is shared
        if "plan" in entry and fault is None:
            job.report("keeping the plan in the plan library (verified again)")
            try:
                pid = library().store(text, source, mode, entry, scenario)
            except InputError as e:
                fault = e.lines()[0]
            else:
                if pid is not None:
                    entry["library_id"] = pid
        if stored is not None and _better(stored[1], entry):  # a time-limited plan kept: the better one shows
            entry = {**stored[1], "library_id": stored[0], "reused": True}
        if fault:
            entry["library_error"] = fault
        return entry

    return work


def _solve(scenario: Scenario, mode: str, job: Job) -> dict:
    """One solve as a result entry: ``plan`` (JSON), ``explanation`` of an infeasible joint
    scenario, or ``error``; ``wall_s``."""
    from planner.enums import Status
    from planner.errors import SolverFailure
    from planner.explainer import explain_infeasible
    from planner.plan.rolling import plan_mode

    entry: dict = {}
    try:
        if mode == "decomposed":
            from planner.scale.decompose import plan_decomposed

            plan = plan_decomposed(scenario, executor="serial", progress=job.report).plan
        elif mode == "stochastic":
            from planner.plan.stochastic import plan_stochastic

            plan = plan_stochastic(scenario, job.report)
        else:
            plan = plan_mode(scenario, mode, job.report)
        entry["plan"] = plan.model_dump(mode="json")
        if plan.status == Status.infeasible and mode == "joint":
            job.report("explaining the conflict (elastic relaxation)…")
            entry["explanation"] = explain_infeasible(scenario).render()
    except (SolverFailure, InputError) as e:
        entry["error"] = str(e)[:2000]
    except Exception as e:  # noqa: BLE001 - the dashboard never shows a traceback
        entry["error"] = f"internal error: {type(e).__name__}: {str(e)[:500]}"
    entry["wall_s"] = job.elapsed()
    return entry


def _better(old: dict, new: dict) -> bool:
    """Whether a stored entry ranks before a fresh one (planner.library.rank)."""

    def r(e: dict) -> tuple:
        p = e.get("plan") or {}
        return rank(p.get("status", ""), p.get("gap"), ((p.get("kpis") or {}).get("gpus")) or 0)

    return "plan" in old and ("plan" not in new or r(old) < r(new))


def solve_button(
    text: str, scenario: Scenario, label: str, key: str, mode: str = "joint", help: str | None = None
) -> Plan | None:
    """A primary Solve button for a page that shows a plan: pressed, the solve runs as a job followed
    in a status box; the plan, or None when not pressed (or no plan came)."""
    from planner.enums import Status

    if not st.button(label, type="primary", key=key, help=help):
        return None
    with st.status("Solving…", expanded=False) as box:
        plan = plan_of(solve_text(text, scenario, box, mode))
        ok = plan is not None and plan.status in (Status.optimal, Status.feasible)
        box.update(label=f"{plan.status.value if plan else 'failed'}", state="complete" if ok else "error")
    return plan


def explain_binding(text: str, scenario: Scenario, plan: Plan) -> dict:
    """Binding limits and re-solve gains for a solved plan, kept with this session's result:
    {"text": rendered explanation, "rows": one record per candidate limit}."""
    from planner.enums import Objective
    from planner.explainer import explain_feasible

    mine = session().results
    held = [k for k in (result_key(text), result_key(text, "decomposed")) if "plan" in (mine.get(k) or {})]
    key = held[0] if held else result_key(text)  # kept with the plan it explains (the Region page's too)
    entry = mine.get(key)
    if entry is None:
        entry = {}
        _keep(key, entry)
    if "binding" not in entry:
        ex = explain_feasible(scenario, plan, time_limit_s=min(scenario.solver.time_limit_s, 20))
        unit = Objective(scenario.objective).unit_for(bool(scenario.phases))
        rows = [
            {
                "limit": r.label,
                "use %": round(100 * r.use_share, 1),
                "when": r.when or "normal",
                "relaxation": r.step or "-",
                "gain": None if r.gain is None else round(r.gain, 3),
                "gain up to": None
                if r.gain_upper is None or r.gain_upper == float("inf")
                else round(r.gain_upper, 3),
                "cost USD": None if r.cost_usd is None else round(r.cost_usd),
                "LP screen": round(r.estimate, 3),
            }
            for r in ex.relaxations
        ]
        entry["binding"] = {"text": ex.render(), "rows": rows, "unit": unit}
        hub().update(key, binding=entry["binding"])
    return entry["binding"]
