"""The stages end to end: load → validate → build → solve → plan → verify.

:func:`plan_scenario` is what the CLI, the dashboard and the batch runner
call. It never returns a plan that the independent verifier rejects.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pulp

from planner.version import __version__
from planner.baseline import greedy_meets_demands, greedy_racks
from planner.build import Model, build
from planner.kpis import compute_kpis
from planner.loader import scenario_hash
from planner.enums import Status
from planner.plan import PlacedRack, Plan
from planner.schema import Scenario
from planner.site_index import place
from planner.solve import Progress, ProgressFn, SolveResult, SolverFailure, counts_from, gap_of, solve
from planner.verify import verify


def fill(m: Model, counts: dict[tuple[str, str, str], int]) -> list[PlacedRack]:
    """Concrete positions for aggregate counts: in each class, clusters in scenario order,
    rack types in the cluster's order, positions nearest the pod network rack first."""
    types = m.scenario.catalog.by_id()
    c_order = {c.id: i for i, c in enumerate(m.scenario.clusters)}
    t_order = {(c.id, t): j for c in m.scenario.clusters for j, t in enumerate(c.rack_types)}
    by_class: dict[str, list[tuple[str, str, int]]] = {}
    for (k, t, c), n in counts.items():
        by_class.setdefault(k, []).append((c, t, n))
    racks: list[PlacedRack] = []
    for k in sorted(by_class):
        free = iter(m.classes[k].positions)
        for c, t, n in sorted(by_class[k], key=lambda x: (c_order[x[0]], t_order[x[0], x[1]])):
            for _ in range(n):
                _, pos = next(free)
                racks.append(place(m.ix, m.classes[k].row, pos, types[t], c))
    racks.sort(key=lambda r: (r.building, r.hall, r.row, r.position))
    return racks


def start_from_racks(m: Model, racks: list[PlacedRack]) -> dict:
    """The model's variables set to describe a placement (the inverse of :func:`fill`);
    empty if some rack has no matching variable. Used to hand the greedy plan to the solver."""
    where = {(cls.row, pos): k for k, cls in m.classes.items() for _, pos in cls.positions}
    types = m.scenario.catalog.by_id()
    counts: dict[tuple[str, str, str], int] = {}
    row_kw: dict[str, float] = {}
    homes: set[tuple[str, str]] = set()
    for r in racks:
        key = (where.get((r.row, r.position), ""), r.rack_type, r.cluster)
        if key not in m.n:
            return {}
        counts[key] = counts.get(key, 0) + 1
        row_kw[r.row] = row_kw.get(r.row, 0.0) + m.scenario.rack_power_kw(types[r.rack_type])
        pod = m.ix.rows[r.row].row.pod
        homes |= {(r.cluster, pod), (r.cluster, r.building)}
    start: dict = {var: counts.get(key, 0) for key, var in m.n.items()}
    start.update({p: row_kw.get(row, 0.0) for row, p in m.row_kw.items()})
    start.update({y: 1 if key in homes else 0 for key, y in m.y.items()})
    return start


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def to_plan(m: Model, result: SolveResult, build_time_s: float, solver: str) -> Plan:
    """Plan stage: domain plan from a solve result, with KPIs and utilisation from the verifier."""
    s = m.scenario
    racks = fill(m, result.counts) if result.objective is not None else []
    plan = Plan(
        planner_version=__version__,
        scenario_name=s.name,
        scenario_hash=scenario_hash(s),
        solver=solver,
        status=result.status,
        objective=s.objective,
        objective_value=_round(result.objective),
        bound=_round(result.bound),
        gap=_round(result.gap),
        build_time_s=round(build_time_s, 4),
        solve_time_s=round(result.solve_time_s, 4),
        racks=racks,
        notes=result.stages,
    )
    return finish_plan(plan, s)


def finish_plan(plan: Plan, scenario: Scenario) -> Plan:
    """Attach KPIs and utilisation (from the verifier); refuse a placement the verifier rejects."""
    rep = verify(plan, scenario)
    if plan.status.has_plan and plan.racks and not rep.ok:
        lines = "; ".join(str(v) for v in rep.violations[:5])
        raise SolverFailure(f"the {plan.solver} plan fails independent verification ({len(rep.violations)} violations): {lines}")
    return plan.model_copy(update={"kpis": compute_kpis(scenario, plan.racks), "utilisation": rep.usage})


def _better(maximise: bool, a: float, b: float) -> bool:
    """Whether objective ``a`` is strictly better than ``b``."""
    tol = 1e-9 * max(1.0, abs(b))
    return a > b + tol if maximise else a < b - tol


def _with_first_fit(m: Model, result: SolveResult, greedy: list[PlacedRack], progress: ProgressFn | None, elapsed: float) -> SolveResult:
    """Fall back on the first-fit plan when it meets every demand and the solver returned
    nothing, or something worse (status feasible; gap against the solver's bound if it has one)."""
    from planner.solve import evaluate

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
    bound = result.bound
    if bound is not None and ((maximise and bound < obj) or (not maximise and bound > obj)):
        bound = None
    gap = gap_of(obj, bound) if bound is not None else None
    why = "the solver found no plan in time" if result.objective is None else f"the solver's plan ({result.objective:,.6g}) is worse"
    note = f"{why}; returning the first-fit plan ({obj:,.6g}), which meets every demand"
    if progress:
        progress(Progress(note, elapsed))
    status = Status.optimal if gap is not None and gap <= m.scenario.solver.rel_gap + 1e-9 else Status.feasible
    return replace(result, status=status, objective=obj, bound=bound, gap=gap, counts=counts_from(m, values), stages=[*result.stages, note])


def plan_scenario(
    scenario: Scenario,
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    aggregate: bool = True,
    tie_breaks: bool = True,
    warm_start: bool = True,
) -> Plan:
    """Build, solve, fill and verify: the answer to a scenario.

    The time limit (default: the scenario's) bounds the whole run from this call.
    ``warm_start``: hand the first-fit plan to the solver as its first incumbent; when
    first-fit meets every demand, the answer is never worse than first-fit (if the solver
    finds nothing in time, the first-fit plan itself is returned with status feasible)."""
    t0 = time.perf_counter()
    if progress:
        progress(Progress("building model", 0.0))
    m = build(scenario, aggregate=aggregate)
    build_s = time.perf_counter() - t0
    if progress:
        size = m.size
        progress(Progress(f"built {size['variables']:,} variables ({size['integers']:,} integer), {size['constraints']:,} constraints", build_s))
    start = None
    greedy: list[PlacedRack] = []
    if warm_start:
        greedy = greedy_racks(scenario)
        start = start_from_racks(m, greedy)
        if progress:
            progress(Progress(f"first-fit start: {'handed to the solver' if start else 'none'}", time.perf_counter() - t0))
    result = solve(m, progress, time_limit_s, tie_breaks=tie_breaks, start=start, t0=t0)
    if warm_start and greedy_meets_demands(scenario, greedy):
        result = _with_first_fit(m, result, greedy, progress, time.perf_counter() - t0)
    if progress:
        progress(Progress("verifying plan", time.perf_counter() - t0))
    return to_plan(m, result, build_s, scenario.solver.name)
