"""Bounds any plan obeys, from the scenario alone and in one pass over it: stated whenever a
plan has no better one, so the gap is always a figure (the verifier recomputes them with its own
code: :mod:`planner.verifier.bounds_recount`).

For ``max_gpus`` (``max_pflops``: per GPU its best PFLOPS), in every phase p (one without phases):

    GPUs_p ≤ min( E + Σ_c cap_c,p                   when every cluster has a figure (not at-least);
                                                    E: the GPUs of the installed racks
                  P ÷ k,                            P: Σ usable kW of the root power nodes, raised by
                                                    every root-targeted retrofit; k = min_t kW_t ÷ GPUs_t
                  E + max(0, A_p ÷ PUE − E · k) ÷ k',  A_p: the region's power arrived by p, PUE the
                                                    least design-day PUE of any building, k' = min_t
                                                    (kW_t + network allowance_t) ÷ GPUs_t
                  max Σ_c g_c : Σ_c k_c · g_c ≤ A_p ÷ PUE, 0 ≤ g_c ≤ max(cap_c,p, E_c),
                                                    k_c the least kW per GPU of c's own rack types
                                                    with their back-end network: the allowance, or
                                                    on a designed fabric the least it adds per rack
                                                    (fabric_floor_kw), E_c its installed GPUs (a fractional
                                                    knapsack: filled lightest first; installed racks
                                                    of no listed cluster at k; a designed job a region
                                                    tier may join, beyond one building's room R_c,
                                                    at k_c + h_c · d ÷ (d − R_c): its region links,
                                                    _spanning_items)
                  Σ_rows positions × max_t (GPUs_t ÷ width_t) )

over the GPU rack types t some cluster may use; a phased objective sums the phases. Network racks,
N-1, cooling and pods are left out, so it is loose, but never wrong.
"""

from __future__ import annotations

import math

from planner.enums import Demand, Objective, RetrofitKind, Scope
from planner.input.site_index import index_site
from planner.input.timeline import timeline
from planner.rules.fabric_sizing import fabric_floor_kw, region_kw_per_gpu
from planner.schema import Scenario

CAPACITY = "power, positions and demands"
"""The bound of :func:`capacity_bound`, in words."""


def _types(scenario: Scenario) -> list:
    types = scenario.catalog.by_id()
    used = {t for c in scenario.clusters for t in scenario.gpu_types_for(c) if t in types}
    return [types[t] for t in sorted(used) if types[t].gpus]


def _asked(scenario: Scenario, index: int) -> float:
    """Σ of the clusters' figures in phase ``index``; infinity once one is uncapped."""
    tl = timeline(scenario)
    total = 0.0
    for c in scenario.clusters:
        want = tl.demand(c, index)
        if c.demand == Demand.at_least or want is None:
            return math.inf
        total += want
    return total


def _network_floor_kw(scenario: Scenario, cluster, rack, link_w: dict[str, float]) -> float:
    """The least back-end network one rack of the cluster draws: its allowance outside a designed
    fabric, else the least the cluster's designs add per rack (:func:`fabric_floor_kw`) with its
    cabled links at the least power of any position it may stand at (``link_w``)."""
    if cluster.id not in scenario.designed:
        return scenario.allowance_kw(rack)
    by_id = {d.id: d for d in scenario.fabrics}
    return min(fabric_floor_kw(scenario, by_id[d], rack, link_w.get(rack.id)) for d in cluster.fabrics or [])


def least_link_w(scenario: Scenario, racks) -> dict[str, float]:
    """Rack type → the least W per cabled link of any GPU position it may stand at (the class its
    cable to the pod's network rack needs there); types no position reaches are left out."""
    ix = index_site(scenario.site)
    out: dict[str, float] = {}
    for rid, ref in ix.rows.items():
        if ref.row.network is not None:
            continue
        for i in range(ref.row.positions):
            length = ix.cable_length_m(rid, i)
            for t in racks:
                lc = ix.link_class_for(t, length)
                if lc is not None and lc.power_w_per_link < out.get(t.id, math.inf):
                    out[t.id] = lc.power_w_per_link
    return out


def fixed_facility_kw(scenario: Scenario, index: int) -> float:
    """Facility kW (design-day PUE of their building) of the pods' network racks standing in phase
    ``index`` whatever the plan: in rows online by then, outside buildings a retrofit builds."""
    tl = timeline(scenario)
    built = {r.effect.building for r in scenario.retrofits if r.effect.kind == RetrofitKind.build_structure}
    types = scenario.catalog.by_id()
    rows = {r.id: b.id for b in scenario.site.buildings for h in b.halls for r in h.rows}
    total = 0.0
    for b in scenario.site.buildings:
        for h in b.halls:
            for pod in h.pods:
                t = types.get(pod.network_rack_type) if pod.network_rack_type else None
                row = pod.network_rack.row
                if t is None or b.id in built or rows.get(row) != b.id or tl.row_on.get(row, 0) > index:
                    continue
                total += scenario.arrival_pue_in(b.id) * scenario.rack_power_kw(t)
    return total


def _by_weight(
    scenario: Scenario, index: int, budget_kw: float, k: float, link_w: dict[str, float], positions: int
) -> float:
    """The fractional knapsack of the module docstring: most GPUs whose draw fits ``budget_kw``
    (``positions``: :func:`most_positions_in_one_building`)."""
    tl = timeline(scenario)
    every = scenario.catalog.by_id()
    mine: dict[str, int] = {}
    for r in scenario.existing:
        if r.rack_type in every and not r.spare:
            mine[r.cluster] = mine.get(r.cluster, 0) + every[r.rack_type].gpus
    items = []
    for c in scenario.clusters:
        kinds = [every[t] for t in scenario.gpu_types_for(c) if t in every and every[t].gpus]
        if not kinds:
            continue
        weight = min(
            (scenario.rack_power_kw(t) + _network_floor_kw(scenario, c, t, link_w)) / t.gpus for t in kinds
        )
        want = tl.demand(c, index)
        cap = math.inf if c.demand == Demand.at_least or want is None else max(want, mine.pop(c.id, 0))
        items += _spanning_items(scenario, c, kinds, weight, cap, positions)
    items.append((k, sum(mine.values())))  # installed racks of clusters not listed
    gpus = 0.0
    for weight, cap in sorted(items):
        take = min(cap, budget_kw / weight)
        gpus += take
        budget_kw -= take * weight
        if budget_kw <= 0:
            break
    return gpus


def most_positions_in_one_building(scenario: Scenario) -> int:
    """The most GPU-row positions any one building has."""
    return max(
        (
            sum(r.positions for h in b.halls for r in h.rows if r.network is None)
            for b in scenario.site.buildings
        ),
        default=0,
    )


def _spanning_items(
    scenario: Scenario, c, kinds, weight: float, cap: float, positions: int
) -> list[tuple[float, float]]:
    """A cluster's (kW per GPU, GPUs) pieces in the knapsack: one piece (weight, cap), except for a
    designed cluster a region tier may join (scope site) asked for more than one building holds (R:
    the most GPU-row ``positions`` of a building × the most GPUs a position of its types carries;
    pods, power and cooling left out, an upper bound): beyond R it stands in two buildings, so every
    one of its g GPUs adds its region links h (the least of its designs',
    :func:`planner.rules.fabric_sizing.region_kw_per_gpu`, own and tier parts). Its least draw
    k·g up to R and (k + h)·g beyond is bounded below by its convex hull: R GPUs at k, the other
    d − R at k + h · d ÷ (d − R) (at k + h when d is open), so the fractional knapsack stays a bound."""
    if scenario.region_tier is None or not c.fabrics or scenario.scope_of(c) != Scope.site:
        return [(weight, cap)]
    room = positions * max(t.gpus / t.width for t in kinds)
    if cap <= room:
        return [(weight, cap)]
    by_id = {d.id: d for d in scenario.fabrics}
    h = min(sum(region_kw_per_gpu(scenario, by_id[d])) for d in c.fabrics)
    extra = h if math.isinf(cap) else h * cap / (cap - room)
    return [(weight, room), (weight + extra, cap - room)]


def _root_kw(scenario: Scenario) -> float:
    """Σ usable kW of the power nodes without a parent, with every retrofit that raises one."""
    roots = {
        n.id: n.usable_kw
        for b in scenario.site.buildings
        for n in [*b.power_nodes, *(x for h in b.halls for x in h.power_nodes)]
        if n.parent is None
    }
    raised = sum(
        r.effect.add_kw
        for r in scenario.retrofits
        if r.effect.kind == "raise_capacity" and r.effect.target in roots
    )
    return sum(roots.values()) + raised


def capacity_bound(scenario: Scenario) -> float | None:
    """The bound of the module docstring (objective units), or None for a min_* objective or a
    scenario without GPU rack types."""
    objective = Objective(scenario.objective)
    if not objective.maximise:
        return None
    types = _types(scenario)
    if not types:
        return None
    per_gpu = 1.0 if objective == Objective.max_gpus else max(t.pflops_bf16 / t.gpus for t in types)
    kw_per_gpu = min(scenario.rack_power_kw(t) / t.gpus for t in types)  # on the power tree
    net = scenario.allowance_kw if not any(c.fabrics for c in scenario.clusters) else (lambda t: 0.0)
    drawn_per_gpu = min((scenario.rack_power_kw(t) + net(t)) / t.gpus for t in types)  # with its network
    per_position = max(t.gpus / t.width for t in types)
    positions = sum(r.positions for b in scenario.site.buildings for h in b.halls for r in h.rows)
    room = positions * per_position
    root = _root_kw(scenario)
    every = scenario.catalog.by_id()
    installed = sum(
        every[r.rack_type].gpus for r in scenario.existing if r.rack_type in every and not r.spare
    )
    least = min((scenario.arrival_pue_in(b.id) for b in scenario.site.buildings), default=1.0)
    link_w = least_link_w(scenario, types) if scenario.designed and scenario.power_arrival else {}
    one_building = most_positions_in_one_building(scenario) if scenario.region_tier is not None else 0
    total = 0.0
    for p in range(max(1, len(scenario.phases))):
        gpus = min(installed + _asked(scenario, p), root / kw_per_gpu, room)
        arrived = scenario.power_available_kw(p)
        if arrived is not None:  # the building with the least design-day PUE draws least
            budget = max(0.0, arrived - fixed_facility_kw(scenario, p)) / least
            placed = max(0.0, budget - installed * kw_per_gpu) / drawn_per_gpu
            gpus = min(
                gpus, installed + placed, _by_weight(scenario, p, budget, kw_per_gpu, link_w, one_building)
            )
        total += math.floor(gpus + 1e-9) * per_gpu
    return total
