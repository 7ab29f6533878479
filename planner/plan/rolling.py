"""Rolling planning (§8, ``planner plan --mode rolling``): phase by phase, each phase solved with the
ones before it installed and no knowledge of later demands; and :func:`plan_mode`, which picks
joint or rolling. Anytime: a phase the solver cannot settle in its share of the time gets
first-fit's growth instead, and once the time is up the rest is one first-fit pass, so a rolling
plan is never lost after some phases were planned.

Designed fabrics grow step by step: each step's model sizes a cluster's fabric for its installed
racks and its new ones, its network racks standing (``installed_network``: their switches stay,
new ones join them, a design once standing is the one built on); a cluster whose network stands
in one building stays there (spanning later would need region links from its first racks, which
stand without them). First-fit stands no network racks: with designed fabrics a phase without a
solve in time ends the plan before it (status time_limit)."""

from __future__ import annotations

import time

from planner.clock import MIN_SOLVE_S, Deadline, TimeUp
from planner.enums import Demand, Status
from planner.model import build
from planner.plan import BoughtRetrofit, ClusterFabric, PlacedRack, Plan
from planner.plan.fill import fill
from planner.plan.first_fit import greedy_racks, missed_demands
from planner.plan.kpis import objective_value
from planner.plan.netfill import fill_network
from planner.plan.pipeline import finish_plan, plan_scenario, with_known_bound
from planner.schema import NetworkRack, Scenario
from planner.schema.hashing import run_hash, scenario_hash
from planner.solving.core import Progress, ProgressFn, solve
from planner.version import __version__


def plan_rolling(
    scenario: Scenario,
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    deadline: Deadline | None = None,
) -> Plan:
    """Rolling planning (§8): phase by phase, each solved on its own with the racks and retrofits
    of the phases before it fixed and no knowledge of later demands: what a planner without
    foresight gets. The time limit is shared evenly by the phases. The plan has no bound for the
    whole (each phase is optimal given the last), so its status is at best ``feasible``."""
    if deadline is None:
        deadline = Deadline(time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s)
    tl_phases = [p.id for p in scenario.phases]
    if not tl_phases:
        return plan_scenario(scenario, progress, deadline=deadline)
    placed: list[PlacedRack] = []
    network: list[NetworkRack] = []  # designed fabrics' racks standing so far
    buys: list[tuple[str, str | None]] = []
    notes: list[str] = []
    status = Status.feasible
    steps_s = 0.0
    keep = 0.0  # what the figures and verification of the plan so far will take, s
    for i, ph in enumerate(tl_phases):
        s_i = _with_installed(scenario, placed)
        if (deadline.left() - keep) / (len(tl_phases) - i) < MIN_SOLVE_S:  # the rest without a solve
            rest, what = _no_time_left(s_i, f"{ph}..{tl_phases[-1]}", deadline, keep, progress)
            placed += rest
            notes.append(f"phases {ph}..{tl_phases[-1]}: {what}")
            status = Status.time_limit if scenario.designed else status
            break
        if progress:
            progress(Progress(f"rolling: phase {ph} ({i + 1} of {len(tl_phases)})", deadline.elapsed()))
        tb = time.perf_counter()
        step = _rolling_step(s_i, i, ph, buys, deadline, keep, len(tl_phases) - i, network)
        steps_s += time.perf_counter() - tb
        if step is None:
            status = Status.infeasible
            notes.append(f"phase {ph}: infeasible given the earlier phases")
            placed, buys, network = [], [], []
            break
        new, bought, note, touch_s, grown = step
        notes.append(note)
        if grown is None:  # a designed fabric and no solution in time: the plan ends before this phase
            status = Status.time_limit
            break
        placed += new
        buys += bought
        network = grown
        keep = max(keep, 3.0 * touch_s)  # figures, verification and writing: about three passes
    plan = Plan(
        planner_version=__version__,
        scenario_name=scenario.name,
        scenario_hash=scenario_hash(scenario),
        solver=scenario.solver.name,
        solver_settings=scenario.solver,
        run_hash=run_hash(scenario),
        status=status,
        mode="rolling",
        objective=scenario.objective,
        objective_value=objective_value(scenario, [*scenario.existing, *placed], buys)
        if status.has_plan
        else None,
        solve_time_s=round(steps_s, 4),
        racks=sorted([*scenario.existing, *placed], key=lambda r: (r.building, r.hall, r.row, r.position))
        if status.has_plan
        else [],
        network_racks=network,
        fabric=designs_of(scenario, network),
        retrofits=[BoughtRetrofit(id=a, phase=b) for a, b in buys],
        notes=["rolling: each phase solved with the earlier ones fixed; no bound for the whole", *notes],
    )
    if progress:
        progress(Progress("rolling: filling positions and verifying the plan", deadline.elapsed()))
    return with_known_bound(finish_plan(plan, scenario), scenario)


def designs_of(scenario: Scenario, network: list[NetworkRack]) -> list[ClusterFabric] | None:
    """Each designed cluster's design: the one its standing network racks are of (else its first)."""
    if not scenario.fabrics:
        return None
    on = {nr.cluster: nr.design for nr in network}
    return [
        ClusterFabric(cluster=c.id, design=on.get(c.id, c.fabrics[0])) for c in scenario.clusters if c.fabrics
    ]


def _no_time_left(
    s_i: Scenario, phases: str, deadline: Deadline, keep: float, progress: ProgressFn | None
) -> tuple[list[PlacedRack], str]:
    """The phases left when no time is left to solve them: one first-fit pass (its racks and a
    note), or with designed fabrics nothing (first-fit stands no network racks: the plan ends)."""
    if s_i.designed:
        return [], "no time left to solve them; nothing added (first-fit stands no network racks)"
    if progress:
        progress(Progress(f"rolling: phases {phases} by first-fit (no time left)", deadline.elapsed()))
    rest, cut = _rest_first_fit(s_i, deadline, keep)
    what = f"no time left to solve them; first-fit adds {len(rest):,} racks" + (
        " (cut at the time limit: the plan stops short of these phases' demands)" if cut else ""
    )
    return rest, what


def _rest_first_fit(s_i: Scenario, deadline: Deadline, keep: float) -> tuple[list[PlacedRack], bool]:
    """The phases left in one first-fit pass, stopped ``keep`` seconds before the deadline (the
    figures and verification of the plan need them), and whether it was cut. A cut pass that misses
    an exact or at-least demand is no plan: first-fit then runs to the end (a plan late rather than
    none)."""
    cut: list[bool] = []
    racks = greedy_racks(s_i, deadline=deadline, until=deadline.at - keep, partial=True, cut=cut)
    rest = [r for r in racks if not r.existing]
    if not cut:
        return rest, False
    fixed = {c.id for c in s_i.clusters if c.demand != Demand.max}
    if missed_demands(s_i, rest) & fixed:
        return [r for r in greedy_racks(s_i) if not r.existing], False
    return rest, True


def _with_installed(scenario: Scenario, placed: list[PlacedRack]) -> Scenario:
    """The scenario with ``placed`` racks installed (the phases a rolling plan has decided)."""
    installed = [r.model_copy(update={"existing": True}) for r in placed]
    return scenario.model_copy(update={"existing": [*scenario.existing, *installed]})


def _rolling_step(
    s_i: Scenario,
    i: int,
    ph: str,
    buys: list,
    deadline: Deadline,
    keep: float,
    phases_left: int,
    network: list[NetworkRack],
):
    """Phase i of a rolling plan with the earlier phases installed (their designed fabrics' network
    racks standing: the fabric grows from them): its new racks, the retrofits it buys, a note, the
    seconds one pass over the site took (the model's build, or first-fit) and the network racks
    standing after it; None when the solver proves it infeasible. Solved in an even share of the
    time left (less ``keep``); when time is up, the build runs out or the solver finds nothing in
    time, first-fit adds the phase's growth instead (never a solve started past the deadline), or,
    with designed fabrics (first-fit stands no network racks), nothing (network None: the plan
    ends before this phase)."""
    left = (deadline.left() - keep) / phases_left
    t0 = time.perf_counter()
    if left >= MIN_SOLVE_S:
        try:
            m = build(
                s_i,
                from_phase=i,
                fixed_buys=tuple(buys),
                to_phase=i,
                deadline=deadline,
                installed_network=tuple(network),
            )
        except TimeUp:
            m = None
        touch_s = time.perf_counter() - t0
        if m is not None:
            r = solve(m, None, left, tie_breaks=False)
            if r.status == Status.infeasible:
                return None
            if r.objective is not None:
                racks = fill(m, r.counts, r.values)
                new = [x for x in racks if not x.existing]
                bought = [(k.retrofit, k.phase) for k, v in m.buy.items() if r.values.get(v.name, 0.0) > 0.5]
                grown = grown_network(m, r.values, racks) if s_i.fabrics else network
                return (
                    new,
                    bought,
                    f"phase {ph}: {r.status.value}, objective {r.objective:,.3f}",
                    touch_s,
                    grown,
                )
    if s_i.designed:
        why = "no time left to solve it" if left < MIN_SOLVE_S else "no solution in its share of the time"
        return (
            [],
            [],
            f"phase {ph}: {why}; the plan ends before it (first-fit stands no network racks)",
            0.0,
            None,
        )
    t1 = time.perf_counter()
    new = [r for r in greedy_racks(s_i, last_phase=i) if r.phase == ph and not r.existing]
    why = "no time left to solve it" if left < MIN_SOLVE_S else "no solution in its share of the time"
    return (
        new,
        [],
        f"phase {ph}: first-fit adds {len(new):,} racks ({why})",
        time.perf_counter() - t1,
        network,
    )


def grown_network(m, values: dict, racks: list[PlacedRack]) -> list[NetworkRack]:
    """The designed fabrics' network racks after a rolling step: those standing, grown, and new."""
    picked = {c: d for (c, d), y in m.fabric_pick.items() if values.get(y.name, 0.0) > 0.5}
    chosen = {c.id: picked.get(c.id, c.fabrics[0]) for c in m.scenario.clusters if c.fabrics}
    return fill_network(m, values, racks, chosen)


def plan_mode(
    scenario: Scenario,
    mode: str = "joint",
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    deadline: Deadline | None = None,
) -> Plan:
    """Joint (one model over every phase) or rolling (:func:`plan_rolling`)."""
    if mode == "rolling":
        return plan_rolling(scenario, progress, time_limit_s, deadline)
    return plan_scenario(scenario, progress, time_limit_s, deadline=deadline)
