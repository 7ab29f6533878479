"""Decomposition by building (§14): very large sites solved building by building, in parallel.

Stages (``planner plan --decompose building``):

1. **Proposals, in parallel.** For every building b and every group g of identical
   clusters, the building alone is solved with only g's clusters, each as
   "as many GPUs as fit, up to its own figure" (max_gpus, no site budgets):
   ``cap[g,b]`` GPUs, ``whole[g,b]`` clusters placed in full, and per GPU its
   IT kW, capex, TCO and PFLOPS (read from the verified proposal plan).
2. **Master (one small MILP).** Which building hosts which clusters, and how a
   cluster allowed to span buildings (scope site) is split:

       n[g,b] ∈ ℤ, 0 ≤ n[g,b] ≤ whole[g,b]           clusters of g hosted whole in b
       q[c,b] ≥ 0                                     GPUs of spanning cluster c in b
       Σ_g G[g,b]/cap[g,b] ≤ 1              ∀b      building capacity, shared pro rata
       Σ_b n[g,b] = |g| (exact, at_least), ≤ |g| (max);  Σ_b q[c,b] =, ≥, ≤ gpus[c]
       Σ kW/GPU[g,b]·G[g,b] ≤ it_power_kw,  Σ capex/GPU[g,b]·G[g,b] ≤ capex_usd
       objective Σ value/GPU[g,b]·G[g,b]   (value: 1, PFLOPS, capex or TCO per GPU)

   where G[g,b] is the GPUs of g in b (n·gpus, or q). "Pro rata" treats a
   building's capacity as divisible between groups: an estimate, checked next.
3. **Buildings, in parallel.** Each building solved exactly with the clusters
   the master gave it, spanning clusters at their share (rounded to whole
   racks), and its share of the site budgets (its master use plus slack in
   proportion). A building that cannot meet its demands has its capacity
   estimate for those groups cut by 10 % and the master runs again (at most
   :data:`ROUNDS` rounds; only buildings whose share changed re-solve).
4. **Whole.** The building plans are joined, the objective recomputed from the
   racks, and the plan verified against the whole scenario. The bound is the
   LP relaxation of the monolithic model; the plan reports its gap to it.

Every job carries its scenario as JSON (any executor: serial, process, dask).
Phased scenarios, retrofits and installed racks are refused: their coupling
across buildings is not modelled here.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import pulp

from planner.enums import Objective, Scope, Status
from planner.errors import InputError, SolverFailure
from planner.kpis import objective_value
from planner.loader import scenario_from_data, scenario_hash
from planner.model import build, cluster_groups
from planner.pipeline import finish_plan, plan_scenario
from planner.plan import Plan
from planner.schema import Demand, Scenario
from planner.solvers import SolveRequest, from_name
from planner.solving import evaluate, gap_of
from planner.sweep import run_jobs
from planner.variants import scenario_data
from planner.version import __version__

ROUNDS = 6
"""Most master ↔ building rounds before giving up."""
CUT = 0.9
"""Factor on a building's capacity estimate for a group it could not host."""
SPANNING = (Scope.site,)
"""Scopes a cluster may spread across buildings in."""


# ------------------------------------------------------------------ jobs (run on any worker)


def solve_part(part_id: str, data_json: str, time_limit_s: float) -> dict:
    """Solve one building sub-scenario; returns {"part", "plan" (JSON) | "error", "s"}."""
    t0 = time.perf_counter()
    try:
        plan = plan_scenario(scenario_from_data(json.loads(data_json)), time_limit_s=time_limit_s)
        return {"part": part_id, "plan": plan.model_dump(mode="json"), "s": time.perf_counter() - t0}
    except (InputError, SolverFailure) as e:
        return {"part": part_id, "error": str(e)[:1000], "s": time.perf_counter() - t0}


# ------------------------------------------------------------------ data


@dataclass
class Group:
    """Identical clusters (or one spanning cluster) the master places together."""
    id: str
    members: list[dict]
    demand: Demand
    gpus: int | None
    spanning: bool
    unit: int
    """GPUs per rack step of its rack types (gcd), the rounding unit of a spanning share."""


@dataclass
class Proposal:
    """What a building can host of one group alone."""
    cap: float = 0.0
    whole: int = 0
    kw: float = 0.0
    capex: float = 0.0
    tco: float = 0.0
    pflops: float = 0.0


@dataclass
class Decomposition:
    """A decomposed solve: the plan and where the time went."""

    plan: Plan
    stages: dict[str, float] = field(default_factory=dict)
    rounds: int = 0
    bound: float | None = None
    parts: int = 0


def _groups(scenario: Scenario, data: dict) -> list[Group]:
    """Groups of identical building-bound clusters; every spanning cluster alone."""
    types = scenario.catalog.by_id()
    by_id = {c["id"]: c for c in data["clusters"]}
    out = []
    for g in cluster_groups(scenario).values():
        sizes = [types[t].gpus for t in g.gpu_types if types[t].gpus]
        unit = reduce(math.gcd, sizes) if sizes else 1
        spanning = g.scope in SPANNING
        chunks = [[m] for m in g.members] if spanning else [g.members]
        for chunk in chunks:
            gid = chunk[0].id if spanning else g.id
            out.append(Group(gid, [by_id[m.id] for m in chunk], chunk[0].demand, chunk[0].gpus, spanning, unit))
    return out


def _sub(data: dict, building: dict, clusters: list[dict], name: str, budgets: dict | None = None,
         objective: str | None = None) -> dict:
    """Scenario data of one building with the given clusters (and budget share)."""
    out = {k: v for k, v in data.items() if k not in ("site", "clusters", "budgets", "name")}
    out["name"] = name
    out["site"] = {**data["site"], "buildings": [building]}
    out["clusters"] = clusters
    if budgets:
        out["budgets"] = budgets
    if objective:
        out["objective"] = objective
    return out


def _as_max(c: dict) -> dict:
    """A cluster as "as many as fit, up to its own figure"."""
    return {k: v for k, v in {**c, "demand": "max"}.items() if k != "gpus_by_phase"}


# ------------------------------------------------------------------ master


def _master(scenario: Scenario, groups: list[Group], buildings: list[str], props: dict[tuple[str, str], Proposal],
            time_limit_s: float) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int], dict[str, dict[str, float]]] | None:
    """The coordinating MILP (module docstring). Returns GPUs and whole clusters per (group,
    building) and the estimated use per building ({"kw", "capex"}), or None without a solution."""
    objective = Objective(scenario.objective)
    prob = pulp.LpProblem("master", pulp.LpMaximize if objective.maximise else pulp.LpMinimize)
    gpus: dict[tuple[str, str], pulp.LpAffineExpression] = {}
    counts: dict[tuple[str, str], pulp.LpVariable] = {}
    for gi, g in enumerate(groups):
        terms = []
        for bi, b in enumerate(buildings):
            p = props.get((g.id, b))
            if p is None or p.cap <= 0:
                continue
            if g.spanning:
                ub = p.cap if g.demand != Demand.max or g.gpus is None else min(p.cap, g.gpus)
                v = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=ub)
                gpus[g.id, b] = pulp.LpAffineExpression(v)
            else:
                ub = min(p.whole if g.demand != Demand.max else len(g.members), len(g.members))
                if ub <= 0:
                    continue
                n = prob.add_variable(f"n_{gi}_{bi}", lowBound=0, upBound=ub, cat=pulp.LpInteger)
                counts[g.id, b] = n
                if g.demand == Demand.max:
                    q = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=p.cap)
                    prob += q <= (g.gpus if g.gpus is not None else p.cap) * n, f"fill_{gi}_{bi}"
                    gpus[g.id, b] = pulp.LpAffineExpression(q)
                else:
                    gpus[g.id, b] = (g.gpus or 0) * n
                terms.append(n)
            if g.spanning:
                terms.append(gpus[g.id, b])
        total = pulp.lpSum(terms)
        want = len(g.members) if not g.spanning else g.gpus
        if want is None:
            continue
        if g.demand == Demand.max:
            prob += total <= want, f"demand_{gi}"
        elif g.demand == Demand.at_least and g.spanning:
            prob += total >= want, f"demand_{gi}"
        else:
            prob += total == want, f"demand_{gi}"
    for bi, b in enumerate(buildings):
        share = [gpus[g.id, b] * (1.0 / props[g.id, b].cap) for g in groups if (g.id, b) in gpus]
        if share:
            prob += pulp.lpSum(share) <= 1, f"capacity_{bi}"
    use = {what: pulp.lpSum(gpus[g.id, b] * getattr(props[g.id, b], what) for g in groups for b in buildings if (g.id, b) in gpus)
           for what in ("kw", "capex")}
    per = {"max_gpus": None, "max_pflops": "pflops", "min_capex": "capex", "min_tco": "tco"}[objective.value]
    obj = pulp.lpSum(e * (1.0 if per is None else getattr(props[k], per)) for k, e in gpus.items())
    # site budgets are elastic: the estimates may be off either way, and the fixed demands' true
    # cost (wave 1) recalibrates them; an overrun costs more than any placement gains
    top = max([1.0 if per is None else getattr(p, per) for p in props.values() if p.cap > 0] or [1.0])
    for w, cap in (("kw", scenario.budgets.it_power_kw), ("capex", scenario.budgets.capex_usd)):
        if cap is not None:
            least = min([getattr(p, w) for p in props.values() if p.cap > 0 and getattr(p, w) > 0] or [1.0])
            over = prob.add_variable(f"over_{w}", lowBound=0)
            prob += use[w] <= cap + over, f"budget_{w}"
            obj = obj - 1e3 * top / least * over if objective.maximise else obj + 1e3 * top / least * over
    prob += obj
    res = from_name("highs").solve(SolveRequest(prob, prob.objective, objective.maximise, time_limit_s, 1e-4))
    if res.values is None:
        return None
    values = res.values
    out = {k: max(0.0, evaluate(e, values)) for k, e in gpus.items()}
    whole = {k: int(round(values.get(v.name, 0.0))) for k, v in counts.items()}
    per_b = {b: {w: sum(out[g.id, b] * getattr(props[g.id, b], w) for g in groups if (g.id, b) in out) for w in ("kw", "capex")}
             for b in buildings}
    return out, whole, per_b


def _shares(groups: list[Group], buildings: list[str], alloc: dict[tuple[str, str], float],
            whole: dict[tuple[str, str], int]) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Clusters each building gets from the master, all of them and the fixed-demand ones
    (exact or at_least; spanning ones at their share, in whole rack steps)."""
    subs: dict[str, list[dict]] = {b: [] for b in buildings}
    fixed: dict[str, list[dict]] = {b: [] for b in buildings}
    next_id = {g.id: 0 for g in groups}
    for b in buildings:
        for g in groups:
            if g.spanning:
                continue
            n = whole.get((g.id, b), 0)
            got = g.members[next_id[g.id]:next_id[g.id] + n]
            next_id[g.id] += n
            subs[b] += got
            if g.demand != Demand.max:
                fixed[b] += got
    for g in groups:
        if g.spanning:
            c = g.members[0]
            for b, n in _round_share(g.gpus, {b: alloc.get((g.id, b), 0.0) for b in buildings}, g.unit, g.demand).items():
                share = {**c, "gpus": n} if g.demand != Demand.max or c.get("gpus") is not None else c
                subs[b].append(share)
                if g.demand != Demand.max:
                    fixed[b].append(share)
    return subs, fixed


def _as_exact(c: dict) -> dict:
    """A fixed-demand cluster at exactly its figure (what it must at least cost)."""
    return {k: v for k, v in {**c, "demand": "exact"}.items() if k != "gpus_by_phase"}


def _recalibrate(groups: list[Group], props: dict[tuple[str, str], Proposal], alloc: dict[tuple[str, str], float],
                 fixed: dict[str, list[dict]], floor: dict[str, dict[str, float]]) -> bool:
    """Raise the per-GPU kW and capex the master charges a building's fixed groups to what their
    least-cost plan spends (never lower); whether anything changed."""
    changed = False
    for b, got in fixed.items():
        if not got:
            continue
        keys = [(g.id, b) for g in groups if g.demand != Demand.max and alloc.get((g.id, b), 0) > 0]
        gpus = sum(alloc[k] for k in keys)
        if gpus <= 0:
            continue
        for w in ("kw", "capex"):
            est = sum(alloc[k] * getattr(props[k], w) for k in keys)
            if floor[b][w] > est * (1 + 1e-9) and est > 0:
                f = floor[b][w] / est
                for k in keys:
                    setattr(props[k], w, getattr(props[k], w) * f)
                changed = True
    return changed


# ------------------------------------------------------------------ the whole


def lp_bound(scenario: Scenario, time_limit_s: float) -> float | None:
    """Objective of the LP relaxation of the monolithic model, recomputed from the values the solver
    returns: a bound on any plan only when the LP was solved to optimality (a simplex stopped early
    gives a feasible point of the relaxation, no bound); none otherwise."""
    m = build(scenario)
    res = from_name("highs").solve(SolveRequest(m.prob, m.prob.objective, m.prob.sense == pulp.LpMaximize, time_limit_s, 0.0,
                                                relax_integrality=True))
    if res.values is None or not res.claims_optimal:
        return None
    return evaluate(m.prob.objective, res.values)


def _round_share(total: int | None, shares: dict[str, float], unit: int, demand: Demand) -> dict[str, int]:
    """Spanning cluster shares in whole rack steps; an exact total is kept exactly (largest remainder)."""
    floors = {b: int(math.floor(v / unit + 1e-6)) for b, v in shares.items()}
    if demand != Demand.max and total is not None:
        need = math.ceil(total / unit) - sum(floors.values())
        for b in sorted(shares, key=lambda b: -(shares[b] / unit - floors[b]))[:max(0, need)]:
            floors[b] += 1
    return {b: k * unit for b, k in floors.items() if k > 0}


def plan_decomposed(scenario: Scenario, executor: str = "serial", workers: int = 2, scheduler: str | None = None,
                    time_limit_s: float | None = None, progress: Callable[[str], None] | None = None) -> Decomposition:
    """Decomposition by building (module docstring): a verified plan of the whole scenario."""
    say = progress or (lambda _m: None)
    if scenario.phases or scenario.retrofits or scenario.existing:
        raise InputError("--decompose plans single-phase greenfield scenarios: this one has phases, retrofits or installed racks "
                         "(plan it whole)")
    if len(scenario.site.buildings) < 2:
        raise InputError("--decompose building needs at least two buildings (plan a one-building site whole)")
    t0 = time.perf_counter()
    limit = time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s
    stages: dict[str, float] = {}
    data = scenario_data(scenario)
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    buildings = list(bdata)
    groups = _groups(scenario, data)
    run = dict(executor=executor, workers=workers, scheduler=scheduler)

    # 1. proposals
    jobs = [(f"{g.id}@{b}", json.dumps(_sub(data, bdata[b], [_as_max(c) for c in g.members], f"{scenario.name}-{b}", objective="max_gpus")),
             limit) for g in groups for b in buildings]
    say(f"proposals: {len(jobs)} building × cluster-group solves on {executor}")
    props: dict[tuple[str, str], Proposal] = {}
    members = {g.id: g for g in groups}

    def took(r: dict) -> None:
        gid, b = r["part"].rsplit("@", 1)
        if "plan" not in r:
            props[gid, b] = Proposal()
            return
        p = Plan.model_validate(r["plan"])
        k = p.kpis
        if k is None or not p.status.has_plan or k.gpus <= 0:
            props[gid, b] = Proposal()
            return
        want = members[gid].gpus
        per_cluster: dict[str, int] = {}
        types = scenario.catalog.by_id()
        for rack in p.racks:
            per_cluster[rack.cluster] = per_cluster.get(rack.cluster, 0) + types[rack.rack_type].gpus
        whole = sum(1 for v in per_cluster.values() if want is not None and v >= want)
        props[gid, b] = Proposal(k.gpus, whole, k.racks_kw / k.gpus, k.capex_usd / k.gpus, k.tco_usd / k.gpus, k.pflops_bf16 / k.gpus)

    run_jobs(solve_part, jobs, took, **run)
    stages["proposals_s"] = time.perf_counter() - t0

    # 2-3. master and buildings, in rounds
    solved: dict[str, tuple[str, Plan | None, str]] = {}  # building → (sub-scenario JSON, plan, error)
    committed: dict[str, tuple[str, dict[str, float] | None]] = {}  # building → (JSON, use of its fixed demands)
    budgeted = scenario.budgets.it_power_kw is not None or scenario.budgets.capex_usd is not None
    rounds = 0
    stages["master_s"] = stages["fixed_s"] = stages["buildings_s"] = 0.0
    final: dict[str, Plan] = {}
    texts: dict[str, str] = {}  # building → the sub-scenario JSON of its job in this round
    while True:
        rounds += 1
        tm = time.perf_counter()
        master = _master(scenario, groups, buildings, props, min(limit, 120))
        stages["master_s"] += time.perf_counter() - tm
        if master is None:
            return _empty(scenario, Status.infeasible, [f"decomposition: the master problem has no solution (round {rounds}): the "
                                                       "buildings' proposals cannot meet the demands within the site budgets"], stages, rounds)
        alloc, whole, use = master
        subs, fixed = _shares(groups, buildings, alloc, whole)
        say(f"round {rounds}: master placed {sum(alloc.values()):,.0f} GPUs")
        bad: list[str] = []
        floor: dict[str, dict[str, float]] = {b: {"kw": 0.0, "capex": 0.0} for b in buildings}
        if budgeted:
            # wave 1: each building's fixed demands at least cost, no budget: what they must spend
            obj = "min_capex" if scenario.budgets.capex_usd is not None else "min_tco"
            jobs = []
            for b in buildings:
                text = json.dumps(_sub(data, bdata[b], [_as_exact(c) for c in fixed[b]], f"{scenario.name}-{b}-fixed", objective=obj))
                if fixed[b] and committed.get(b, ("", None))[0] != text:
                    jobs.append((b, text, limit))
                elif not fixed[b]:
                    committed.pop(b, None)
            texts.clear()
            texts.update({j[0]: j[1] for j in jobs})

            def spent(r: dict) -> None:
                p = Plan.model_validate(r["plan"]) if "plan" in r else None
                ok = p is not None and p.status.has_plan and p.kpis is not None
                committed[r["part"]] = (texts[r["part"]], {"kw": p.kpis.racks_kw, "capex": p.kpis.capex_usd} if ok else None)  # type: ignore[union-attr]

            tf = time.perf_counter()
            run_jobs(solve_part, jobs, spent, **run)
            stages["fixed_s"] += time.perf_counter() - tf
            bad = [b for b in buildings if fixed[b] and committed[b][1] is None]
            for b in buildings:
                if fixed[b] and committed[b][1] is not None:
                    floor[b] = committed[b][1]  # type: ignore[assignment]
            over = {w: sum(f[w] for f in floor.values()) - cap for w, cap in (("kw", scenario.budgets.it_power_kw),
                                                                                 ("capex", scenario.budgets.capex_usd)) if cap is not None}
            if not bad and any(v > 1e-6 for v in over.values()):
                # the master under-estimated what fixed demands cost: charge them what they do cost
                changed = _recalibrate(groups, props, alloc, fixed, floor)
                if not changed or rounds >= ROUNDS:
                    return _empty(scenario, Status.infeasible, ["decomposition: the fixed demands alone exceed the site budgets "
                                                               f"({', '.join(f'{w} by {v:,.1f}' for w, v in over.items() if v > 0)})"], stages, rounds)
                continue
        if not bad:
            jobs = []
            flex = {b: {w: max(0.0, use[b][w] - floor[b][w]) for w in ("kw", "capex")} for b in buildings}
            for b in buildings:
                if not subs[b]:
                    solved.pop(b, None)
                    continue
                budgets = {}
                for w, key in (("kw", "it_power_kw"), ("capex", "capex_usd")):
                    cap = getattr(scenario.budgets, key)
                    if cap is not None:
                        rest = max(0.0, cap - sum(f[w] for f in floor.values()))
                        total_flex = sum(f[w] for f in flex.values())
                        share = flex[b][w] / total_flex if total_flex > 0 else 1 / len(buildings)
                        budgets[key] = floor[b][w] + rest * share
                text = json.dumps(_sub(data, bdata[b], subs[b], f"{scenario.name}-{b}", budgets or None))
                if b not in solved or solved[b][0] != text:
                    jobs.append((b, text, limit))
            say(f"round {rounds}: {len(jobs)} building solve(s) on {executor}")
            texts.clear()
            texts.update({j[0]: j[1] for j in jobs})

            def done(r: dict) -> None:
                p = Plan.model_validate(r["plan"]) if "plan" in r else None
                solved[r["part"]] = (texts[r["part"]], p, r.get("error", ""))

            tb = time.perf_counter()
            run_jobs(solve_part, jobs, done, **run)
            stages["buildings_s"] += time.perf_counter() - tb
            bad = [b for b, (_, p, _) in solved.items() if p is None or not p.status.has_plan]
            if not bad:
                final = {b: p for b, (_, p, _) in solved.items() if p is not None}
                break
        if rounds >= ROUNDS:
            return _empty(scenario, Status.no_solution, [f"decomposition: after {rounds} rounds buildings {', '.join(bad[:10])} still "
                                                         "cannot meet their share"], stages, rounds)
        for b in bad:
            for g in groups:
                if (g.id, b) in props and alloc.get((g.id, b), 0) > 0:
                    p = props[g.id, b]
                    cut = p.cap * CUT if g.spanning or g.demand == Demand.max else p.cap
                    props[g.id, b] = Proposal(cut, max(0, p.whole - (0 if g.spanning else 1)), p.kw, p.capex, p.tco, p.pflops)

    # 4. the whole
    tw = time.perf_counter()
    racks = sorted((r for p in final.values() for r in p.racks), key=lambda r: (r.building, r.hall, r.row, r.position))
    value = objective_value(scenario, racks)
    bound = lp_bound(scenario, limit)
    stages["bound_s"] = time.perf_counter() - tw
    bound = None if bound is None else round(bound, 6)
    maximise = Objective(scenario.objective).maximise
    if bound is not None and ((maximise and bound < value - 1e-6 * max(1.0, abs(value))) or (not maximise and bound > value + 1e-6 * max(1.0, abs(value)))):
        bound = None  # on the wrong side of a verified plan: not a bound
    gap = None if bound is None else gap_of(value, bound)
    status = Status.optimal if gap is not None and gap <= scenario.solver.rel_gap else Status.feasible
    plan = Plan(
        planner_version=__version__, scenario_name=scenario.name, scenario_hash=scenario_hash(scenario), solver=scenario.solver.name, solver_settings=scenario.solver,
        status=status, optimality="proven" if status == Status.optimal else None, mode="joint", objective=scenario.objective,
        objective_value=round(value, 6),
        bound=bound, gap=gap,
        build_time_s=0.0, solve_time_s=round(time.perf_counter() - t0, 4), racks=racks,
        notes=[f"decomposed by building: {len(final)} building plans joined after {rounds} master round(s); "
               + ("gap measured against the LP relaxation of the whole" if bound is not None
                  else "no bound: the LP relaxation of the whole was not solved to optimality in time")],
    )
    tv = time.perf_counter()
    plan = finish_plan(plan, scenario)
    stages["verify_s"] = time.perf_counter() - tv
    stages["total_s"] = time.perf_counter() - t0
    return Decomposition(plan, stages, rounds, bound, len(final))


def _empty(scenario: Scenario, status: Status, notes: list[str], stages: dict[str, float], rounds: int) -> Decomposition:

    plan = Plan(planner_version=__version__, scenario_name=scenario.name, scenario_hash=scenario_hash(scenario), solver=scenario.solver.name, solver_settings=scenario.solver,
                status=status, objective=scenario.objective, notes=notes)
    return Decomposition(finish_plan(plan, scenario), stages, rounds)


def describe(d: Decomposition) -> dict[str, Any]:
    """Stage times and counts of a decomposed solve, for the CLI and benchmark."""
    return {**{k: round(v, 3) for k, v in d.stages.items()}, "rounds": d.rounds, "buildings": d.parts, "bound": d.bound}
