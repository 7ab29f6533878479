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

from planner.costs import facility_usd, rack_cost
from planner.enums import Objective, Scope, Status
from planner.errors import SolverFailure
from planner.kpis import compute_kpis, network_racks
from planner.loader import scenario_hash
from planner.plan import PlacedRack, Plan
from planner.power_model import PowerModel, power_model
from planner.schema import Demand, RackType, Scenario
from planner.site_index import fits, index_site, place
from planner.verifier import OBJECTIVE_KPI, verify
from planner.version import __version__

TOL = 1e-9


class PowerState:
    """Node loads under normal operation and every kept contingency, updated rack by rack
    (coefficients from :mod:`planner.power_model`)."""

    def __init__(self, pm: PowerModel, fixed_row_kw: dict[str, float]) -> None:
        self.pm = pm
        fixed = pm.fixed_by_group(fixed_row_kw)
        self.load = {v: pm.fixed_normal(v, fixed) for v in pm.normal}
        self.extra = [pm.fixed_delta(c, fixed) for c in pm.contingencies]
        self.normal_of_group: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for v, coef in pm.normal.items():
            for g, a in coef.items():
                self.normal_of_group[g].append((v, a))
        self.cont_of_node: dict[str, list[int]] = defaultdict(list)
        self.delta_of_group: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, c in enumerate(pm.contingencies):
            self.cont_of_node[c.node].append(i)
            for g, d in c.delta.items():
                self.delta_of_group[g].append((i, d))
        self.worst_extra = {v: max((self.extra[i] for i in idx), default=0.0) for v, idx in self.cont_of_node.items()}
        self.dmax: dict[tuple[str, str], float] = defaultdict(float)
        for i, c in enumerate(pm.contingencies):
            for g, d in c.delta.items():
                self.dmax[g, c.node] = max(self.dmax[g, c.node], d)

    def fits(self, group: str, kw: float) -> bool:
        """Whether ``kw`` more on ``group`` keeps every node within its usable capacity in every state."""
        usable = self.pm.usable_kw
        for v, a in self.normal_of_group[group]:
            base = self.load[v] + a * kw
            if base > usable[v] + TOL:
                return False
            if v not in self.cont_of_node:
                continue
            if base + self.worst_extra[v] + max(0.0, self.dmax[group, v]) * kw <= usable[v] + TOL:
                continue
            for i in self.cont_of_node[v]:
                if base + self.extra[i] + self.pm.contingencies[i].delta.get(group, 0.0) * kw > usable[v] + TOL:
                    return False
        return True

    def add(self, group: str, kw: float) -> None:
        for v, a in self.normal_of_group[group]:
            self.load[v] += a * kw
        for i, d in self.delta_of_group[group]:
            self.extra[i] += d * kw
            v = self.pm.contingencies[i].node
            if self.extra[i] > self.worst_extra[v]:
                self.worst_extra[v] = self.extra[i]


def cluster_order(scenario: Scenario, largest_first: bool = False) -> list:
    """Clusters in scenario order, or (the repair order) clusters with a demand to meet first,
    largest demand first, as first-fit decreasing packs bins; then the rest in scenario order."""
    if not largest_first:
        return list(scenario.clusters)
    must = [c for c in scenario.clusters if c.demand != Demand.max and c.gpus]
    rest = [c for c in scenario.clusters if c not in must]
    return sorted(must, key=lambda c: -(c.gpus or 0)) + rest


def greedy_racks(scenario: Scenario, largest_first: bool = False) -> list[PlacedRack]:
    """First-fit decreasing placement (module docstring), unverified: the racks only.
    Used as the solver's starting point, which the solver checks itself. ``largest_first``
    places the clusters with a demand first, largest first (see :func:`cluster_order`)."""
    s = scenario
    ix = index_site(s.site)
    types = s.catalog.by_id()
    pm = power_model(ix)
    fixed_row: dict[str, float] = defaultdict(float)
    heat: dict[str, float] = defaultdict(float)
    for _, row_id, t in network_racks(s):
        kw = s.rack_power_kw(t)
        fixed_row[row_id] += kw
        row = ix.rows[row_id].row
        air, liquid = t.heat_kw(kw)
        heat[row.air_zone] += air
        if liquid and row.liquid_loop:
            heat[row.liquid_loop] += liquid
    power = PowerState(pm, fixed_row)
    network_kw = sum(s.rack_power_kw(t) for _, _, t in network_racks(s))
    pod_gpus: dict[str, int] = defaultdict(int)
    pod_racks: dict[str, int] = defaultdict(int)
    capex = facility_usd(network_kw, s.costs)  # capex counts the network racks' facility build
    it_kw = 0.0
    classes = {c.id: c for c in s.site.fabric.link_classes}
    fabric = s.site.fabric.cost_usd_per_gpu
    spots = ix.pod_locations()
    dead = {r for g, _ in pm.forced_empty.items() for r in pm.groups[g].rows}
    free = [
        (rid, i)
        for rid, ref in ix.rows.items()
        for i in range(ref.row.positions)
        if i not in ref.row.reserved and (rid, i) not in spots and rid not in dead
    ]
    taken: set[tuple[str, int]] = set()
    racks: list[PlacedRack] = []

    static: dict[tuple[str, str], bool] = {}
    cables: dict[tuple[str, int], float] = {}

    def try_place(rid: str, i: int, t: RackType, cluster: str) -> bool:
        """Place one rack if it fits everything (cheap checks first)."""
        nonlocal capex, it_kw
        ref = ix.rows[rid]
        pod = ix.pods[ref.row.pod]
        if pod_gpus[pod.id] + t.gpus > pod.max_gpus or (pod.max_racks is not None and pod_racks[pod.id] + 1 > pod.max_racks):
            return False
        ok = static.get((rid, t.id))
        if ok is None:
            ok = static[rid, t.id] = fits(s, ix, rid, t)
        if not ok:
            return False
        length = cables.get((rid, i))
        if length is None:
            length = cables[rid, i] = ix.cable_length_m(rid, i)
        lc = ix.link_class_for(t, length) if t.links else None
        if t.links and lc is None:
            return False
        kw = s.rack_power_kw(t)
        group = pm.group_of_row[rid]
        if not power.fits(group, kw):
            return False
        air, liquid = t.heat_kw(kw)
        zone, loop = ref.row.air_zone, ref.row.liquid_loop
        if air and heat[zone] + air > ix.zones[zone].capacity_kw + TOL:
            return False
        if liquid and (loop is None or heat[loop] + liquid > ix.zones[loop].capacity_kw + TOL):
            return False
        cost = rack_cost(t, kw, classes[lc.id] if lc else None, fabric, s.costs, s.pue).capex_usd
        if s.budgets.capex_usd is not None and capex + cost > s.budgets.capex_usd + 1e-6:
            return False
        if s.budgets.it_power_kw is not None and it_kw + kw > s.budgets.it_power_kw + TOL:
            return False
        power.add(group, kw)
        heat[zone] += air
        if liquid:
            heat[loop] += liquid
        pod_gpus[pod.id] += t.gpus
        pod_racks[pod.id] += 1
        capex += cost
        it_kw += kw
        taken.add((rid, i))
        racks.append(place(ix, rid, i, t, cluster))
        return True

    def where_of(rid: str, scope: Scope) -> str | None:
        ref = ix.rows[rid]
        return ref.row.pod if scope == Scope.pod else ref.building if scope == Scope.building else None

    in_scope: dict[tuple[Scope, str], list[int]] = {}
    indexed: set[Scope] = set()

    def positions_of(scope: Scope, home: str) -> list[int]:
        """Indices into ``free`` of one pod's or building's positions, in site order (built once per kind)."""
        if scope not in indexed:
            indexed.add(scope)
            for j, (rid, _) in enumerate(free):
                in_scope.setdefault((scope, where_of(rid, scope) or ""), []).append(j)
        return in_scope.get((scope, home), [])

    def scope_order(scope: Scope) -> list[str]:
        """Pods or buildings in site order."""
        return [k[1] for k in in_scope if k[0] == scope]

    def closed(scope: Scope, home: str, smallest: int) -> bool:
        """A pod with no port or rack left for the smallest rack of the cluster (buildings: never)."""
        if scope != Scope.pod:
            return False
        pod = ix.pods[home]
        return pod_gpus[home] + smallest > pod.max_gpus or (pod.max_racks is not None and pod_racks[home] >= pod.max_racks)

    pods_in: dict[str, list[str]] = defaultdict(list)
    for pid, hid in ix.pod_hall.items():
        pods_in[ix.halls[hid][0]].append(pid)

    def ports_left(scope: Scope, home: str) -> int:
        """GPU ports still free in a pod or a building (a home must hold the whole demand)."""
        pods = [home] if scope == Scope.pod else pods_in.get(home, [])
        return sum(ix.pods[p].max_gpus - pod_gpus[p] for p in pods)

    first_free = 0
    for c in cluster_order(s, largest_first):
        target = c.gpus if c.gpus is not None else float("inf")
        ranked = sorted((types[t] for t in s.gpu_types_for(c)), key=lambda t: (-t.gpus, -s.rack_power_kw(t), t.id))
        scope = s.scope_of(c)
        smallest = min((t.gpus for t in ranked), default=0)
        home: str | None = None
        placed = n_racks = 0
        while first_free < len(free) and free[first_free] in taken:
            first_free += 1
        if scope in (Scope.pod, Scope.building):
            # try homes in site order; a home that takes no rack is left for the next one
            positions_of(scope, "")
            need = c.gpus if c.demand != Demand.max and c.gpus else 0
            homes = [h for h in scope_order(scope) if not closed(scope, h, smallest) and ports_left(scope, h) >= need]
        else:
            homes = [None]
        for h in homes:
            pool = positions_of(scope, h) if h is not None else range(first_free, len(free))
            for j in pool:
                if placed >= target or (scope == Scope.rack and n_racks > 0):
                    break
                rid, i = free[j]
                if (rid, i) in taken:
                    continue
                pod = ix.pods[ix.rows[rid].row.pod]
                if pod_gpus[pod.id] + smallest > pod.max_gpus or (pod.max_racks is not None and pod_racks[pod.id] >= pod.max_racks):
                    continue  # a full pod: nothing more goes there
                for t in ranked:
                    if c.demand != Demand.at_least and placed + t.gpus > target:
                        continue
                    if try_place(rid, i, t, c.id):
                        placed += t.gpus
                        n_racks += 1
                        home = h
                        break
            if n_racks:
                break
        if c.storage_racks and c.storage_rack_type in types:
            st = types[c.storage_rack_type]
            need = c.storage_racks
            pool = positions_of(scope, home) if home is not None else range(first_free, len(free))
            for j in pool:
                if need == 0:
                    break
                rid, i = free[j]
                if (rid, i) in taken or (home is not None and scope in (Scope.pod, Scope.building) and where_of(rid, scope) != home):
                    continue
                if try_place(rid, i, st, c.id):
                    need -= 1
                    if home is None and scope in (Scope.pod, Scope.building):
                        home = where_of(rid, scope)
    racks.sort(key=lambda r: (r.building, r.hall, r.row, r.position))
    return racks


def greedy_meets_demands(scenario: Scenario, racks: list[PlacedRack]) -> bool:
    """Whether first-fit racks meet every cluster's exact or at-least demand (first-fit obeys
    every other limit by construction; the verifier re-checks it wherever it is used)."""
    types = scenario.catalog.by_id()
    got: dict[str, int] = defaultdict(int)
    for r in racks:
        got[r.cluster] += types[r.rack_type].gpus
    stored: dict[str, int] = defaultdict(int)
    for r in racks:
        if not types[r.rack_type].gpus:
            stored[r.cluster] += 1
    for c in scenario.clusters:
        if c.demand == Demand.exact and got[c.id] != c.gpus:
            return False
        if c.demand == Demand.at_least and got[c.id] < (c.gpus or 0):
            return False
        if stored[c.id] != c.storage_racks:
            return False
    return True


def start_racks(scenario: Scenario) -> tuple[list[PlacedRack], str]:
    """The first-fit plan to start the solver from, and how it was made: first-fit in scenario
    order, or, when that misses an exact or at-least demand, first-fit with the largest demands
    first (the repair), if that meets them."""
    racks = greedy_racks(scenario)
    if greedy_meets_demands(scenario, racks):
        return racks, "first-fit"
    repaired = greedy_racks(scenario, largest_first=True)
    if greedy_meets_demands(scenario, repaired):
        return repaired, "first-fit, largest demands first"
    return racks, "first-fit (misses a demand)"


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
        status=Status.not_solved,
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
    value = getattr(kpis, OBJECTIVE_KPI[Objective(s.objective)])
    return plan.model_copy(update={"kpis": kpis, "utilisation": rep.usage, "notes": notes, "objective_value": float(value)})
