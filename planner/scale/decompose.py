"""Decomposition by building (§14): very large sites solved building by building, in parallel,
never wrong.

Stages (``planner plan --decompose building``), all within one deadline:

1. **Proposals, counted.** For every building b and every group g of identical clusters, from
   the site alone (:func:`proposals`, no solve): ``cap[g,b]`` GPUs of room for g's rack types
   (per pod: positions that type fits × its GPUs, within the pod's rack limit and GPU ports),
   ``whole[g,b]`` clusters that could stand there whole (per pod for one-pod scope), ``most[g,b]``
   the most one cluster can take (within the power and heat the pods hold of its rack types,
   :mod:`planner.model.room`), and per GPU its marginal IT kW, capex, TCO, PFLOPS and its use of
   power and heat.
   Then first-fit's plan of the whole site (a job its first pod cannot hold whole moved to the
   next), verified with its figures (:func:`first_fit_fallback`, the budget's ``first_fit`` share):
   when it meets every demand it is the plan that stands if nothing better is found in time, and
   the plan any later answer must beat.
2. **Master (one small MILP).** Which building hosts which clusters, and how a
   cluster allowed to span buildings (scope site) is split:

       n[g,b] ∈ ℤ, 0 ≤ n[g,b] ≤ whole[g,b]           clusters of g hosted whole in b
       q[c,b] ≥ 0                                     GPUs of spanning cluster c in b
       gpus·n ≤ q[g,b] ≤ most·n (at-least),  q ≤ min(gpus, most)·n (as many as fit)
       Σ_g G[g,b]/cap[g,b] ≤ 1              ∀b      building capacity, shared pro rata
       Σ_g u_r[g] · G[g,b] ≤ R_r[b]          ∀b, r   power, air and liquid heat (u_r: per GPU of
                                                     g's best rack type; R_r: the building's room,
                                                     planner.model.room)
       Σ_{g one-pod, d_g > ½ room} n[g,b] ≤ pods   ∀b  at most one big one-pod cluster a pod
       Σ_b n[g,b] = |g| (exact, at_least), ≤ |g| (max);  Σ_b q[c,b] =, ≥, ≤ gpus[c]
       Σ kW/GPU[g,b]·G[g,b] ≤ it_power_kw,  Σ capex/GPU[g,b]·G[g,b] ≤ capex_usd
       objective Σ value/GPU[g,b]·G[g,b]   (value: 1, PFLOPS, capex or TCO per GPU)

   where G[g,b] is the GPUs of g in b (n·gpus, or q). "Pro rata" treats a building's
   capacity as divisible between groups: an estimate, checked next. Clusters of "as many as
   fit" the master left out are offered to the building with the most room left.
3. **Buildings, in parallel** (serial, process or Dask). Each building solved exactly with the
   clusters the master gave it, spanning clusters at their share (rounded to whole racks), and
   its share of the site budgets. A building that cannot meet its demands is diagnosed by
   first-fit (largest demands first) on its share: a share first-fit places stands on that plan;
   otherwise (also when its solve found no plan in its time: a share first-fit cannot place is
   not solved again) only the clusters first-fit could not place there give way (one fewer of their group
   may stand there; spanning and as-many-as-fit shares cut by 10 %; with none named, every group
   there), the buildings whose share solved keep it (n[g,b] ≥ its clusters there), and the master
   runs again (at most :data:`ROUNDS` rounds; only buildings whose share changed re-solve).
4. **Whole.** The building plans are joined, the objective recomputed from the racks, and the
   plan verified against the whole scenario. The bound is the tightest of the merged
   relaxation (:func:`merged`: clusters alike in rack types as one, capped by their figures or
   their scope's room; seconds at a million GPUs), the capacity bound
   (:func:`planner.rules.bounds.capacity_bound`: one pass) and, only when those do not prove the
   gap, the packing MILP (:mod:`planner.scale.packing`) and the LP relaxation of the monolithic
   model (or the polish's MIP bound); the plan reports its gap to it. Before those, a plan the
   merged bound does not prove gets the most each building holds proved
   (:mod:`planner.scale.building_most`) and pairs of buildings solved again as one
   (:mod:`planner.scale.pairs`, picked by what the most leaves free), each pair's plan kept only
   when it beats the two it replaces; the most are rows of the packing MILP.

Phases, retrofits and installed racks decompose too: each building plans its own clusters over
every phase (room counted for a cluster's largest figure), the retrofits that change something in
it and its installed racks (a cluster with racks installed stays in their building); the plans'
racks and retrofits are joined. With site budgets or clusters spanning buildings they couple the
buildings over time, and the whole model plans them.

Designed fabrics decompose in a phased region: each building plans its share of a cluster with
its own tree, and a share of a job the master spreads over buildings with its region links up to
the tier (``region_share_km``); the tier's switches stand after the join, in the tier's building
(:mod:`planner.plan.regionfill`), which then holds network rows only.

Never wrong: when the master has no solution, the repairs run out, or the buildings are coupled
over time (above), the whole model answers in the time left, starting from first-fit's plan of the
whole, and the plan's first note says why. Only a proof says infeasible: before anything is built
a firm demand larger than the room of its scope (:mod:`planner.model.room_proof`), before a
hand-over the packing MILP without a solution (:mod:`planner.scale.packing`), or the whole model.
Never no plan where first-fit's plan of the whole meets every demand: it stands when the whole
model finds nothing in time or would not fit in memory, and wherever it beats the joined plan. A
joined plan further than the requested gap from its bound is set against the whole model's plan
in the time left (``polish``) and the better kept. Every job carries its scenario as JSON (any executor).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

from planner.batch.executors import counting, run_jobs
from planner.clock import Deadline
from planner.errors import InputError
from planner.input.site_index import index_site
from planner.input.variants import scenario_data
from planner.plan import Plan
from planner.plan.pipeline import infeasible_by_room
from planner.scale.budget import STAGES, TAIL_PASSES, Budget
from planner.scale.joined import (  # noqa: F401 - describe, solve_part: re-exported
    Decomposition,
    _join,
    _timed,
    _whole,
    describe,
    first_fit_fallback,
    first_fit_repair,
    solve_again,
    solve_part,
)
from planner.scale.proposals import (
    Group,
    building_data,
    grid_coupling,
    groups_of,
    proposals,
)
from planner.scale.region_master import master as region_master_plan
from planner.scale.region_master import unsupported as region_unsupported
from planner.scale.rounds import _Rounds
from planner.schema import Scenario


def plan_decomposed(
    scenario: Scenario,
    executor: str = "serial",
    workers: int = 2,
    scheduler: str | None = None,
    time_limit_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    polish: bool = True,
    deadline: Deadline | None = None,
) -> Decomposition:
    """Decomposition by building (module docstring): a verified plan of the whole scenario, never
    wrong: whatever the decomposition cannot settle (its master or a building without a solution
    after its repairs, phases, retrofits, installed racks) goes to the whole model, which alone may
    say infeasible; with ``polish``, a joined plan further than the requested gap from the bound
    is set against the whole model's plan in the time left, and the better one returned.
    ``deadline`` (default: the time limit from this call) bounds the whole run."""
    say = progress or (lambda _m: None)
    if len(scenario.site.buildings) < 2:
        raise InputError("--decompose building needs at least two buildings (plan a one-building site whole)")
    if deadline is None:
        deadline = Deadline(time_limit_s if time_limit_s is not None else scenario.solver.time_limit_s)
    t0 = deadline.t0
    stages: dict[str, float] = {}
    over_time = bool(scenario.phases or scenario.retrofits or scenario.existing)
    budgeted = scenario.budgets.it_power_kw is not None or scenario.budgets.capex_usd is not None
    data = scenario_data(scenario)
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    buildings = list(bdata)
    groups = groups_of(scenario, data)
    run = dict(executor=executor, workers=workers, scheduler=scheduler)
    budget = Budget(deadline, executor, workers)
    early = _before_the_master(scenario, budget, len(buildings), stages, say)
    if early is not None:
        return early
    if scenario.power_arrival or (over_time and any(g.spanning for g in groups)):
        return _plan_region(scenario, data, groups, budget, stages, run, say, polish)
    if over_time and (budgeted or any(g.spanning for g in groups)):
        return _whole(
            scenario,
            deadline,
            stages,
            0,
            "site budgets or clusters spanning buildings couple the buildings across "
            "phases, retrofits or installed racks",
            say,
        )

    # 1. proposals, counted from the site; a cluster with racks installed stays in their building
    size: dict = {}
    props = proposals(scenario, groups, buildings, size)
    budget.whole_counts = size["counts"]
    home = {r.cluster: r.building for r in scenario.existing if r.cluster}
    for g in groups:
        pinned = {home[c["id"]] for c in g.members if c["id"] in home}
        if pinned:
            for b in buildings:
                if b not in pinned:
                    props.pop((g.id, b), None)
    stages["proposals_s"] = budget.pass_s = time.perf_counter() - t0
    say(f"proposals: {len(groups)} cluster groups × {len(buildings)} buildings counted from the site")
    first_fit_fallback(scenario, budget, stages, say)
    # 2-3. master and buildings, in rounds
    return _Rounds(scenario, data, groups, props, home, budget, stages, run, say, budgeted).run(polish)


def _before_the_master(scenario: Scenario, budget: Budget, n: int, stages: dict, say) -> Decomposition | None:
    """The answer given before any proposal: infeasible where a firm demand exceeds the room of its
    scope (proved from the site, no model), or the whole model where the time is too short for the
    decomposition or rack supply or the grid couple the buildings; None to decompose."""
    deadline = budget.deadline
    short = infeasible_by_room(scenario, deadline.elapsed())
    if short is not None:
        say(short.notes[0])  # the decomposition's reports are words
        stages["room_proof_s"] = stages["total_s"] = deadline.elapsed()
        return Decomposition(_timed(short, stages), stages, 0, None, 0)
    why = (
        _too_short(budget, n)
        or ("rack supply per phase (supply) is shared by every building" if scenario.supply else None)
        or grid_coupling(scenario)
    )
    return _whole(scenario, deadline, stages, 0, why, say) if why else None


def _too_short(budget: Budget, jobs: int, within: Deadline | None = None) -> str | None:
    """Why the time left (of ``within``, default the run's) is too short for ``jobs`` building
    solves in their waves (each under the buildings stage's least, :mod:`planner.scale.budget`), or
    None."""
    if budget.starts("buildings", jobs, within):
        return None
    least = STAGES["buildings"].least_s
    return (
        f"{(within or budget.deadline).left():.1f} s left give {budget.waves(jobs)} wave(s) of building "
        f"solves {budget.share('buildings', jobs, within):.2f} s each (under {least:g} s)"
    )


def _solves_deadline(budget: Budget, jobs: int) -> tuple[Deadline, str | None]:
    """The deadline the building solves work to: the run's, less what joining, repairing and
    verifying their plans will take (the budget's tail, measured in this run); and why the
    decomposition should hand over instead, when that leaves each solve under its least."""
    solves = budget.solves()
    if not _too_short(budget, jobs, solves):
        return solves, None
    return solves, (
        f"joining and verifying the building plans needs ~{budget.tail_s():.0f} s ({TAIL_PASSES} passes "
        f"over the site, each as long as counting the proposals took), which leaves the building solves "
        f"under {STAGES['buildings'].least_s:g} s each"
    )


def _plan_region(
    scenario: Scenario,
    data: dict,
    groups: list[Group],
    budget: Budget,
    stages: dict[str, float],
    run: dict,
    say: Callable[[str], None],
    polish: bool,
) -> Decomposition:
    """A phased region (power arriving over time, clusters spanning buildings across phases): the
    region master (:mod:`planner.scale.region_master`) shares out each cluster's GPUs per phase and the
    power arrived, each building plans alone with its shares (its share of the arrival as its own
    ``power_arrival``), and the plans are joined (:func:`_join`). Whatever the master cannot split
    goes to the whole model."""
    deadline = budget.deadline
    why = region_unsupported(scenario)
    if why is not None:
        return _whole(scenario, deadline, stages, 0, why, say)
    t0 = time.perf_counter()
    buildings = [b.id for b in scenario.site.buildings]
    size: dict = {}
    clusters, cap = region_inputs(scenario, groups, buildings, size)
    stages["proposals_s"] = budget.pass_s = time.perf_counter() - t0
    budget.whole_counts = size["counts"]
    # the building solves cannot run in what their tail leaves: the hand-over's first-fit of the whole
    # gets all the time left (a fallback stopped at its share first, then begun again, ran 1.71× the
    # limit at 5 GW on a loaded machine: benchmarks/LIMITS-600-5gw.md)
    solves, why = _solves_deadline(budget, len(buildings))
    if not why:
        first_fit_fallback(scenario, budget, stages, say)
        solves, why = _solves_deadline(budget, len(buildings))
    if why:
        return _whole(scenario, deadline, stages, 0, why, say, budget)
    tm = time.perf_counter()
    limit = budget.seconds("master")
    shares = region_master_plan(scenario, index_site(scenario.site), clusters, buildings, cap, limit)
    stages["master_s"] = time.perf_counter() - tm
    if shares is None:
        why = (
            "the region master has no solution (the buildings' estimated room and the power arrived cannot "
            "be shared out)"
        )
        return _whole(scenario, deadline, stages, 1, why, say, budget)
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    spans = _spanning(scenario, shares)
    jobs = [
        (b, json.dumps(_region_share(scenario, data, bdata[b], shares[b], spans)))
        for b in buildings
        if shares[b].gpus
    ]
    shared = sum(sum(v[-1] for v in shares[b].gpus.values()) for b in buildings)
    say(f"region master: {shared:,} GPUs shared over {len(jobs)} buildings in {stages['master_s']:.1f} s")
    tb = time.perf_counter()
    solved = _solve_buildings(scenario, jobs, budget, solves, run, say)
    stages["buildings_s"] = time.perf_counter() - tb
    bad = [b for b, p in solved.items() if p is None or not p.status.has_plan]
    empty = ""
    if bad:
        why = f"buildings {', '.join(bad[:10])} have no plan for their share"
        kept = {b: p for b, p in solved.items() if p is not None and p.status.has_plan}
        repaired = first_fit_repair(scenario, kept, 1, deadline, stages, say, why, budget)
        if repaired is not None:
            return repaired
        if not kept:
            return _whole(scenario, deadline, stages, 1, why, say, budget)
        # every cluster here wants as many as fit (region_unsupported): the others' plans join
        empty = f"{why} in time: they stand empty, the other {len(kept)} buildings' plans are joined"
        say(f"decomposition: {empty}")
        solved = kept
    say(f"buildings planned in {stages['buildings_s']:.1f} s")
    final = {b: p for b, p in solved.items() if p is not None}
    final = _respan(scenario, data, shares, spans, final, budget, solves, run, say)
    many = budget.many_waves(len(jobs))
    d = _join(
        scenario, final, 1, deadline, stages, say, polish and not many, whole_lp=not many, budget=budget
    )
    if empty and d.fell_back is None:
        d.plan = d.plan.model_copy(update={"notes": [*d.plan.notes, f"decomposed: {empty}"]})
    return d


def region_inputs(
    scenario: Scenario, groups: list[Group], buildings: list[str], size: dict | None = None
) -> tuple[list, dict]:
    """The region master's inputs, counted from the site: every cluster as (ID, scope, rack types,
    unit) and its room per building, GPUs (:func:`proposals`, which counts ``size`` too)."""
    props = proposals(scenario, groups, buildings, size)
    clusters, cap = [], {}
    for g in groups:
        for c in g.members:
            clusters.append((c["id"], g.scope, g.types, g.unit))
            cap.update({(c["id"], b): props[g.id, b].cap for b in buildings if (g.id, b) in props})
    return clusters, cap


def _solve_buildings(
    scenario: Scenario,
    jobs: list,
    budget: Budget,
    solves: Deadline,
    run: dict,
    say: Callable[[str], None],
) -> dict[str, Plan | None]:
    """Each building's plan for its share (``jobs``: building, scenario JSON) on the executor, each
    in the buildings stage's share of what the solves have (:mod:`planner.scale.budget`), or with
    tens of buildings all to one end, the smaller shares first; the buildings without a proven
    answer are then solved once more (:func:`planner.scale.joined.solve_again`)."""
    each = budget.seconds("buildings", len(jobs), solves)
    shared = budget.many_waves(len(jobs))
    solved: dict[str, Plan | None] = {}

    def done(r: dict) -> None:
        solved[r["part"]] = Plan.model_validate(r["plan"]) if "plan" in r else None

    say(
        f"building solves: {len(jobs)} on {run['executor']}, "
        + (
            f"{solves.left():.0f} s shared, the smaller shares first"
            if shared
            else f"{each:.0f} s each at most"
        )
    )
    if shared:  # one end the jobs read when they start: the smaller shares first, their time left
        # to the larger ones after them (benchmarks/REGION-5GW-BUILDINGS.md: a few need a minute); no
        # least-cable tie-breaks, which would take half of each job's time whatever it needs
        order = sorted(jobs, key=lambda j: (_share_size(j[1]), j[0]))
        until = budget.until(solves)
        least = STAGES["buildings"].least_s
        todo = [
            (b, text, least, until, budget.waves(len(order) - i), False) for i, (b, text) in enumerate(order)
        ]
        run_jobs(solve_part, todo, counting(done, len(todo), say, "building solves"), **run)
    else:
        jobs_each = [(b, text, each) for b, text in jobs]
        run_jobs(solve_part, jobs_each, counting(done, len(jobs_each), say, "building solves"), **run)
    solve_again(scenario, dict(jobs), solved, budget, solves, run, say, tie_breaks=not shared)
    return solved


def _share_size(text: str) -> int:
    """GPU-phases a building's share asks for (its clusters' GPUs summed over the phases)."""
    data = json.loads(text)
    return sum(sum((c.get("gpus_by_phase") or {}).values()) + (c.get("gpus") or 0) for c in data["clusters"])


def _respan(
    scenario: Scenario,
    data: dict,
    shares: dict,
    spans: set[str],
    final: dict[str, Plan],
    budget: Budget,
    solves: Deadline,
    run: dict,
    say: Callable[[str], None],
) -> dict[str, Plan]:
    """A job planned as spanning (its shares sent region links up) that stands in one building after
    all: that building plans again with it as its own (no region links, whose switches the joined
    fabric would not need); twice at most (a plan that still differs fails verification whole)."""
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    for _ in range(2):
        where: dict[str, set[str]] = {}
        for b, p in final.items():
            for r in p.racks:
                where.setdefault(r.cluster, set()).add(b)
        lone = {cid for cid in spans if len(where.get(cid, ())) < 2}
        if not lone or solves.left() <= 0:
            return final
        spans = spans - lone
        again = sorted({b for cid in lone for b in where.get(cid, ())})
        if not again:
            return final
        say(
            f"{', '.join(sorted(lone))} stand(s) in one building: {', '.join(again)} planned again "
            "without region links"
        )
        each = budget.seconds("buildings", len(again), solves)
        jobs = [
            (b, json.dumps(_region_share(scenario, data, bdata[b], shares[b], spans)), each) for b in again
        ]

        def done(r: dict) -> None:
            if "plan" in r:
                plan = Plan.model_validate(r["plan"])
                if plan.status.has_plan:
                    final[r["part"]] = plan

        run_jobs(solve_part, jobs, done, **run)
    return final


def _spanning(scenario: Scenario, shares: dict) -> set[str]:
    """Clusters on a designed fabric the master spreads over two buildings or more by the horizon."""
    if scenario.region_tier is None:
        return set()
    designed = {c.id for c in scenario.clusters if c.fabrics}
    count: dict[str, int] = {}
    for sh in shares.values():
        for cid, steps in sh.gpus.items():
            if cid in designed and steps[-1] > 0:
                count[cid] = count.get(cid, 0) + 1
    return {cid for cid, n in count.items() if n > 1}


def _region_share(scenario: Scenario, data: dict, bdata: dict, share, spans: set[str] = frozenset()) -> dict:
    """A building's scenario data for its share: its clusters' GPUs per phase and its part of the
    power arriving as its own ``power_arrival`` (MW, rounded down to the watt). A share of a job
    the master spreads over buildings (``spans``) is planned as spanning: region links up over the
    building's fibre to the tier (``region_share_km``), the tier's switches left to the region
    (:mod:`planner.plan.regionfill`); the tier then stands for this building alone."""
    phases = [p.id for p in scenario.phases]
    by_id = {c["id"]: c for c in data["clusters"]}
    tier = scenario.region_tier
    at = {b.id: b.location_km for b in scenario.site.buildings}
    mine = []
    for cid, steps in share.gpus.items():
        c = {k: v for k, v in by_id[cid].items() if k not in ("gpus", "gpus_by_phase")}
        c.update({"gpus_by_phase": dict(zip(phases, steps, strict=True))} if phases else {"gpus": steps[0]})
        if cid in spans and tier is not None:
            here, hub = at[bdata["id"]], at[tier.building]
            c["region_share_km"] = round(math.hypot(here[0] - hub[0], here[1] - hub[1]), 9)
        mine.append(c)
    sub = building_data(data, bdata, mine, f"{scenario.name}-{bdata['id']}")
    sub.pop("region_tier", None)
    if tier is not None and any("region_share_km" in c for c in mine):
        rt = data["region_tier"]
        mbps = {k: v for k, v in (rt.get("building_tbps") or {}).items() if k == bdata["id"]}
        sub["region_tier"] = {**rt, "building": bdata["id"], "building_tbps": mbps}
    if scenario.power_arrival:
        cumulative = [
            math.floor(round(kw * 1000, 6)) / 1e6 for kw in share.power_kw
        ]  # to the watt, no float noise
        sub["power_arrival"] = [
            {
                **({"phase": phases[i]} if i else {}),
                "interconnect_mw": round(mw - (cumulative[i - 1] if i else 0.0), 6),
                "source": "the region master's share",
            }
            for i, mw in enumerate(cumulative)
        ]
    return sub
