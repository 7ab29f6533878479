"""Decomposition by building (§14): very large sites solved building by building, in parallel,
never wrong.

Stages (``planner plan --decompose building``), all within one deadline:

1. **Proposals, counted.** For every building b and every group g of identical clusters, from
   the site alone (:func:`proposals`, no solve): ``cap[g,b]`` GPUs of room for g's rack types
   (per pod: positions that type fits × its GPUs, within the pod's rack limit and GPU ports),
   ``whole[g,b]`` clusters that could stand there whole (per pod for one-pod scope), ``most[g,b]``
   the most one cluster can take, and per GPU its marginal IT kW, capex, TCO and PFLOPS.
2. **Master (one small MILP).** Which building hosts which clusters, and how a
   cluster allowed to span buildings (scope site) is split:

       n[g,b] ∈ ℤ, 0 ≤ n[g,b] ≤ whole[g,b]           clusters of g hosted whole in b
       q[c,b] ≥ 0                                     GPUs of spanning cluster c in b
       gpus·n ≤ q[g,b] ≤ most·n (at-least),  q ≤ min(gpus, most)·n (as many as fit)
       Σ_g G[g,b]/cap[g,b] ≤ 1              ∀b      building capacity, shared pro rata
       Σ_b n[g,b] = |g| (exact, at_least), ≤ |g| (max);  Σ_b q[c,b] =, ≥, ≤ gpus[c]
       Σ kW/GPU[g,b]·G[g,b] ≤ it_power_kw,  Σ capex/GPU[g,b]·G[g,b] ≤ capex_usd
       objective Σ value/GPU[g,b]·G[g,b]   (value: 1, PFLOPS, capex or TCO per GPU)

   where G[g,b] is the GPUs of g in b (n·gpus, or q). "Pro rata" treats a building's
   capacity as divisible between groups: an estimate, checked next. Clusters of "as many as
   fit" the master left out are offered to the building with the most room left.
3. **Buildings, in parallel** (serial, process or Dask). Each building solved exactly with the
   clusters the master gave it, spanning clusters at their share (rounded to whole racks), and
   its share of the site budgets. A building that cannot meet its demands is repaired: one
   fewer of each of its groups may stand there (spanning shares cut by 10 %) and the master
   runs again (at most :data:`ROUNDS` rounds; only buildings whose share changed re-solve).
4. **Whole.** The building plans are joined, the objective recomputed from the racks, and the
   plan verified against the whole scenario. The bound is the tightest of the merged
   relaxation (:func:`merged`: clusters alike in rack types as one, capped by their figures or
   their scope's room; seconds at a million GPUs) and, only when that does not prove the gap,
   the LP relaxation of the monolithic model; the plan reports its gap to it.

Phases, retrofits and installed racks decompose too: each building plans its own clusters over
every phase (room counted for a cluster's largest figure), the retrofits that change something in
it and its installed racks (a cluster with racks installed stays in their building); the plans'
racks and retrofits are joined. With site budgets or clusters spanning buildings they couple the
buildings over time, and the whole model plans them.

Never wrong: when the master has no solution, the repairs run out, or the buildings are coupled
over time (above), the whole model answers in the time left and the plan's first note says why; only it may
say
infeasible. A joined plan further than the requested gap from its bound is set against the
whole model's plan in the time left (``polish``) and the better kept. Every job carries its
scenario as JSON (any executor).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulp

from planner.batch.executors import run_jobs
from planner.clock import Deadline
from planner.enums import Objective, Status
from planner.errors import InputError, SolverFailure
from planner.input.loader import scenario_from_data
from planner.input.site_index import index_site
from planner.input.variants import scenario_data
from planner.plan import Plan
from planner.plan.kpis import objective_value
from planner.plan.pipeline import finish_plan, plan_scenario
from planner.scale.bounds import lp_bound, merged
from planner.scale.proposals import (
    Group,
    Proposal,
    as_exact,
    building_data,
    building_shares,
    groups_of,
    offer_left,
    proposals,
    recalibrate,
)
from planner.scale.region_master import master as region_master_plan
from planner.scale.region_master import unsupported as region_unsupported
from planner.schema import Demand, Scenario
from planner.schema.hashing import scenario_hash
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import evaluate, gap_of
from planner.version import __version__

POLISH_S = 5.0
"""Least time left for the whole model to be set against a joined plan short of its gap, s."""
ROUNDS = 6
"""Most master ↔ building rounds before giving up."""
CUT = 0.9
"""Factor on a building's capacity estimate for a group it could not host."""


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
class Decomposition:
    """A decomposed solve: the plan and where the time went."""

    plan: Plan
    stages: dict[str, float] = field(default_factory=dict)
    rounds: int = 0
    bound: float | None = None
    parts: int = 0
    fell_back: str | None = None
    """Why the whole model answered instead, if it did."""


# ------------------------------------------------------------------ master


def _master(
    scenario: Scenario,
    groups: list[Group],
    buildings: list[str],
    props: dict[tuple[str, str], Proposal],
    time_limit_s: float,
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int], dict[str, dict[str, float]]] | None:
    """The coordinating MILP (module docstring). Returns GPUs and whole clusters per (group,
    building) and the estimated use per building ({"kw", "capex"}), or None without a solution."""
    objective = Objective(scenario.objective)
    prob = pulp.LpProblem("master", pulp.LpMaximize if objective.maximise else pulp.LpMinimize)
    gpus: dict[tuple[str, str], pulp.LpAffineExpression] = {}
    counts: dict[tuple[str, str], pulp.LpVariable] = {}
    for gi, g in enumerate(groups):
        _master_group(prob, gi, g, buildings, props, gpus, counts)
    for bi, b in enumerate(buildings):
        share = [gpus[g.id, b] * (1.0 / props[g.id, b].cap) for g in groups if (g.id, b) in gpus]
        if share:
            prob += pulp.lpSum(share) <= 1, f"capacity_{bi}"
    use = {
        what: pulp.lpSum(
            gpus[g.id, b] * getattr(props[g.id, b], what)
            for g in groups
            for b in buildings
            if (g.id, b) in gpus
        )
        for what in ("kw", "capex")
    }
    prob += _master_objective(prob, scenario, objective, props, gpus, use)
    res = from_name("highs").solve(SolveRequest(prob, prob.objective, objective.maximise, time_limit_s, 1e-4))
    if res.values is None:
        return None
    values = res.values
    out = {k: max(0.0, evaluate(e, values)) for k, e in gpus.items()}
    whole = {k: int(round(values.get(v.name, 0.0))) for k, v in counts.items()}
    per_b = {
        b: {
            w: sum(out[g.id, b] * getattr(props[g.id, b], w) for g in groups if (g.id, b) in out)
            for w in ("kw", "capex")
        }
        for b in buildings
    }
    return out, whole, per_b


def _master_group(
    prob: pulp.LpProblem, gi: int, g: Group, buildings: list[str], props, gpus: dict, counts: dict
) -> None:
    """One group's variables and demand row: GPUs per building for a spanning group; else whole
    clusters per building n (their GPUs d·n, or between them for at-least and as-many-as-fit)."""
    terms = []
    for bi, b in enumerate(buildings):
        p = props.get((g.id, b))
        if p is None or p.cap <= 0:
            continue
        if g.spanning:
            ub = p.cap if g.demand != Demand.max or g.gpus is None else min(p.cap, g.gpus)
            v = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=ub)
            gpus[g.id, b] = pulp.LpAffineExpression(v)
            terms.append(gpus[g.id, b])
            continue
        ub = min(p.whole if g.demand != Demand.max else len(g.members), len(g.members))
        if ub <= 0:
            continue
        n = prob.add_variable(f"n_{gi}_{bi}", lowBound=0, upBound=ub, cat=pulp.LpInteger)
        counts[g.id, b] = n
        most = p.most or p.cap
        if g.demand == Demand.max:
            q = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=p.cap)
            prob += q <= (min(g.gpus, most) if g.gpus is not None else most) * n, f"fill_{gi}_{bi}"
            gpus[g.id, b] = pulp.LpAffineExpression(q)
        elif g.demand == Demand.at_least and most > (g.gpus or 0):
            q = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=p.cap)
            prob += q >= (g.gpus or 0) * n, f"least_{gi}_{bi}"
            prob += q <= most * n, f"grow_{gi}_{bi}"
            gpus[g.id, b] = pulp.LpAffineExpression(q)
        else:
            gpus[g.id, b] = (g.gpus or 0) * n
        terms.append(n)
    total = pulp.lpSum(terms)
    want = len(g.members) if not g.spanning else g.gpus
    if want is None:
        return
    if g.demand == Demand.max:
        prob += total <= want, f"demand_{gi}"
    elif g.demand == Demand.at_least and g.spanning:
        prob += total >= want, f"demand_{gi}"
    else:
        prob += total == want, f"demand_{gi}"


def _master_objective(
    prob: pulp.LpProblem, scenario: Scenario, objective: Objective, props, gpus: dict, use: dict
):
    """The master's objective: GPUs (or the objective's figure per GPU) placed, less a penalty on
    elastic site budgets: the estimates may be off either way, and the fixed demands' true cost
    (wave 1) recalibrates them; an overrun costs more than any placement gains."""
    per = {"max_gpus": None, "max_pflops": "pflops", "min_capex": "capex", "min_tco": "tco"}[objective.value]
    obj = pulp.lpSum(e * (1.0 if per is None else getattr(props[k], per)) for k, e in gpus.items())
    top = max([1.0 if per is None else getattr(p, per) for p in props.values() if p.cap > 0] or [1.0])
    for w, cap in (("kw", scenario.budgets.it_power_kw), ("capex", scenario.budgets.capex_usd)):
        if cap is not None:
            least = min([getattr(p, w) for p in props.values() if p.cap > 0 and getattr(p, w) > 0] or [1.0])
            over = prob.add_variable(f"over_{w}", lowBound=0)
            prob += use[w] <= cap + over, f"budget_{w}"
            obj = obj - 1e3 * top / least * over if objective.maximise else obj + 1e3 * top / least * over
    return obj


# ------------------------------------------------------------------ the whole


def _job_limit(deadline: Deadline, jobs: int, executor: str, workers: int, part: float = 0.6) -> float:
    """Seconds each of ``jobs`` parallel solves may take: ``part`` of what is left, over the waves
    the executor runs them in (one worker when serial); at least 1 s."""
    lanes = 1 if executor == "serial" else max(1, workers)
    return max(1.0, part * deadline.left() / max(1, math.ceil(jobs / lanes)))


def _whole(
    scenario: Scenario,
    deadline: Deadline,
    stages: dict[str, float],
    rounds: int,
    why: str,
    say: Callable[[str], None],
) -> Decomposition:
    """The fallback: the whole scenario as one model in the time left. Its answer stands, infeasible
    included (the whole model proves it); the note says why the decomposition handed over."""
    say(f"decomposition: {why}; solving the whole model in the {max(0.0, deadline.left()):.0f} s left")
    tw = time.perf_counter()
    plan = plan_scenario(scenario, deadline=deadline)
    stages["whole_s"] = time.perf_counter() - tw
    stages["total_s"] = deadline.elapsed()
    note = f"decomposition handed over to the whole model: {why}"
    plan = plan.model_copy(update={"notes": [note, *plan.notes]})
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, 0, fell_back=why)


def _timed(plan: Plan, stages: dict[str, float]) -> Plan:
    """The plan with the decomposition's stage times (the whole model's own stages, when it ran,
    under ``whole_``)."""
    own = {k.removesuffix("_s"): round(v, 4) for k, v in stages.items() if k != "total_s" and v > 0}
    inner = {f"whole_{k}": v for k, v in plan.stage_times_s.items()}
    return plan.model_copy(update={"stage_times_s": {**own, **inner}})


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
    if scenario.supply:
        return _whole(
            scenario, deadline, stages, 0, "rack supply per phase (supply) is shared by every building", say
        )
    if scenario.power_arrival or (over_time and any(g.spanning for g in groups)):
        return _plan_region(scenario, data, groups, deadline, stages, run, say, polish)
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
    props = proposals(scenario, groups, buildings)
    home = {r.cluster: r.building for r in scenario.existing if r.cluster}
    for g in groups:
        pinned = {home[c["id"]] for c in g.members if c["id"] in home}
        if pinned:
            for b in buildings:
                if b not in pinned:
                    props.pop((g.id, b), None)
    stages["proposals_s"] = time.perf_counter() - t0
    say(f"proposals: {len(groups)} cluster groups × {len(buildings)} buildings counted from the site")
    # 2-3. master and buildings, in rounds
    return _Rounds(scenario, data, groups, props, home, deadline, stages, run, say, budgeted).run(polish)


_RETRY = object()
"""A round's answer when the master is recalibrated and the round starts again."""


class _Rounds:
    """The master and the buildings in rounds (module docstring, steps 2-3): the master shares out
    the clusters; with site budgets each building's fixed demands are costed first (wave 1), then
    every building solves its share (wave 2); buildings that cannot host theirs give up room in the
    proposals and the master shares again, up to :data:`ROUNDS` rounds."""

    def __init__(self, scenario, data, groups, props, home, deadline, stages, run, say, budgeted):
        self.scenario, self.data, self.groups, self.props, self.home = scenario, data, groups, props, home
        self.deadline, self.stages, self.run_args, self.say, self.budgeted = (
            deadline,
            stages,
            run,
            say,
            budgeted,
        )
        self.bdata = {b["id"]: b for b in data["site"]["buildings"]}
        self.buildings = list(self.bdata)
        self.solved: dict[
            str, tuple[str, Plan | None, str]
        ] = {}  # building → (sub-scenario JSON, plan, error)
        self.committed: dict[
            str, tuple[str, dict[str, float] | None]
        ] = {}  # building → (JSON, use of its fixed demands)
        self.texts: dict[str, str] = {}  # building → the sub-scenario JSON of its job in this round
        self.rounds = 0
        stages["master_s"] = stages["fixed_s"] = stages["buildings_s"] = 0.0

    def whole(self, why: str) -> Decomposition:
        return _whole(self.scenario, self.deadline, self.stages, self.rounds, why, self.say)

    def run(self, polish: bool) -> Decomposition:
        while True:
            self.rounds += 1
            left = self.deadline.left()
            if left < 0.25 * self.deadline.limit_s:
                return self.whole(f"round {self.rounds} would start with {left:.0f} s left")
            shared = self.master()
            if isinstance(shared, Decomposition):
                return shared
            alloc, whole, use, subs, fixed = shared
            bad: list[str] = []
            floor: dict[str, dict[str, float]] = {b: {"kw": 0.0, "capex": 0.0} for b in self.buildings}
            if self.budgeted:
                got = self.fixed_wave(alloc, fixed, floor)
                if got is _RETRY:
                    continue
                if isinstance(got, Decomposition):
                    return got
                bad = got
            if not bad:
                bad = self.building_wave(subs, use, floor)
                if not bad:
                    final = {b: p for b, (_, p, _) in self.solved.items() if p is not None}
                    return _join(
                        self.scenario, final, self.rounds, self.deadline, self.stages, self.say, polish
                    )
            if self.rounds >= ROUNDS:
                return self.whole(
                    f"after {self.rounds} rounds buildings {', '.join(bad[:10])} still cannot meet their "
                    "share"
                )
            self.say(
                f"round {self.rounds}: buildings {', '.join(bad[:10])} cannot host their share: moving "
                "clusters"
            )
            self.shrink(bad, alloc)

    def master(self):
        """The master's shares this round: (GPUs, whole clusters and estimated use per building, each
        building's clusters, the fixed demands), or the whole model's answer when it has none."""
        tm = time.perf_counter()
        limit = max(1.0, min(0.1 * self.deadline.left(), 60))
        master = _master(self.scenario, self.groups, self.buildings, self.props, limit)
        self.stages["master_s"] += time.perf_counter() - tm
        if master is None:
            return self.whole(
                f"the master has no solution in round {self.rounds} (the buildings' "
                "estimated room cannot meet the demands within the site budgets)"
            )
        alloc, whole, use = master
        subs, fixed = building_shares(self.groups, self.buildings, alloc, whole)
        offered = offer_left(self.groups, self.buildings, self.props, alloc, subs)
        given = {c["id"] for cs in subs.values() for c in cs}
        for (
            g
        ) in self.groups:  # a cluster with racks installed always stands in its building (its racks name it)
            for c in g.members:
                if c["id"] in self.home and c["id"] not in given:
                    subs[self.home[c["id"]]].append(c)
        self.say(
            f"round {self.rounds}: master placed {sum(alloc.values()):,.0f} GPUs; {offered} cluster(s) "
            "it left out offered to the buildings with room"
        )
        return alloc, whole, use, subs, fixed

    def fixed_wave(self, alloc, fixed, floor):
        """Wave 1: each building's fixed demands at least cost, no budget: what they must spend
        (into ``floor``). The buildings that cannot meet theirs; :data:`_RETRY` when the fixed
        demands overrun the budgets and the master is recalibrated; the whole model's answer when
        that changes nothing or the rounds are spent."""
        s = self.scenario
        obj = "min_capex" if s.budgets.capex_usd is not None else "min_tco"
        pending = []
        for b in self.buildings:
            exact = [as_exact(c) for c in fixed[b]]
            text = json.dumps(
                building_data(self.data, self.bdata[b], exact, f"{s.name}-{b}-fixed", objective=obj)
            )
            if fixed[b] and self.committed.get(b, ("", None))[0] != text:
                pending.append((b, text))
            elif not fixed[b]:
                self.committed.pop(b, None)
        each = _job_limit(
            self.deadline, len(pending), self.run_args["executor"], self.run_args["workers"], 0.3
        )
        jobs = [(b, text, each) for b, text in pending]
        self.texts.clear()
        self.texts.update({j[0]: j[1] for j in jobs})

        def spent(r: dict) -> None:
            p = Plan.model_validate(r["plan"]) if "plan" in r else None
            ok = p is not None and p.status.has_plan and p.kpis is not None
            use = {"kw": p.kpis.racks_kw, "capex": p.kpis.capex_usd} if ok else None  # type: ignore[union-attr]
            self.committed[r["part"]] = (self.texts[r["part"]], use)

        tf = time.perf_counter()
        run_jobs(solve_part, jobs, spent, **self.run_args)
        self.stages["fixed_s"] += time.perf_counter() - tf
        bad = [b for b in self.buildings if fixed[b] and self.committed[b][1] is None]
        for b in self.buildings:
            if fixed[b] and self.committed[b][1] is not None:
                floor[b] = self.committed[b][1]
        caps = (("kw", s.budgets.it_power_kw), ("capex", s.budgets.capex_usd))
        over = {w: sum(f[w] for f in floor.values()) - cap for w, cap in caps if cap is not None}
        if bad or not any(v > 1e-6 for v in over.values()):
            return bad
        # the master under-estimated what fixed demands cost: charge them what they do cost
        changed = recalibrate(self.groups, self.props, alloc, fixed, floor)
        if not changed or self.rounds >= ROUNDS:
            by = ", ".join(f"{w} by {v:,.1f}" for w, v in over.items() if v > 0)
            return self.whole(f"the fixed demands as split exceed the site budgets ({by})")
        return _RETRY

    def building_wave(self, subs, use, floor) -> list[str]:
        """Wave 2: every building with a share solves it (within its part of the budgets); the
        buildings without a plan."""
        s = self.scenario
        pending = []
        flex = {b: {w: max(0.0, use[b][w] - floor[b][w]) for w in ("kw", "capex")} for b in self.buildings}
        for b in self.buildings:
            if not subs[b]:
                self.solved.pop(b, None)
                continue
            budgets = {}
            for w, key in (("kw", "it_power_kw"), ("capex", "capex_usd")):
                cap = getattr(s.budgets, key)
                if cap is not None:
                    rest = max(0.0, cap - sum(f[w] for f in floor.values()))
                    total_flex = sum(f[w] for f in flex.values())
                    share = flex[b][w] / total_flex if total_flex > 0 else 1 / len(self.buildings)
                    budgets[key] = floor[b][w] + rest * share
            text = json.dumps(
                building_data(self.data, self.bdata[b], subs[b], f"{s.name}-{b}", budgets or None)
            )
            if b not in self.solved or self.solved[b][0] != text:
                pending.append((b, text))
        executor = self.run_args["executor"]
        each = _job_limit(self.deadline, len(pending), executor, self.run_args["workers"])
        jobs = [(b, text, each) for b, text in pending]
        self.say(
            f"round {self.rounds}: {len(jobs)} building solve(s) on {executor}, {each:.0f} s each at most"
        )
        self.texts.clear()
        self.texts.update({j[0]: j[1] for j in jobs})

        def done(r: dict) -> None:
            p = Plan.model_validate(r["plan"]) if "plan" in r else None
            self.solved[r["part"]] = (self.texts[r["part"]], p, r.get("error", ""))

        tb = time.perf_counter()
        run_jobs(solve_part, jobs, done, **self.run_args)
        self.stages["buildings_s"] += time.perf_counter() - tb
        self.say(f"round {self.rounds}: building solves done in {time.perf_counter() - tb:.1f} s")
        return [b for b, (_, p, _) in self.solved.items() if p is None or not p.status.has_plan]

    def shrink(self, bad: list[str], alloc) -> None:
        """Buildings that could not host their share offer less: a spanning or as-many-as-fit group
        a share of its room, others one whole cluster fewer."""
        for b in bad:
            for g in self.groups:
                if (g.id, b) in self.props and alloc.get((g.id, b), 0) > 0:
                    p = self.props[g.id, b]
                    cut = p.cap * CUT if g.spanning or g.demand == Demand.max else p.cap
                    whole = max(0, p.whole - (0 if g.spanning else 1))
                    self.props[g.id, b] = Proposal(cut, whole, p.kw, p.capex, p.tco, p.pflops)


def _plan_region(
    scenario: Scenario,
    data: dict,
    groups: list[Group],
    deadline: Deadline,
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
    why = region_unsupported(scenario)
    if why is not None:
        return _whole(scenario, deadline, stages, 0, why, say)
    t0 = time.perf_counter()
    buildings = [b.id for b in scenario.site.buildings]
    props = proposals(scenario, groups, buildings)
    clusters, cap = [], {}
    for g in groups:
        for c in g.members:
            clusters.append((c["id"], g.scope, g.types, g.unit))
            cap.update({(c["id"], b): props[g.id, b].cap for b in buildings if (g.id, b) in props})
    stages["proposals_s"] = time.perf_counter() - t0
    tm = time.perf_counter()
    limit = max(1.0, min(0.1 * deadline.left(), 60))
    shares = region_master_plan(scenario, index_site(scenario.site), clusters, buildings, cap, limit)
    stages["master_s"] = time.perf_counter() - tm
    if shares is None:
        why = (
            "the region master has no solution (the buildings' estimated room and the power arrived cannot "
            "be shared out)"
        )
        return _whole(scenario, deadline, stages, 1, why, say)
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    jobs = [
        (b, json.dumps(_region_share(scenario, data, bdata[b], shares[b])))
        for b in buildings
        if shares[b].gpus
    ]
    say(
        f"region master: {sum(sum(v[-1] for v in shares[b].gpus.values()) for b in buildings):,} GPUs "
        "shared over "
        f"{len(jobs)} buildings in {stages['master_s']:.1f} s"
    )
    each = _job_limit(deadline, len(jobs), run["executor"], run["workers"])
    solved: dict[str, Plan | None] = {}

    def done(r: dict) -> None:
        solved[r["part"]] = Plan.model_validate(r["plan"]) if "plan" in r else None

    tb = time.perf_counter()
    run_jobs(solve_part, [(b, text, each) for b, text in jobs], done, **run)
    stages["buildings_s"] = time.perf_counter() - tb
    bad = [b for b, p in solved.items() if p is None or not p.status.has_plan]
    if bad:
        return _whole(
            scenario,
            deadline,
            stages,
            1,
            f"buildings {', '.join(bad[:10])} have no plan for their share",
            say,
        )
    say(f"buildings planned in {stages['buildings_s']:.1f} s")
    return _join(
        scenario, {b: p for b, p in solved.items() if p is not None}, 1, deadline, stages, say, polish
    )


def _region_share(scenario: Scenario, data: dict, bdata: dict, share) -> dict:
    """A building's scenario data for its share: its clusters' GPUs per phase and its part of the
    power arriving as its own ``power_arrival`` (MW, rounded down to the watt)."""
    phases = [p.id for p in scenario.phases]
    by_id = {c["id"]: c for c in data["clusters"]}
    mine = []
    for cid, steps in share.gpus.items():
        c = {k: v for k, v in by_id[cid].items() if k not in ("gpus", "gpus_by_phase")}
        c.update({"gpus_by_phase": dict(zip(phases, steps, strict=True))} if phases else {"gpus": steps[0]})
        mine.append(c)
    sub = building_data(data, bdata, mine, f"{scenario.name}-{bdata['id']}")
    if scenario.power_arrival:
        cumulative = [math.floor(kw * 1000) / 1e6 for kw in share.power_kw]
        sub["power_arrival"] = [
            {
                **({"phase": phases[i]} if i else {}),
                "interconnect_mw": round(mw - (cumulative[i - 1] if i else 0.0), 6),
                "source": "the region master's share",
            }
            for i, mw in enumerate(cumulative)
        ]
    return sub


def _join(
    scenario: Scenario,
    final: dict[str, Plan],
    rounds: int,
    deadline: Deadline,
    stages: dict[str, float],
    say: Callable[[str], None],
    polish: bool,
) -> Decomposition:
    """4. The whole: the building plans joined, their objective recomputed from the racks, the plan
    verified against the whole scenario and its gap measured to the tightest bound proven in time."""
    t0 = deadline.t0
    tw = time.perf_counter()
    racks = sorted(
        (r for p in final.values() for r in p.racks), key=lambda r: (r.building, r.hall, r.row, r.position)
    )
    bought = [b for p in final.values() for b in p.retrofits]
    value = objective_value(scenario, racks, [(b.id, b.phase) for b in bought])
    bounds = []
    relaxed = merged(scenario)
    if relaxed is not None:
        bounds.append((lp_bound(relaxed, max(1.0, 0.3 * deadline.left())), "the merged relaxation"))
    stages["merged_bound_s"] = time.perf_counter() - tw
    if bounds[0][0] is None or gap_of(value, bounds[0][0]) > scenario.solver.rel_gap if bounds else True:
        # the merged bound does not prove the gap: the LP of the whole may (it builds within the time given)
        tl = time.perf_counter()
        bounds.append((lp_bound(scenario, max(1.0, 0.4 * deadline.left())), "the LP relaxation of the whole"))
        stages["lp_bound_s"] = time.perf_counter() - tl
    maximise = Objective(scenario.objective).maximise
    found = [(b, why) for b, why in bounds if b is not None]
    bound, bound_from = (min(found) if maximise else max(found)) if found else (None, "")
    bound = None if bound is None else round(bound, 6)
    if bound is not None and (
        (maximise and bound < value - 1e-6 * max(1.0, abs(value)))
        or (not maximise and bound > value + 1e-6 * max(1.0, abs(value)))
    ):
        bound = None  # on the wrong side of a verified plan: not a bound
    gap = None if bound is None else gap_of(value, bound)
    status = Status.optimal if gap is not None and gap <= scenario.solver.rel_gap else Status.feasible
    plan = Plan(
        planner_version=__version__,
        scenario_name=scenario.name,
        scenario_hash=scenario_hash(scenario),
        solver=scenario.solver.name,
        solver_settings=scenario.solver,
        status=status,
        optimality="proven" if status == Status.optimal else None,
        mode="joint",
        objective=scenario.objective,
        objective_value=round(value, 6),
        bound=bound,
        gap=gap,
        build_time_s=0.0,
        solve_time_s=round(time.perf_counter() - t0, 4),
        racks=racks,
        retrofits=bought,
        notes=[
            f"decomposed by building: {len(final)} building plans joined after {rounds} master round(s); "
            + (
                f"gap measured against {bound_from}"
                if bound is not None
                else "no bound: no relaxation was solved to optimality in time"
            )
        ],
    )
    tv = time.perf_counter()
    plan = finish_plan(plan, scenario)
    stages["verify_s"] = time.perf_counter() - tv
    if polish and status != Status.optimal and deadline.left() >= POLISH_S:
        plan = _polish(scenario, plan, deadline, stages, say)
    stages["total_s"] = time.perf_counter() - t0
    return Decomposition(_timed(plan, stages), stages, rounds, plan.bound, len(final))


def _polish(
    scenario: Scenario, joined: Plan, deadline: Deadline, stages: dict[str, float], say: Callable[[str], None]
) -> Plan:
    """The joined plan against the whole model's plan in the time left: the better objective wins
    (both verified); the bound is the tighter of the two stated."""
    say(
        f"joined plan at gap {joined.gap if joined.gap is not None else '?'}: the whole model gets the "
        f"{deadline.left():.0f} s left"
    )
    tp = time.perf_counter()
    try:
        other = plan_scenario(scenario, deadline=deadline)
    except SolverFailure:
        other = None
    stages["polish_s"] = time.perf_counter() - tp
    maximise = Objective(scenario.objective).maximise
    if other is None or not other.status.has_plan or other.objective_value is None:
        return joined
    bounds = [b for b in (joined.bound, other.bound) if b is not None]
    bound = (min(bounds) if maximise else max(bounds)) if bounds else None
    better = (
        other.objective_value > joined.objective_value + 1e-9
        if maximise
        else other.objective_value < joined.objective_value - 1e-9
    )
    best = other if better else joined
    value = best.objective_value
    gap = None if bound is None else gap_of(value, bound)
    status = Status.optimal if gap is not None and gap <= scenario.solver.rel_gap else Status.feasible
    who = "the whole model's plan" if better else "the joined plan"
    note = (
        f"decomposition polished: joined {joined.objective_value:,.6g}, whole model "
        f"{other.objective_value:,.6g} in the time left; "
        f"{who} kept"
    )
    return best.model_copy(
        update={
            "bound": None if bound is None else round(bound, 6),
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
