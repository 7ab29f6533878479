"""What every decomposition shares: the building job a worker runs, the result, the hand-over to the whole
model, and the joined plan measured against the bound of the whole (:mod:`planner.scale.decompose`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planner.batch.executors import run_jobs
from planner.clock import Deadline
from planner.enums import Demand, Objective, Status
from planner.errors import InputError, SolverFailure
from planner.input.loader import scenario_from_data
from planner.plan import ClusterFabric, Plan
from planner.plan.first_fit import greedy_meets_demands, greedy_racks, spread_broken, start_racks
from planner.plan.header import no_plan, plan_header
from planner.plan.kpis import objective_value
from planner.plan.pipeline import finish_plan, first_fit_plan, plan_scenario
from planner.plan.regionfill import fill_region_tier
from planner.rules.bounds import CAPACITY, capacity_bound
from planner.scale.bounds import lp_bound, merged
from planner.scale.budget import Budget
from planner.scale.building_most import Most, building_most
from planner.scale.packing import SOURCE as PACKING
from planner.scale.packing import packing_bound, packing_infeasible
from planner.schema import Scenario
from planner.solving.core import gap_of, within_gap

SOURCES = {
    "the merged relaxation": "merged relaxation",
    PACKING: "packing relaxation",
    "the LP relaxation of the whole": "LP relaxation",
    CAPACITY: "capacity",
}
"""A joined plan's bound, in words → its ``bound_source``."""
# ------------------------------------------------------------------ jobs (run on any worker)


def solve_part(
    part_id: str,
    data_json: str,
    time_limit_s: float,
    until: float | None = None,
    waves: int = 1,
    tie_breaks: bool = True,
) -> dict:
    """Solve one building sub-scenario; returns {"part", "plan" (JSON) | "error", "s"}. With
    ``until`` (a wall-clock time, s since the epoch, shared by every job of the run) and ``waves``
    (the waves of jobs left, this one's included, when it starts in the run's order), its limit is
    the time left to ``until`` over those waves, at least ``time_limit_s``: jobs that finish early
    leave their time to the ones after them. Without ``tie_breaks`` the plan stops at the proven
    primary objective (no least-cable stages, which take half of what is left)."""
    t0 = time.perf_counter()
    if until is not None:
        time_limit_s = max(time_limit_s, (until - time.time()) / max(1, waves))
    try:
        plan = plan_scenario(
            scenario_from_data(json.loads(data_json)), time_limit_s=time_limit_s, tie_breaks=tie_breaks
        )
        return {"part": part_id, "plan": plan.model_dump(mode="json"), "s": time.perf_counter() - t0}
    except (InputError, SolverFailure) as e:
        return {"part": part_id, "error": str(e)[:1000], "s": time.perf_counter() - t0}


def solve_again(
    scenario: Scenario,
    texts: dict[str, str],
    solved: dict[str, Plan | None],
    budget: Budget,
    within: Deadline,
    run: dict,
    say: Callable[[str], None],
    tie_breaks: bool = True,
) -> list[str]:
    """The buildings whose solve ended without a proven answer (a plan short of its gap, or none at
    its time limit) solved once more, each in the ``again`` stage's share of what ``within`` has
    left (:mod:`planner.scale.budget`: not started when that is under its least), the better of
    each building's two answers kept in ``solved`` (no answer in time is not "cannot host"). The
    buildings solved again."""
    late = sorted(
        b for b, p in solved.items() if p is not None and p.status in (Status.feasible, Status.time_limit)
    )
    if not late or not budget.starts("again", len(late), within):
        return []
    each = budget.seconds("again", len(late), within)
    say(
        f"{len(late)} building(s) without a proven answer ({', '.join(late[:5])}): solving their share "
        f"again, {each:.0f} s each"
    )

    def done(r: dict) -> None:
        new = Plan.model_validate(r["plan"]) if "plan" in r else None
        old = solved.get(r["part"])
        if old is None or (new is not None and _better_plan(scenario, new, old)):
            solved[r["part"]] = new

    run_jobs(solve_part, [(b, texts[b], each, None, 1, tie_breaks) for b in late], done, **run)
    return late


def _better_plan(scenario: Scenario, new: Plan, old: Plan) -> bool:
    """Whether a building's second plan beats its first: one with a plan against one without, else
    the better objective."""
    if not old.status.has_plan:
        return new.status.has_plan
    if not new.status.has_plan or new.objective_value is None or old.objective_value is None:
        return False
    if Objective(scenario.objective).maximise:
        return new.objective_value > old.objective_value
    return new.objective_value < old.objective_value


# ------------------------------------------------------------------ data


@dataclass
class Decomposition:
    """A decomposed solve: the plan and where the time went."""

    plan: Plan
    stages: dict[str, float] = field(default_factory=dict)
    rounds: int = 0
    bound: float | None = None
    parts: int = 0
    fell_back: str | None = None
    """Why the whole model answered instead, if it did."""


# ------------------------------------------------------------------ the whole


def _whole(
    scenario: Scenario,
    deadline: Deadline,
    stages: dict[str, float],
    rounds: int,
    why: str,
    say: Callable[[str], None],
    budget: Budget | None = None,
) -> Decomposition:
    """The fallback: the whole scenario as one model in the time left. Its answer stands, infeasible
    included (the whole model proves it); the note says why the decomposition handed over. Where
    the budget says the whole model would not fit in memory, first-fit's plan of the whole stands
    instead when it meets every demand and verifies (else no plan, status time limit)."""
    proof = _packing_proof(scenario, budget or Budget(deadline), stages, why, say)
    if proof is not None:
        return Decomposition(_timed(proof, stages), stages, rounds, None, 0, fell_back=why)
    if budget is not None and not budget.whole_fits():
        return _first_fit_whole(scenario, deadline, stages, rounds, why, say, budget)
    say(f"decomposition: {why}; solving the whole model in the {max(0.0, deadline.left()):.0f} s left")
    tw = time.perf_counter()

    def stage(p) -> None:  # the whole model's own stages, as words (no stage is silent)
        say("whole model: " + str(p).split("] ", 1)[-1])

    safe = budget.fallback if budget is not None else None
    if safe is not None:  # the whole model starts from first-fit's plan of the whole, which must beat
        ff, took = safe
        start = [r for r in ff.racks if not r.existing]
        plan = plan_scenario(
            scenario,
            stage,
            deadline=deadline,
            start_racks=start,
            start_made=("first-fit's plan of the whole", took),
        )
        if not plan.status.has_plan:
            return _fallback_stands(scenario, deadline, stages, rounds, why, say, safe)
    else:
        plan = plan_scenario(scenario, stage, deadline=deadline)
    stages["whole_s"] = time.perf_counter() - tw
    stages["total_s"] = deadline.elapsed()
    note = f"decomposition handed over to the whole model: {why}"
    plan = plan.model_copy(update={"notes": [note, *plan.notes]})
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, 0, fell_back=why)


def _packing_proof(scenario: Scenario, budget: Budget, stages: dict, why: str, say) -> Plan | None:
    """Before the whole model: the infeasible answer where the packing MILP has no solution
    (:func:`planner.scale.packing.packing_infeasible`: no plan's counts solve it), in seconds; None
    otherwise or without time for it."""
    if not budget.bounds_may_start():
        return None
    tp = time.perf_counter()
    proved = packing_infeasible(scenario, budget.seconds("packing_bound"))
    stages["packing_bound_s"] = time.perf_counter() - tp
    if not proved:
        return None
    note = (
        f"infeasible, proved by packing: {why}, and the packing relaxation (whole jobs per building, "
        "one-pod jobs within their pods' room) has no solution, so no plan meets every demand"
    )
    say(note)
    stages["total_s"] = budget.deadline.elapsed()
    return finish_plan(no_plan(scenario, Status.infeasible, [note], budget.deadline.elapsed()), scenario)


def first_fit_fallback(scenario: Scenario, budget: Budget, stages: dict[str, float], say) -> None:
    """First-fit's plan of the whole site (:func:`planner.plan.first_fit.start_racks`, a job its
    first pod cannot hold moved to the next), verified with its figures in the ``first_fit`` stage's
    share of the time: when it meets every demand, the plan a run that finds nothing better in time
    returns (``budget.fallback``). Not with designed fabrics (first-fit stands no network racks)."""
    if scenario.designed:
        return
    t, clock = time.perf_counter(), budget.deadline.clock
    until = clock() + budget.seconds("first_fit")
    greedy, how = start_racks(scenario, budget.deadline, until, moved_only=True)
    plan = None
    if greedy and clock() < until:  # first_fit_plan: only when it meets every demand
        try:
            plan = first_fit_plan(scenario, budget.deadline, "first-fit's plan of the whole", (greedy, how))
        except SolverFailure:
            plan = None
    took = time.perf_counter() - t
    stages["first_fit_s"] = took
    if plan is None or plan.kpis is None:
        say(f"first-fit of the whole meets not every demand ({took:.1f} s): no plan stands yet")
        return
    budget.fallback = (plan, took)
    say(
        f"first-fit of the whole: {plan.kpis.gpus:,} GPUs, meets every demand, verified ({took:.1f} s): "
        "the plan that stands if nothing better is found in time"
    )


def _fallback_stands(scenario, deadline, stages, rounds, why, say, safe) -> Decomposition:
    """First-fit's verified plan of the whole (``safe``: plan, seconds), as the run's answer."""
    plan = safe[0]
    note = (
        f"decomposition: {why}: first-fit's plan of the whole stands (it meets every demand; nothing "
        "better was found in time)"
    )
    say(note)
    stages["total_s"] = deadline.elapsed()
    plan = plan.model_copy(update={"notes": [note, *plan.notes]})
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, 0, fell_back=why)


def _first_fit_whole(scenario, deadline, stages, rounds, why, say, budget: Budget) -> Decomposition:
    """:func:`_whole` where the whole model would not fit: first-fit's plan, or none."""
    big = f"the whole model would need ~{budget.whole_gb():.1f} GB"
    say(
        f"decomposition: {why}; {big}, so first-fit plans the whole in the "
        f"{max(0.0, deadline.left()):.0f} s left"
    )
    if budget.fallback is not None:
        return _fallback_stands(scenario, deadline, stages, rounds, f"{why}; {big}", say, budget.fallback)
    tw = time.perf_counter()
    note = f"decomposition: {why}; {big}: first-fit's plan of the whole"
    plan = first_fit_plan(
        scenario, deadline, note, until=budget.first_fit_until()
    )  # finished by the deadline
    if plan is None:
        plan = Plan(
            scenario_name=scenario.name,
            status=Status.time_limit,
            notes=[f"decomposition: {why}; {big}, and first-fit meets not every demand: no plan in time"],
        )
    stages["whole_s"] = time.perf_counter() - tw
    stages["total_s"] = deadline.elapsed()
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, 0, fell_back=why)


def _timed(plan: Plan, stages: dict[str, float]) -> Plan:
    """The plan with the decomposition's stage times (the whole model's own stages, when it ran,
    under ``whole_``)."""
    own = {k.removesuffix("_s"): round(v, 4) for k, v in stages.items() if k != "total_s" and v > 0}
    inner = {f"whole_{k}": v for k, v in plan.stage_times_s.items()}
    return plan.model_copy(update={"stage_times_s": {**own, **inner}})


def _join(
    scenario: Scenario,
    final: dict[str, Plan],
    rounds: int,
    deadline: Deadline,
    stages: dict[str, float],
    say: Callable[[str], None],
    polish: bool,
    improve: Callable[[dict[str, Plan], Callable[[dict[str, Plan]], bool], Most], dict[str, Plan]]
    | None = None,
    whole_lp: bool = True,
    budget: Budget | None = None,
) -> Decomposition:
    """4. The whole: the building plans joined, their objective recomputed from the racks, the plan
    verified against the whole scenario and its gap measured to the tightest bound proven in time.
    ``improve`` (pairs of buildings solved again, :mod:`planner.scale.pairs`) gets its turn when the
    merged and capacity bounds do not prove the gap; should its plans fail verification whole, the
    plans as they were stand. With ``polish`` the whole model from the joined plan states its MIP
    bound (no separate LP bound); ``whole_lp`` false: no LP bound of the whole model (a region of tens
    of buildings, where it would not finish in the time the buildings leave); neither where the
    ``budget`` says the whole model would not fit in memory."""
    t0 = deadline.t0
    budget = budget or Budget(deadline)
    whole_lp = whole_lp and budget.whole_fits()
    polish = polish and budget.whole_fits()
    value = _value(scenario, final)
    bounds = _first_bounds(scenario, budget, len(final), value, stages, say)
    first = _tightest(scenario, bounds)

    def proves(plans: dict[str, Plan]) -> bool:  # whether the bounds stated so far prove their gap
        gap = None if first is None else gap_of(_value(scenario, plans), first)
        return within_gap(gap, scenario.solver.rel_gap)

    proven, before = proves(final), final
    most = {} if proven else _most(scenario, budget, stages, say)
    # the polish states the whole model's MIP bound (after its root cuts): the pairs leave it its
    # part of the time, and the LP of the whole (weaker, solved again at the polish's root) is skipped
    budget.polish_follows = polish
    if not proven and improve is not None:
        final = improve(final, proves, most)
        value = _value(scenario, final)
    first = _packing(scenario, budget, bounds, stages, say, value, most)
    proven = proves(final)
    if not proven and whole_lp and not polish and budget.bounds_may_start():
        # the merged bound does not prove the gap: the LP of the whole may (it builds within the time given)
        tl = time.perf_counter()
        lp_s = budget.seconds("lp_bound")
        say(f"bound from the LP relaxation of the whole model, {lp_s:.0f} s at most")
        bounds.append((lp_bound(scenario, lp_s), "the LP relaxation of the whole"))
        stages["lp_bound_s"] = time.perf_counter() - tl
    tv = time.perf_counter()
    try:
        plan = finish_plan(_joined_plan(scenario, final, rounds, value, bounds, t0), scenario)
    except SolverFailure as e:
        if final is before:  # the master's estimates let the buildings overdraw a shared limit
            return _whole(
                scenario, deadline, stages, rounds, f"the joined plan fails verification ({e})", say, budget
            )
        plan = finish_plan(
            _joined_plan(scenario, before, rounds, _value(scenario, before), bounds, t0), scenario
        )
    stages["verify_s"] = time.perf_counter() - tv
    if polish and plan.status != Status.optimal and budget.starts("polish"):
        plan = _polish(scenario, plan, deadline, stages, say)
    safe = budget.fallback
    if safe is not None and _better_plan(scenario, safe[0], plan):
        why = (
            f"first-fit's plan of the whole ({safe[0].objective_value:,.6g}) beats the joined plan "
            f"({plan.objective_value:,.6g})"
        )
        return _fallback_stands(scenario, deadline, stages, rounds, why, say, safe)
    stages["total_s"] = time.perf_counter() - t0
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, len(final))


def _first_bounds(
    scenario: Scenario, budget: Budget, parts: int, value: float, stages: dict, say
) -> list[tuple[float | None, str]]:
    """The merged relaxation's LP bound (only with time for it and for verifying the joined plan
    after, ~2 s at a gigawatt) and the capacity bound (always, in one pass: the gap is a figure)."""
    tw = time.perf_counter()
    bounds: list[tuple[float | None, str]] = []
    relaxed = merged(scenario) if budget.bounds_may_start() else None
    if relaxed is not None:
        say(f"joined {parts} building plans ({value:,.6g}): bound from the merged relaxation")
        bounds.append((lp_bound(relaxed, budget.seconds("merged_bound")), "the merged relaxation"))
    bounds.append((capacity_bound(scenario), CAPACITY))
    stages["merged_bound_s"] = time.perf_counter() - tw
    return bounds


def _tightest(scenario: Scenario, bounds: list[tuple[float | None, str]]) -> float | None:
    """The tightest of the bounds stated (None: none is)."""
    stated = [b for b, _ in bounds if b is not None]
    return (min(stated) if Objective(scenario.objective).maximise else max(stated)) if stated else None


def _packing(
    scenario: Scenario, budget: Budget, bounds: list, stages: dict, say, value: float, most: Most
) -> float | None:
    """The tightest bound stated, after the packing bound (:mod:`planner.scale.packing`) is added
    to ``bounds`` where those stated do not prove the joined plan's gap (objective ``value``) and
    there is time for it; with a row for the most each building holds (``most``)."""
    first = _tightest(scenario, bounds)
    if within_gap(None if first is None else gap_of(value, first), scenario.solver.rel_gap):
        return first
    if not budget.bounds_may_start():
        return first
    tp = time.perf_counter()
    limit = budget.seconds("packing_bound")
    say(f"bound from the packing relaxation, {limit:.0f} s at most")
    bounds.append((packing_bound(scenario, limit, most), PACKING))
    stages["packing_bound_s"] = time.perf_counter() - tp
    return _tightest(scenario, bounds)


def _most(scenario: Scenario, budget: Budget, stages: dict, say) -> Most:
    """The most each building holds (:mod:`planner.scale.building_most`), for a maximising
    objective with time for it: the pairs' estimates and rows of the packing bound."""
    if not Objective(scenario.objective).maximise or not budget.bounds_may_start():
        return {}
    tm = time.perf_counter()
    limit = budget.seconds("building_most")
    say(f"the most each building holds, {limit:.0f} s at most")
    most = building_most(scenario, Deadline(limit))
    stages["building_most_s"] = time.perf_counter() - tm
    return most


def _value(scenario: Scenario, final: dict[str, Plan]) -> float:
    """The objective of the building plans joined, recomputed from their racks."""
    racks = [r for p in final.values() for r in p.racks]
    return objective_value(scenario, racks, [(b.id, b.phase) for p in final.values() for b in p.retrofits])


def _joined_plan(
    scenario: Scenario,
    final: dict[str, Plan],
    rounds: int,
    value: float,
    bounds: list[tuple[float | None, str]],
    t0: float,
) -> Plan:
    """The building plans joined into one plan of the whole, its gap to the tightest valid bound
    (a bound on the wrong side of the plan is no bound), figures not yet attached."""
    racks = sorted(
        (r for p in final.values() for r in p.racks), key=lambda r: (r.building, r.hall, r.row, r.position)
    )
    network, fabric = _joined_fabrics(scenario, final, racks)
    maximise = Objective(scenario.objective).maximise
    slack = 1e-6 * max(1.0, abs(value))
    found = [
        (round(b, 6), why)
        for b, why in bounds
        if b is not None and (b >= value - slack if maximise else b <= value + slack)
    ]
    bound, bound_from = (min(found) if maximise else max(found)) if found else (None, "")
    gap = None if bound is None else gap_of(value, bound)
    status = Status.optimal if within_gap(gap, scenario.solver.rel_gap) else Status.feasible
    return Plan(
        **plan_header(scenario),
        status=status,
        optimality="proven" if status == Status.optimal else None,
        mode="joint",
        objective_value=round(value, 6),
        bound=bound,
        bound_source=SOURCES.get(bound_from, "") if bound is not None else "",
        gap=gap,
        build_time_s=0.0,
        solve_time_s=round(time.perf_counter() - t0, 4),
        racks=racks,
        network_racks=network,
        fabric=fabric,
        retrofits=[b for p in final.values() for b in p.retrofits],
        notes=[
            f"decomposed by building: {len(final)} building plans joined after {rounds} master round(s); "
            + (
                f"gap measured against {bound_from}"
                if bound is not None
                else "no bound: no relaxation was solved to optimality in time"
            )
        ],
    )


def _joined_fabrics(scenario: Scenario, final: dict[str, Plan], racks: list) -> tuple[list, list | None]:
    """The building plans' network racks and fabric choices, and the region tier's switches for the
    clusters that span buildings (:func:`planner.plan.regionfill.fill_region_tier`)."""
    if not scenario.fabrics:
        return [], None
    network = [nr for p in final.values() for nr in p.network_racks]
    picks = {f.cluster: f.design for p in final.values() for f in (p.fabric or [])}
    fabric = [
        ClusterFabric(cluster=c.id, design=picks.get(c.id, c.fabrics[0]))
        for c in scenario.clusters
        if c.fabrics
    ]
    taken = {(nr.row, nr.position) for nr in network}
    network += fill_region_tier(scenario, racks, {f.cluster: f.design for f in fabric}, taken)
    return network, fabric


def first_fit_repair(
    scenario: Scenario,
    kept: dict[str, Plan],
    rounds: int,
    deadline: Deadline,
    stages: dict[str, float],
    say: Callable[[str], None],
    why: str,
    budget: Budget | None = None,
) -> Decomposition | None:
    """When a decomposition ends without a plan: the buildings whose share solved (``kept``) keep
    their plans and first-fit (demands first) places everything else around them; the joined plan
    when that meets every demand, breaks no spread limit and verifies (the whole model then gets its
    turn to polish it), else None. Not with designed fabrics: first-fit stands no network racks."""
    if not kept or deadline.left() <= 0 or scenario.designed:
        return None
    placed = [r for p in kept.values() for r in p.racks if not r.existing]
    installed = [r.model_copy(update={"existing": True}) for r in placed]
    around = scenario.model_copy(update={"existing": [*scenario.existing, *installed]})
    extra = [r for r in greedy_racks(around, largest_first=True, retry=True) if not r.existing]
    broken = spread_broken(scenario, [*placed, *extra])  # first-fit keeps per-pod spread only
    if broken - {c.id for c in scenario.clusters if c.demand == Demand.max}:
        return None
    extra = [r for r in extra if r.cluster not in broken]  # as many as fit may place none there
    if not greedy_meets_demands(scenario, [*placed, *extra]):
        return None
    say(
        f"decomposition: {why}; {len(kept)} building plans kept and first-fit places the rest "
        f"({len(extra):,} racks), which meets every demand"
    )
    final = {**kept, "first-fit": Plan(scenario_name=scenario.name, racks=extra)}
    try:
        return _join(scenario, final, rounds, deadline, stages, say, True, budget=budget)
    except SolverFailure:
        return None


def _polish(
    scenario: Scenario, joined: Plan, deadline: Deadline, stages: dict[str, float], say: Callable[[str], None]
) -> Plan:
    """The joined plan against the whole model's plan in the time left, which starts from the
    joined plan's racks (its first incumbent, and the answer it must beat): the better objective
    wins (both verified); the bound is the tighter of the two stated."""
    shown = "unknown" if joined.gap is None else f"{joined.gap:.3%}"
    say(
        f"joined plan at gap {shown}: the whole model gets the {deadline.left():.0f} s left, from the "
        "joined plan"
    )
    tp = time.perf_counter()
    start = [r for r in joined.racks if not r.existing]
    try:
        other = plan_scenario(scenario, deadline=deadline, start_racks=start)
    except SolverFailure:
        other = None
    stages["polish_s"] = time.perf_counter() - tp
    maximise = Objective(scenario.objective).maximise
    if other is None or not other.status.has_plan or other.objective_value is None:
        return joined
    bounds = [
        (b, src)
        for b, src in ((joined.bound, joined.bound_source), (other.bound, other.bound_source))
        if b is not None
    ]
    bound, source = (min(bounds) if maximise else max(bounds)) if bounds else (None, "")
    better = (
        other.objective_value > joined.objective_value + 1e-9
        if maximise
        else other.objective_value < joined.objective_value - 1e-9
    )
    best = other if better else joined
    value = best.objective_value
    gap = None if bound is None else gap_of(value, bound)
    status = Status.optimal if within_gap(gap, scenario.solver.rel_gap) else Status.feasible
    who = "the whole model's plan" if better else "the joined plan"
    note = (
        f"decomposition polished: joined {joined.objective_value:,.6g}, whole model "
        f"{other.objective_value:,.6g} in the time left; "
        f"{who} kept"
    )
    return best.model_copy(
        update={
            "bound": None if bound is None else round(bound, 6),
            "bound_source": source,
            "gap": gap,
            "status": status,
            "optimality": "proven" if status == Status.optimal else None,
            "notes": [note, *[n for n in best.notes if not n.startswith("decomposed by")], *joined.notes[:1]],
        }
    )


def describe(d: Decomposition) -> dict[str, Any]:
    """Stage times and counts of a decomposed solve, for the CLI and benchmark."""
    return {
        **{k: round(v, 3) for k, v in d.stages.items()},
        "rounds": d.rounds,
        "buildings": d.parts,
        "bound": d.bound,
        **({"whole_model": d.fell_back} if d.fell_back else {}),
    }
