"""The stages end to end: load → validate → build → solve → plan → verify.

:func:`plan_scenario` is what the CLI, the dashboard and the batch runner
call. It never returns a plan that the independent verifier rejects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import pulp

from planner.clock import MIN_SOLVE_S, Deadline, TimeUp, reserve_s
from planner.enums import Demand, FailoverPolicy, Objective, RetrofitKind, Status
from planner.errors import SolverFailure
from planner.model import Model, build
from planner.model.room_proof import room_shortfalls
from planner.plan import BoughtRetrofit, ClusterFabric, PlacedRack, Plan
from planner.plan.fabric_start import fabric_relaxed_start
from planner.plan.failover import failover_text, rack_counts, strict_n1  # noqa: F401 - re-exported
from planner.plan.fill import fill, representable, start_from_racks
from planner.plan.first_fit import greedy_meets_demands, start_racks
from planner.plan.grid import with_grid
from planner.plan.header import no_plan, plan_header
from planner.plan.kpis import objective_value
from planner.plan.netfill import fill_network
from planner.plan.numbers import plan_figures
from planner.plan.orders import order_book
from planner.rules.bounds import capacity_bound
from planner.schema import FailoverGain, Scenario
from planner.solving.core import (
    Progress,
    ProgressFn,
    SolveResult,
    counts_from,
    evaluate,
    gap_of,
    solve,
    within_gap,
)
from planner.verifier import verify


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def to_plan(m: Model, result: SolveResult, build_time_s: float, solver: str) -> Plan:
    """Plan stage: domain plan from a solve result, with KPIs and utilisation from the verifier."""
    s = m.scenario
    racks = fill(m, result.counts, result.values) if result.objective is not None else []
    fabric = None
    network = []
    if s.fabrics and result.objective is not None:
        picked = {c: d for (c, d), y in m.fabric_pick.items() if result.values.get(y.name, 0.0) > 0.5}
        fabric = [
            ClusterFabric(cluster=c.id, design=picked.get(c.id, c.fabrics[0]))
            for c in s.clusters
            if c.fabrics
        ]
        network = fill_network(m, result.values, racks, {f.cluster: f.design for f in fabric})
    bought = [
        BoughtRetrofit(id=k.retrofit, phase=k.phase)
        for k, v in m.buy.items()
        if result.objective is not None and result.values.get(v.name, 0.0) > 0.5
    ]
    plan = Plan(
        **plan_header(s, solver),
        status=result.status,
        optimality=("solver_claim" if result.claimed else "proven")
        if result.status == Status.optimal
        else None,
        objective_value=_round(result.objective),
        bound=_round(result.bound),
        bound_source=result.bound_source if result.bound is not None else "",
        gap=_round(result.gap),
        build_time_s=round(build_time_s, 4),
        solve_time_s=round(result.solve_time_s, 4),
        racks=racks,
        network_racks=network,
        retrofits=bought,
        fabric=fabric,
        notes=result.stages,
    )
    done = finish_plan(plan, s)
    return done.model_copy(update={"notes": _tie_break_notes(done)})


def _tie_break_notes(plan: Plan) -> list[str]:
    """The tie-break notes with the plan's own figures: the model counts each cable at its position
    class's mean length; the filled positions (nearest the pod first) give the plan's."""
    k = plan.kpis
    out = []
    for note in plan.notes:
        if note.startswith("min cable_usd:") and k is not None:
            note = f"min cable_usd: {k.capex_links_usd:,.1f} USD (kpis.capex_links_usd)"
        elif note.startswith("min cable_m:") and k is not None:
            note = f"min cable_m: {k.cable_m:,.1f} m (kpis.cable_m)"
        out.append(note)
    return out


def structures_when_needed(plan: Plan, scenario: Scenario) -> Plan:
    """Under max_gpus / max_pflops (whose objective does not count when money is spent) a structure
    is bought as late as its first rack allows: in the phase that rack arrives less the structure's
    lead time; one that holds no rack is not bought. The solver is indifferent between these
    choices; the capex per phase and the TCO are not. Under any objective a structure that costs
    nothing (priced by the racks standing in it) and holds no rack is not bought."""
    builds = {r.id: r for r in scenario.retrofits if r.effect.kind == RetrofitKind.build_structure}
    used = {r.building for r in plan.racks}
    free = [b for b in plan.retrofits if b.id in builds and builds[b.id].cost_usd == 0]
    if any(builds[b.id].effect.building not in used for b in free):  # costs nothing, holds nothing
        kept = [b for b in plan.retrofits if b not in free or builds[b.id].effect.building in used]
        plan = plan.model_copy(update={"retrofits": kept})
    if Objective(scenario.objective) not in (Objective.max_gpus, Objective.max_pflops) or not plan.retrofits:
        return plan
    if not any(b.id in builds for b in plan.retrofits):
        return plan
    order = scenario.phase_at
    first: dict[str, int] = {}
    for r in plan.racks:
        at = 0 if r.existing else order.get(r.phase, 0)
        first[r.building] = min(first.get(r.building, at), at)
    out = []
    for b in plan.retrofits:
        r = builds.get(b.id)
        if r is None:
            out.append(b)
        elif r.effect.building in first:
            latest = first[r.effect.building] - r.lead_phases
            now = order.get(b.phase, 0)
            out.append(
                b.model_copy(update={"phase": scenario.phases[latest].id})
                if scenario.phases and latest > now
                else b
            )
    return plan.model_copy(update={"retrofits": out})


def finish_plan(plan: Plan, scenario: Scenario) -> Plan:
    """Attach every figure (:func:`planner.plan.numbers.plan_figures`: KPIs, utilisation, fabric,
    reliability, phases, stranded power) once structures are bought when needed first and §21 sized
    (:func:`structures_when_needed`, :func:`with_grid`); refuse a plan the verifier rejects."""
    plan = with_grid(scenario, structures_when_needed(plan, scenario))
    done, rep = plan_figures(plan, scenario)
    if plan.status.has_plan and not rep.ok:
        lines = "; ".join(str(v) for v in rep.violations[:5])
        raise SolverFailure(
            f"the {plan.solver} plan fails independent verification ({len(rep.violations)} violations): "
            f"{lines}"
        )
    return done


def _better(maximise: bool, a: float, b: float) -> bool:
    """Whether objective ``a`` is strictly better than ``b``."""
    tol = 1e-9 * max(1.0, abs(b))
    return a > b + tol if maximise else a < b - tol


def demand_bound(scenario: Scenario) -> tuple[float, str] | None:
    """A bound from the demands alone (max_gpus / max_pflops, single phase): every cluster takes at
    most its figure (exact, or as many as fit up to it), so no plan places more than Σ figures (×
    the best PFLOPS per GPU of its rack types). None once a cluster is uncapped (at-least, or as
    many as fit with no figure)."""
    objective = Objective(scenario.objective)
    if scenario.phases or objective not in (Objective.max_gpus, Objective.max_pflops):
        return None
    types = scenario.catalog.by_id()
    total = 0.0
    for c in scenario.clusters:
        if c.gpus is None or c.demand == Demand.at_least:
            return None
        per = (
            1.0
            if objective == Objective.max_gpus
            else max(
                (types[t].pflops_bf16 / types[t].gpus for t in scenario.gpu_types_for(c) if types[t].gpus),
                default=0.0,
            )
        )
        total += c.gpus * per
    return total, "the sum of the demands"


def _with_first_fit(
    m: Model,
    result: SolveResult,
    greedy: list[PlacedRack],
    progress: ProgressFn | None,
    elapsed: float,
    accepted: Callable[[], bool] = lambda: True,
) -> SolveResult:
    """Fall back on the first-fit plan when it meets every demand, the verifier accepts it
    (``accepted``) and the solver returned nothing, or something worse (status feasible; gap
    against the solver's bound if it has one)."""
    if not greedy or m.elastic:
        return result
    start = start_from_racks(m, greedy)
    if not start:
        return result
    values = {v.name: float(x) for v, x in start.items()}
    obj = evaluate(m.prob.objective, values)
    maximise = m.prob.sense == pulp.LpMaximize
    if result.objective is not None and not _better(maximise, obj, result.objective):
        return result
    if result.status == Status.infeasible:
        return result  # a proof of infeasibility beats a heuristic (the verifier would disagree loudly)
    if not accepted():
        return result  # first-fit missed a limit it does not model
    bound = result.bound
    if bound is not None and ((maximise and bound < obj) or (not maximise and bound > obj)):
        bound = None
    gap = gap_of(obj, bound) if bound is not None else None
    why = (
        "the solver found no plan in time"
        if result.objective is None
        else f"the solver's plan ({result.objective:,.6g}) is worse"
    )
    note = f"{why}; returning the first-fit plan ({obj:,.6g}), which meets every demand"
    if progress:
        progress(Progress(note, elapsed))
    status = Status.optimal if within_gap(gap, m.scenario.solver.rel_gap) else Status.feasible
    return replace(
        result,
        status=status,
        objective=obj,
        bound=bound,
        gap=gap,
        counts=counts_from(m, values),
        values=values,
        stages=[*result.stages, note],
        claimed=False,
    )


def plan_scenario(
    scenario: Scenario,
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    aggregate: bool = True,
    tie_breaks: bool = True,
    warm_start: bool = True,
    group_clusters: bool = True,
    deadline: Deadline | None = None,
    start_racks: list[PlacedRack] | None = None,
    start_made: tuple[str, float] = ("the plan given", 0.0),
) -> Plan:
    """Build, solve, fill and verify: the answer to a scenario.

    The time limit (default: the scenario's) bounds the whole run from this call, or from the
    ``deadline``'s start (the ``planner`` command starts it with the process): first-fit runs
    first, in at most :data:`FIRST_FIT_SHARE` of it (or half of what is left); building the model
    stops early enough to leave first-fit's plan its figures, and when it runs out that plan
    stands if it meets every demand and verifies (else status ``time_limit``, no plan); the
    solver gets what is left less a reserve for filling, verifying and the figures
    (:func:`planner.clock.reserve_s`); the strict N-1 solve for the failover gain runs only in
    time still left. ``warm_start``: hand first-fit's plan (or ``start_racks``; ``start_made``: how,
    in how many seconds) to the solver as its first incumbent; when it meets every demand the
    answer is never worse (returned, status feasible, if the solver finds nothing better). A plan
    without a bound gets the capacity bound."""
    if deadline is None:
        deadline = Deadline(time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s)
    elapsed, say, stages = deadline.elapsed, progress or (lambda _p: None), {}
    if (short := infeasible_by_room(scenario, elapsed(), say)) is not None:
        return short
    warm_start = warm_start and not any(c.fabrics for c in scenario.clusters)  # first-fit sizes no fabric
    greedy, how, touch_s = _start(scenario, deadline, stages, say, warm_start, start_racks, start_made)
    # first-fit's plan may stand only when the verifier accepts it whole (first-fit knows the site, not
    # every limit a scenario may add), verified only when it would stand (a verify costs seconds)
    meets = bool(greedy) and greedy_meets_demands(scenario, greedy)
    accepted = _verified_once(scenario, greedy)
    ff = (greedy, how, touch_s)
    built = _build_in_time(scenario, deadline, stages, say, ff, (meets, accepted), aggregate, group_clusters)
    if isinstance(built, Plan):
        return built
    m, build_s = built
    if progress:
        size = m.size
        counts = f"{size['variables']:,} variables ({size['integers']:,} integer)"
        say(Progress(f"built {counts}, {size['constraints']:,} constraints", elapsed()))
    start = start_from_racks(m, greedy) if greedy else None
    whole = bool(start)  # every first-fit rack has its variable
    if greedy and not start:  # a unit across two of a row's classes: start from the racks the model can take
        start = start_from_racks(m, representable(m, greedy)) or None
    if warm_start:
        given = "handed to the solver" if whole else "in part (racks the model has no variable for left out)"
        say(Progress(f"start ({how}): {given if start else 'none'}", elapsed()))
    ff_stands = meets  # first-fit's own plan may stand against the solver's, represented or not
    meets = meets and whole
    touch_s = max(touch_s, build_s)
    keep = reserve_s(touch_s, deadline.left())
    t_solve = time.perf_counter()
    known = demand_bound(scenario) if meets else None
    if known is not None and not accepted():
        known = None
    limit = deadline.limit_s - keep
    start = fabric_relaxed_start(m, start, deadline, keep, say)
    result = solve(m, progress, limit, tie_breaks=tie_breaks, start=start, t0=deadline.t0, known_bound=known)
    if warm_start and meets:
        result = _with_first_fit(m, result, greedy, progress, elapsed(), accepted)
    stages["solve"] = time.perf_counter() - t_solve
    if warm_start and ff_stands and not whole and _first_fit_beats(scenario, result, greedy, accepted):
        why = "the solver's plan is worse than first-fit's, which the model could not take whole as its start"
        plan = _first_fit_only(scenario, greedy, how, why, stages, say, elapsed)
        return _with_failover_gain(
            scenario, _solver_bound(plan, result, scenario), deadline, touch_s, progress, stages
        )
    say(Progress("filling positions and verifying the plan", elapsed()))
    t_fill = time.perf_counter()
    plan = to_plan(m, result, build_s, scenario.solver.name)
    stages["fill_verify"] = time.perf_counter() - t_fill
    plan = _with_failover_gain(
        scenario, with_known_bound(plan, scenario), deadline, touch_s, progress, stages
    )
    return plan.model_copy(update={"stage_times_s": {k: round(v, 4) for k, v in stages.items()}})


def _first_fit_beats(
    scenario: Scenario, result: SolveResult, greedy: list[PlacedRack], accepted: Callable[[], bool]
) -> bool:
    """Whether first-fit's racks, valued from the racks themselves, beat the solver's answer (or
    there is none) and the verifier accepts them; never against a proof of infeasibility."""
    if result.status == Status.infeasible:
        return False
    value = objective_value(scenario, greedy, [])
    maximise = Objective(scenario.objective).maximise
    if result.objective is not None and not _better(maximise, value, result.objective):
        return False
    return accepted()


def _solver_bound(plan: Plan, result: SolveResult, scenario: Scenario) -> Plan:
    """First-fit's plan with the solver's bound where it is valid for it and tighter than the one
    known without a solver (labelled as the solver's claim)."""
    b, value = result.bound, plan.objective_value
    if b is None or value is None:
        return plan
    maximise = Objective(scenario.objective).maximise
    valid = b >= value - 1e-6 * max(1.0, abs(value)) if maximise else b <= value + 1e-6 * max(1.0, abs(value))
    tighter = plan.bound is None or (b < plan.bound if maximise else b > plan.bound)
    if not (valid and tighter):
        return plan
    gap = gap_of(value, b)
    proven = within_gap(gap, scenario.solver.rel_gap)
    return plan.model_copy(
        update={
            "bound": _round(b),
            "bound_source": "solver",
            "gap": _round(gap),
            **({"status": Status.optimal, "optimality": "solver_claim"} if proven else {}),
        }
    )


def _verified_once(scenario: Scenario, racks: list[PlacedRack]) -> Callable[[], bool]:
    """Whether the verifier accepts ``racks`` as a plan, asked at most once (a verify of a large plan
    costs seconds): the racks with the order book their figures would give them (a plan where lead
    times apply must state one, and first-fit's racks have none of their own)."""
    checked: list[bool] = []

    def accepted() -> bool:
        if not checked:
            plan = Plan(scenario_name=scenario.name, racks=racks, orders=order_book(scenario, racks, []))
            checked.append(verify(plan, scenario).ok)
        return checked[0]

    return accepted


def with_known_bound(plan: Plan, scenario: Scenario) -> Plan:
    """A plan that states no bound gets the tightest bound known without a solver — the sum of the
    demands (:func:`demand_bound`) or the capacity bound (:func:`planner.rules.bounds.capacity_bound`)
    — so its gap is a figure; optimal when that proves the requested gap. A plan optimal on the
    solver's word, or without a plan, is left as it is."""
    if not plan.status.has_plan or plan.bound is not None or plan.optimality == "solver_claim":
        return plan
    value = plan.objective_value
    if value is None:
        return plan
    maximise = Objective(scenario.objective).maximise
    slack = 1e-6 * max(1.0, abs(value))
    demands = demand_bound(scenario)
    candidates = [(demands[0] if demands else None, "demands"), (capacity_bound(scenario), "capacity")]
    known = [
        (b, src)
        for b, src in candidates
        if b is not None and (b >= value - slack if maximise else b <= value + slack)
    ]
    if not known:
        return plan
    bound, source = min(known) if maximise else max(known)
    gap = gap_of(value, bound)
    proven = within_gap(gap, scenario.solver.rel_gap) and plan.status == Status.feasible
    return plan.model_copy(
        update={
            "bound": _round(bound),
            "bound_source": source,
            "gap": _round(gap),
            **({"status": Status.optimal, "optimality": "proven"} if proven else {}),
        }
    )


def _build_in_time(scenario, deadline, stages, say, ff, stand, aggregate, group_clusters):
    """The model and its build seconds; when the build runs out of time, first-fit's plan if it
    may stand (``stand``: whether it meets every demand, and a call asking the verifier), else no
    plan. The build stops early enough to leave first-fit's plan its figures and verification, and
    does not start when less than :data:`~planner.clock.MIN_SOLVE_S` would be left for it (first-fit's
    plan is then verified once, with its figures)."""
    greedy, how, touch_s = ff
    meets, accepted = stand
    keep_ff = min(max(0.2, 2.0 * touch_s), max(0.0, deadline.left())) if greedy else 0.0
    if greedy and meets and deadline.left() - keep_ff < MIN_SOLVE_S:
        why = "no time left to build and solve the model"  # a build would only eat the figures' time
        try:
            return _first_fit_only(scenario, greedy, how, why, stages, say, deadline.elapsed)
        except SolverFailure as e:
            note = f"{why}, and the first-fit plan fails verification ({e}): no plan (raise --time-limit)"
            say(Progress(note, deadline.elapsed()))
            return finish_plan(no_plan(scenario, Status.time_limit, [note], deadline.elapsed()), scenario)
    say(Progress("building model", deadline.elapsed()))
    t_build = time.perf_counter()
    try:
        m = build(
            scenario,
            aggregate=aggregate,
            group_clusters=group_clusters,
            deadline=Deadline(max(0.0, deadline.limit_s - keep_ff), deadline.t0),
        )
    except TimeUp as e:
        stages["build"] = time.perf_counter() - t_build
        if greedy and meets and accepted():
            return _first_fit_only(scenario, greedy, how, f"{e}", stages, say, deadline.elapsed)
        note = f"{e}: no plan (raise --time-limit)"
        say(Progress(note, deadline.elapsed()))
        return finish_plan(no_plan(scenario, Status.time_limit, [note], deadline.elapsed()), scenario)
    build_s = time.perf_counter() - t_build
    stages["build"] = build_s
    return m, build_s


def _start(scenario, deadline, stages, say, warm_start: bool, given, made):
    """The racks the solve starts from and must beat, how and in how many seconds they were made:
    ``given`` (made as ``made`` says), else first-fit's (:func:`_first_fit`); none without a warm start."""
    if not warm_start:
        return [], "", 0.0
    if given is not None:
        return list(given), made[0], made[1]
    return _first_fit(scenario, deadline, stages, say)


def _first_fit(
    scenario: Scenario, deadline: Deadline, stages: dict, say
) -> tuple[list[PlacedRack], str, float]:
    """First-fit's racks (within its share of the time), how they were made and the seconds it took
    (a pass over every position: the measure the reserves are sized from)."""
    say(Progress("first-fit", deadline.elapsed()))
    t_ff = time.perf_counter()
    # its share of the limit, or 30 % of what is left when a slow start (a loaded machine) ate it: the
    # figures, verification and writing of its plan cost up to twice what first-fit itself took
    until = max(deadline.share(FIRST_FIT_SHARE), time.perf_counter() + 0.3 * max(0.0, deadline.left()))
    if scenario.solver.work_limit is not None:  # a repeatable run: first-fit is not cut by the clock
        greedy, how = start_racks(scenario)
    else:
        greedy, how = start_racks(scenario, deadline, until)
    took = time.perf_counter() - t_ff
    stages["first_fit"] = took
    return greedy, how, took


def first_fit_plan(
    scenario: Scenario,
    deadline: Deadline,
    why: str,
    made: tuple[list[PlacedRack], str] | None = None,
    until: float | None = None,
) -> Plan | None:
    """First-fit's plan of the whole (``made``: its racks and how, if placed), with the bound known
    without a solver, when it meets every demand and verifies; else None. Its placement stops at the
    deadline (or ``until``, an earlier clock time: the racks placed by then stand where every
    cluster wants as many as fit); the plan is verified once, with its figures (a second verification
    of the bare racks before them cost 16 s idle at 5 GW, 130 s on a loaded machine)."""
    if scenario.designed:
        return None  # first-fit stands no network racks
    greedy, how = made if made is not None else start_racks(scenario, deadline, until or deadline.at)
    if not greedy or not greedy_meets_demands(scenario, greedy):
        return None
    try:
        return _first_fit_only(scenario, greedy, how, why, {}, lambda _p: None, deadline.elapsed)
    except SolverFailure:  # the verifier refuses first-fit's racks: no plan from them
        return None


def _first_fit_only(
    scenario: Scenario, greedy: list[PlacedRack], how: str, why: str, stages: dict, say, elapsed
) -> Plan:
    """The answer when the model cannot be built in time: first-fit's plan, which meets every demand
    and the verifier accepts, status feasible, with the bound known without a solver."""
    note = f"{why}; returning the {how} plan, which meets every demand"
    say(Progress(note, elapsed()))
    t_fill = time.perf_counter()
    plan = Plan(
        **plan_header(scenario, "greedy"),
        status=Status.feasible,
        objective_value=_round(objective_value(scenario, greedy, [])),  # first-fit buys no retrofit
        racks=greedy,
        notes=[note],
    )
    plan = with_known_bound(finish_plan(plan, scenario), scenario)
    stages["fill_verify"] = time.perf_counter() - t_fill
    return plan.model_copy(update={"stage_times_s": {k: round(v, 4) for k, v in stages.items()}})


def _with_failover_gain(
    scenario: Scenario, plan: Plan, deadline: Deadline, touch_s: float, progress, stages: dict
) -> Plan:
    """The plan with its failover gain against strict N-1, when some cluster caps or sheds."""
    flexible = any(c.on_power_failure != FailoverPolicy.keep for c in scenario.clusters)
    if not (plan.status.has_plan and plan.racks and flexible):
        return plan
    t_fail = time.perf_counter()
    gain = failover_gain(scenario, plan, deadline, touch_s, progress)
    stages["failover"] = time.perf_counter() - t_fail
    return plan.model_copy(update={"failover": gain, "notes": [*plan.notes, failover_text(scenario, gain)]})


FIRST_FIT_SHARE = 0.35
"""First-fit (the solver's start) stops once this share of the time limit has passed."""


def infeasible_by_room(
    scenario: Scenario, elapsed_s: float = 0.0, say: ProgressFn | None = None
) -> Plan | None:
    """The infeasible answer when a firm demand exceeds the room of its scope
    (:func:`planner.model.room_proof.room_shortfalls`: a proof from the site's limits, no model
    built), its first note reported to ``say``; None when no demand does."""
    short = room_shortfalls(scenario)
    if not short:
        return None
    notes = [f"infeasible, proved by room: {x}" for x in short]
    if say is not None:
        say(Progress(notes[0], elapsed_s))
    return finish_plan(no_plan(scenario, Status.infeasible, notes, elapsed_s), scenario)


def failover_gain(
    scenario: Scenario,
    plan: Plan,
    deadline: Deadline | None = None,
    touch_s: float = 0.0,
    progress: ProgressFn | None = None,
) -> FailoverGain:
    """What the failover policies buy: the plan against the same scenario under strict N-1 (solved
    again with every cluster on ``keep``, in the time left), with the strict plan's rack counts as
    the witness. Not computed (status time_limit, a note) when too little time is left."""
    limit = (
        deadline.left() - reserve_s(touch_s, deadline.left())
        if deadline is not None
        else scenario.solver.time_limit_s
    )
    if limit < MIN_SOLVE_S + touch_s:
        return FailoverGain(
            strict_status=Status.time_limit,
            note=f"not computed: {max(limit, 0.0):.1f} s left of the time limit",
        )
    if progress:
        progress(
            Progress("solving strict N-1 for the failover gain", deadline.elapsed() if deadline else 0.0)
        )
    strict = plan_scenario(strict_n1(scenario), deadline=Deadline(limit))
    if not strict.status.has_plan or strict.objective_value is None or strict.kpis is None:
        return FailoverGain(
            strict_status=strict.status, note=f"strict N-1 ({strict.status.value}) has no plan"
        )
    return FailoverGain(
        strict_status=strict.status,
        strict_gpus=strict.kpis.gpus,
        gain_gpus=plan.kpis.gpus - strict.kpis.gpus,
        strict_objective=strict.objective_value,
        gain_objective=round((plan.objective_value or 0.0) - strict.objective_value, 6),
        strict_racks=rack_counts(strict.racks),
        strict_retrofits=strict.retrofits,
    )
