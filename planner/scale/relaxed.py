"""A relaxed region re-planned from its base plan: only the buildings a relaxation touches solve
again (``planner explain --decompose building``).

Explain relaxes one limit by one step and asks what that buys. Re-planning the whole region per
limit costs as much as the base plan did; yet a step that loosens a limit inside one building (a
pod, a power node, a cooling zone, a row) changes only what that building can hold, and one that
loosens a region limit (the power arrived by a phase) can be used only by buildings with room, or
with racks that could stand earlier. From the base plan's racks x0 (GPUs of cluster c standing in
building b in phase i) and its draw u0[b,i] (kW at the arrival PUE: its racks and its fixed
network racks):

    R         = buildings whose site data the step changed; for a region limit, the
                :data:`REGION_PICK` buildings holding most GPUs of clusters short in the phase
                the step starts (added there later in the base plan), then most free positions
    d'[c,i]   = Σ_{b∈R} x0[c,b,i] + (d[c,i] − Σ_b x0[c,b,i])   c's figure less what the
                buildings outside R hold (no figure stays none)
    A'[i]     = Σ_{b∈R} u0[b,i] + s[i],  s[i] = min_{j≥i} (A_j − Σ_b u0[b,j])   the arrival
                less what the buildings outside R draw (non-decreasing over the phases)

R is solved as one scenario by the whole pipeline (first-fit, model, verifier), the buildings
outside R keep their racks and structures, and the joined plan is verified against the relaxed
scenario whole. The base plan is a plan of the relaxed scenario (a relaxation only loosens), so
what the joined plan gains over it is a gain found: a lower bound on what the step buys.

Applies where a region decomposes by share (:func:`applies`: max_gpus, every cluster "as many as
fit", no site budgets, installed racks, designed fabrics or rack supply); elsewhere the relaxed
scenario is decomposed afresh."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

from planner.clock import Deadline
from planner.enums import Demand, Objective
from planner.errors import InputError, SolverFailure
from planner.input.loader import scenario_from_data
from planner.input.site_index import index_site
from planner.input.timeline import timeline
from planner.input.variants import scenario_data
from planner.plan import Plan
from planner.plan.kpis import objective_value
from planner.plan.pipeline import finish_plan, plan_scenario
from planner.rules.bounds import CAPACITY, capacity_bound
from planner.scale.budget import Budget
from planner.scale.joined import _joined_plan
from planner.scale.proposals import building_data, building_ids, groups_of
from planner.scale.region_master import building_power
from planner.schema import Scenario

REGION_PICK = 3
"""Buildings re-solved together for a region limit (one model: a few buildings solve in seconds)."""


@dataclass
class Replan:
    """A relaxed scenario re-planned: the verified plan (None when none was found in time), which
    buildings solved again, and why there is no plan."""

    plan: Plan | None
    buildings: list[str] = field(default_factory=list)
    why: str = ""
    seconds: float = 0.0


def applies(scenario: Scenario) -> bool:
    """Whether the base plan's shares can be kept outside the touched buildings (module docstring)."""
    s = scenario
    return (
        Objective(s.objective) == Objective.max_gpus
        and all(c.demand == Demand.max for c in s.clusters)
        and s.budgets.it_power_kw is None
        and s.budgets.capex_usd is None
        and not s.existing
        and not s.supply
        and not any(c.fabrics for c in s.clusters)
        and len(s.site.buildings) > 1
    )


def touched(base: Scenario, relaxed: Scenario) -> list[str]:
    """Buildings whose site data differ between the two scenarios."""
    a = {b.id: b.model_dump(mode="json") for b in base.site.buildings}
    return [b.id for b in relaxed.site.buildings if b.model_dump(mode="json") != a.get(b.id)]


def replan_relaxed(base: Scenario, relaxed: Scenario, plan: Plan, deadline: Deadline) -> Replan:
    """The relaxed scenario planned from ``plan`` (a plan of ``base``) by the module docstring's
    rule, verified whole; a :class:`Replan` without a plan when the time ran out or the re-plan
    failed its verification (its reason said)."""
    t0 = time.perf_counter()
    near = touched(base, relaxed) or region_pick(base, relaxed, plan)
    if not near:
        return Replan(None, [], "no building can use the step")
    data = scenario_data(relaxed)
    sub = _part_data(relaxed, data, plan, near)
    try:
        got = plan_scenario(scenario_from_data(sub), deadline=Deadline(Budget(deadline).seconds("replan")))
    except (InputError, SolverFailure) as e:
        return Replan(None, near, f"the re-solve of {', '.join(near)} failed: {str(e)[:200]}")
    if not got.status.has_plan:
        return Replan(
            None, near, f"no plan for {', '.join(near)} in time ({got.status})", time.perf_counter() - t0
        )
    keep = [r for r in plan.racks if r.building not in near]
    mine = set(near)
    homes = retrofit_homes(relaxed)
    kept_retrofits = [b for b in plan.retrofits if homes.get(b.id) not in mine]
    joined = Plan(
        scenario_name=relaxed.name, racks=[*keep, *got.racks], retrofits=[*kept_retrofits, *got.retrofits]
    )
    value = objective_value(relaxed, joined.racks, [(b.id, b.phase) for b in joined.retrofits])
    bounds = [(capacity_bound(relaxed), CAPACITY)]
    try:
        out = finish_plan(_joined_plan(relaxed, {"all": joined}, 1, value, bounds, t0), relaxed)
    except SolverFailure as e:
        return Replan(
            None, near, f"the joined re-plan fails verification: {str(e)[:200]}", time.perf_counter() - t0
        )
    note = f"re-planned from the base plan: buildings {', '.join(near)} solved again, the others kept"
    return Replan(out.model_copy(update={"notes": [note, *out.notes]}), near, "", time.perf_counter() - t0)


def retrofit_homes(scenario: Scenario) -> dict[str, str]:
    """Retrofit → the building it changes something in (the rule of the building scenarios:
    its building, or the building holding its row or target)."""
    inside = {i: b.id for b in scenario.site.buildings for i in building_ids(b.model_dump(mode="json"))}
    out = {}
    for r in scenario.retrofits:
        e = r.effect.model_dump(mode="json")
        home = e.get("building") or inside.get(e.get("row") or e.get("target"))
        if home:
            out[r.id] = home
    return out


def standing_gpus(scenario: Scenario, plan: Plan) -> dict[tuple[str, str, int], int]:
    """x0[c,b,i]: GPUs of cluster c standing in building b in phase index i."""
    types = scenario.catalog.by_id()
    out: dict[tuple[str, str, int], int] = defaultdict(int)
    for i in range(len(timeline(scenario).phases)):
        for r in scenario.standing(plan.racks, i):
            if r.cluster and r.rack_type in types:
                out[r.cluster, r.building, i] += types[r.rack_type].gpus
    return out


def draws_kw(scenario: Scenario, plan: Plan) -> dict[str, list[float]]:
    """u0[b,i]: what building b draws in phase index i at its design-day PUE, kW (its racks and its
    fixed network racks, as the model counts them)."""
    n = len(timeline(scenario).phases)
    ix = index_site(scenario.site)
    types = scenario.catalog.by_id()
    fixed = building_power(scenario, ix)
    designed = scenario.designed  # no back-end allowance on these
    out = {b: list(v) for b, v in fixed.items()}
    for i in range(n):
        for r in scenario.standing(plan.racks, i):
            if r.rack_type in types and not r.existing:
                t = types[r.rack_type]
                out[r.building][i] += scenario.rack_power_kw(t) + (
                    0.0 if r.cluster in designed else scenario.allowance_kw(t)
                )
    return {b: [scenario.arrival_pue_in(b) * kw for kw in v] for b, v in out.items()}


def region_pick(base: Scenario, scenario: Scenario, plan: Plan) -> list[str]:
    """R for a region limit (module docstring): from the first phase p the step loosens (the power
    arrived; the first phase otherwise), per building b the GPU-phases it could add, about:

        Σ_{c short in p} (x0[c,b,last] − x0[c,b,p])        racks that could stand earlier
        + free_b · G · (n − p)   if a cluster is short from p to the last phase   new racks

    (free_b: b's free positions in the base plan, G: GPUs of the largest rack such a cluster may
    use); the :data:`REGION_PICK` best."""
    tl = timeline(scenario)
    n = len(tl.phases)
    p = next(
        (
            i
            for i in range(n)
            if (scenario.power_available_kw(i) or 0.0) > (base.power_available_kw(i) or 0.0)
        ),
        0,
    )
    x0 = standing_gpus(scenario, plan)
    ids = [b.id for b in scenario.site.buildings]
    types = scenario.catalog.by_id()

    def short(c, i: int) -> bool:
        w = tl.demand(c, i)
        return w is None or sum(x0.get((c.id, b, i), 0) for b in ids) < w

    now = [c for c in scenario.clusters if short(c, p)]
    still = [c for c in now if all(short(c, i) for i in range(p, n))]
    big = max((types[t].gpus for c in still for t in c.rack_types if t in types), default=0)
    free: dict[str, int] = defaultdict(int)
    for ref in index_site(scenario.site).rows.values():
        if ref.row.network is None:
            free[ref.building] += ref.row.positions - len(ref.row.reserved)
    for r in plan.racks:
        if r.rack_type in types:
            free[r.building] -= types[r.rack_type].width
    score = []
    for b in ids:
        later = sum(x0.get((c.id, b, n - 1), 0) - x0.get((c.id, b, p), 0) for c in now)
        score.append((-(later + max(0, free[b]) * big * (n - p)), b))
    return [b for _, b in sorted(score)[:REGION_PICK]]


def _part_data(scenario: Scenario, data: dict, plan: Plan, near: list[str]) -> dict:
    """Scenario data of the buildings in R with their caps d' and arrival A' (module docstring)."""
    tl = timeline(scenario)
    n = len(tl.phases)
    x0 = standing_gpus(scenario, plan)
    ids = [b.id for b in scenario.site.buildings]
    spanning = {c["id"] for g in groups_of(scenario, data) if g.spanning for c in g.members}
    home = {r.cluster: r.building for r in plan.racks if r.cluster}
    phases = [p.id for p in scenario.phases]
    clusters = []
    for c, cd in zip(scenario.clusters, data["clusters"], strict=True):
        if c.id not in spanning and home.get(c.id, near[0]) not in near:
            continue  # bound to one building outside R
        wants = [tl.demand(c, i) for i in range(n)]
        caps = [
            None
            if w is None
            else sum(x0.get((c.id, b, i), 0) for b in near) + w - sum(x0.get((c.id, b, i), 0) for b in ids)
            for i, w in enumerate(wants)
        ]
        if caps and caps[0] is not None and max(caps) <= 0:
            continue
        one = {k: v for k, v in cd.items() if k not in ("gpus", "gpus_by_phase")}
        if caps[0] is not None:
            one.update(
                {"gpus_by_phase": dict(zip(phases, caps, strict=True))} if phases else {"gpus": caps[0]}
            )
        clusters.append(one)
    bdata = {b["id"]: b for b in data["site"]["buildings"]}
    sub = building_data(data, bdata[near[0]], clusters, f"{scenario.name}-{'-'.join(near)}")
    sub["site"] = {**sub["site"], "buildings": [bdata[b] for b in near]}
    if data.get("retrofits"):
        homes = retrofit_homes(scenario)
        sub["retrofits"] = [r for r in data["retrofits"] if homes.get(r["id"]) in near]
    if "backup_power" in sub:
        fixed = data["backup_power"].get("fixed", {})
        sub["backup_power"]["fixed"] = {k: v for k, v in fixed.items() if k in near}
    if scenario.power_arrival:
        sub["power_arrival"] = _arrival(scenario, plan, near, phases)
    return sub


def _arrival(scenario: Scenario, plan: Plan, near: list[str], phases: list[str]) -> list[dict]:
    """A' as ``power_arrival`` steps (MW, rounded down to the watt)."""
    n = max(1, len(phases))
    u0 = draws_kw(scenario, plan)
    spare = [(scenario.power_available_kw(i) or 0.0) - sum(v[i] for v in u0.values()) for i in range(n)]
    for i in range(n - 2, -1, -1):
        spare[i] = min(spare[i], spare[i + 1])
    total = [math.floor((sum(u0[b][i] for b in near) + max(0.0, spare[i])) * 1000) / 1e6 for i in range(n)]
    return [
        {
            **({"phase": phases[i]} if i else {}),
            "interconnect_mw": round(mw - (total[i - 1] if i else 0.0), 6),
            "source": "the relaxed arrival less what the other buildings draw in the base plan",
        }
        for i, mw in enumerate(total)
    ]


@dataclass
class RegionReplanner:
    """Explain's planner at region scale: the base plan by the decomposition, each relaxed scenario
    from it (:func:`replan_relaxed`; decomposed afresh where :func:`applies` does not hold)."""

    executor: str = "process"
    workers: int = 2
    scheduler: str | None = None

    def base(self, scenario: Scenario, deadline: Deadline) -> Plan:
        """The base plan: the decomposition by building, no polish by the whole model."""
        from planner.scale.decompose import plan_decomposed

        run = dict(executor=self.executor, workers=self.workers, scheduler=self.scheduler)
        return plan_decomposed(scenario, **run, polish=False, deadline=deadline).plan

    def relaxed(self, base: Scenario, relaxed: Scenario, plan: Plan, deadline: Deadline) -> Replan:
        """The relaxed scenario re-planned within ``deadline``."""
        if applies(base):
            return replan_relaxed(base, relaxed, plan, deadline)
        t0 = time.perf_counter()
        got = self.base(relaxed, deadline)
        if not got.status.has_plan:
            return Replan(None, [], f"no plan in time ({got.status})", time.perf_counter() - t0)
        return Replan(got, [b.id for b in relaxed.site.buildings], "", time.perf_counter() - t0)

    def bound(self, relaxed: Scenario, time_limit_s: float) -> float | None:
        """The relaxed scenario's LP bound (:func:`planner.scale.bounds.lp_bound`), or None in time."""
        from planner.scale.bounds import lp_bound

        return lp_bound(relaxed, time_limit_s)
