"""Greedy baseline: first-fit decreasing, as a DCIM "find space" search does it.

Clusters in scenario order; each cluster's allowed rack types largest first
(GPUs, then power); positions in site order (building, hall, row, index). A
rack goes to the first free position where it fits every limit given what is
already placed: rack power, weight and cooling medium of the row, cable reach,
every power node in normal operation and under every single failure, cooling
zones, pod ports and racks, budgets, the cluster's demand, and its hop scope
(the first pod or building it lands in becomes its only one). Nothing is ever
moved. The result is checked by the same verifier as the MILP's plans.
"""

from __future__ import annotations

import time
from collections import defaultdict

from planner.version import __version__
from planner.build import fits
from planner.kpis import compute_kpis
from planner.loader import scenario_hash
from planner.plan import PlacedRack, Plan
from planner.power_model import power_model
from planner.schema import Demand, Scenario
from planner.site_index import index_site, place
from planner.solve import SolverFailure
from planner.verify import cluster_scope, verify

TOL = 1e-9


def greedy_racks(scenario: Scenario) -> list[PlacedRack]:
    """First-fit decreasing placement (module docstring), unverified: the racks only.
    Used as the solver's starting point, which the solver checks itself."""
    s = scenario
    ix = index_site(s.site)
    types = s.catalog.by_id()
    pm = power_model(ix)
    load = [0.0] * len(pm.limits)
    by_row: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, lim in enumerate(pm.limits):
        for r, a in lim.coef.items():
            by_row[r].append((i, a))
    heat: dict[str, float] = defaultdict(float)
    pod_gpus: dict[str, int] = defaultdict(int)
    pod_racks: dict[str, int] = defaultdict(int)
    capex = it_kw = 0.0
    link_cost = {c.id: c.cost_usd_per_link for c in s.site.fabric.link_classes}
    fabric = s.site.fabric.cost_usd_per_gpu
    spots = ix.pod_locations()
    free = [
        (rid, i)
        for rid, ref in ix.rows.items()
        for i in range(ref.row.positions)
        if i not in ref.row.reserved and (rid, i) not in spots and rid not in pm.forced_empty
    ]
    taken: set[tuple[str, int]] = set()
    racks: list[PlacedRack] = []
    for c in s.clusters:
        target = c.gpus if c.gpus is not None else float("inf")
        ranked = sorted((types[t] for t in c.rack_types), key=lambda t: (-t.gpus, -s.rack_power_kw(t), t.id))
        scope = cluster_scope(s, c.max_hops)
        home: str | None = None
        placed = 0
        for rid, i in free:
            if placed >= target or (scope == "rack" and placed > 0):
                break
            if (rid, i) in taken:
                continue
            ref = ix.rows[rid]
            where = ref.row.pod if scope == "pod" else ref.building if scope == "building" else None
            if home is not None and where != home:
                continue
            for t in ranked:
                if not fits(s, ix, rid, t):
                    continue
                if c.demand != Demand.at_least and placed + t.gpus > target:
                    continue
                length = ix.cable_length_m(rid, i)
                lc = ix.link_class_for(t, length) if t.links else None
                if t.links and lc is None:
                    continue
                kw = s.rack_power_kw(t)
                if any(load[k] + a * kw > pm.limits[k].limit_kw + TOL for k, a in by_row[rid]):
                    continue
                air, liquid = kw * (1 - t.liquid_fraction), kw * t.liquid_fraction
                zone, loop = ref.row.air_zone, ref.row.liquid_loop
                if air and heat[zone] + air > ix.zones[zone].capacity_kw + TOL:
                    continue
                if liquid and (loop is None or heat[loop] + liquid > ix.zones[loop].capacity_kw + TOL):
                    continue
                pod = ix.pods[ref.row.pod]
                if pod_gpus[pod.id] + t.gpus > pod.max_gpus or (pod.max_racks is not None and pod_racks[pod.id] + 1 > pod.max_racks):
                    continue
                cost = t.capex_usd + t.gpus * fabric + (t.links * link_cost[lc.id] if lc else 0.0)
                if s.budgets.capex_usd is not None and capex + cost > s.budgets.capex_usd + 1e-6:
                    continue
                if s.budgets.it_power_kw is not None and it_kw + kw > s.budgets.it_power_kw + TOL:
                    continue
                for k, a in by_row[rid]:
                    load[k] += a * kw
                heat[zone] += air
                if liquid:
                    heat[loop] += liquid
                pod_gpus[pod.id] += t.gpus
                pod_racks[pod.id] += 1
                capex += cost
                it_kw += kw
                placed += t.gpus
                home = where
                taken.add((rid, i))
                racks.append(place(ix, rid, i, t, c.id))
                break
    racks.sort(key=lambda r: (r.building, r.hall, r.row, r.position))
    return racks


def greedy_meets_demands(scenario: Scenario, racks: list[PlacedRack]) -> bool:
    """Whether first-fit racks meet every cluster's exact or at-least demand (first-fit obeys
    every other limit by construction; the verifier re-checks it wherever it is used)."""
    types = scenario.catalog.by_id()
    got: dict[str, int] = defaultdict(int)
    for r in racks:
        got[r.cluster] += types[r.rack_type].gpus
    for c in scenario.clusters:
        if c.demand == Demand.exact and got[c.id] != c.gpus:
            return False
        if c.demand == Demand.at_least and got[c.id] < (c.gpus or 0):
            return False
    return True


def greedy_plan(scenario: Scenario) -> Plan:
    """First-fit decreasing placement as a verified plan: the baseline the MILP is measured against."""
    s = scenario
    t0 = time.perf_counter()
    racks = greedy_racks(s)
    elapsed = time.perf_counter() - t0
    plan = Plan(
        planner_version=__version__,
        scenario_name=s.name,
        scenario_hash=scenario_hash(s),
        solver="greedy",
        status="not_solved",
        objective=s.objective,
        solve_time_s=round(elapsed, 4),
        racks=racks,
    )
    rep = verify(plan, s)
    hard = [v for v in rep.violations if v.check != "demand"]
    if hard:
        raise SolverFailure(f"greedy plan fails verification: {'; '.join(map(str, hard[:5]))}")
    notes = [f"demand not met: {v}" for v in rep.violations]
    kpis = compute_kpis(s, racks)
    value = {"max_gpus": kpis.gpus, "max_pflops": kpis.pflops_bf16, "min_capex": kpis.capex_usd}[s.objective]
    return plan.model_copy(update={"kpis": kpis, "utilisation": rep.usage, "notes": notes, "objective_value": float(value)})
