"""The bounds a plan may name that the verifier can re-derive from the scenario alone, with its own
code: ``capacity`` (power, positions and demands) and ``demands`` (the sum of the demands). A
bound of another source (the solver's, an LP the planner solved) is reported as that source's
claim: the verifier checks only that it is on the right side of the plan's objective.

Capacity, for a max objective, summed over the phases (one without phases): per phase the least
of (installed GPUs + Σ cluster figures, when no cluster is at-least or uncapped), (usable kW of the
parentless power nodes plus retrofits raising them, capped by the power arrived ÷ PUE) ÷ the
least kW per GPU, every position holding the most GPUs a position can, and with power arrived the
GPUs the arrived kW ÷ PUE carries when each cluster takes GPUs at its own least kW per GPU (its
rack types', with their back-end network: the allowance off a designed fabric, on one the least
share of its fabric a rack adds) up to its figure (or its
installed GPUs, if more), the lightest first (a cluster a region tier joins, beyond what one
building's positions hold, at its region links too: :func:`_pieces`); GPUs rounded down, × the best
PFLOPS per GPU for max_pflops.
"""

from __future__ import annotations

import math

from planner.enums import Demand
from planner.schema import Scenario
from planner.verifier.rules_recount import network_kw, structure_pue
from planner.verifier.site import cable_m, site_view


def _gpu_types(scenario: Scenario) -> list:
    by_id = scenario.catalog.by_id()
    names: set[str] = set()
    for c in scenario.clusters:
        names.update(scenario.gpu_types_for(c))
    return [by_id[n] for n in sorted(names) if n in by_id and by_id[n].gpus > 0]


def _figures(scenario: Scenario, phase_index: int) -> float:
    """Σ cluster figures standing in the phase (the last named by then); inf when one is open."""
    order = [p.id for p in scenario.phases]
    total = 0.0
    for c in scenario.clusters:
        if c.demand == Demand.at_least:
            return math.inf
        if c.gpus_by_phase:
            total += next(
                (c.gpus_by_phase[p] for p in reversed(order[: phase_index + 1]) if p in c.gpus_by_phase), 0
            )
        elif c.gpus is None:
            return math.inf
        else:
            total += c.gpus
    return total


def _least_network_kw(scenario: Scenario, cluster, rack, cabled_w: dict[str, float]) -> float:
    """kW of back-end network a rack of the cluster draws at least: its allowance off a designed
    fabric; on one, the least of its designs' shares per rack (:func:`_fabric_share_kw`)."""
    if not cluster.fabrics:
        return network_kw(scenario, rack)
    designs = {d.id: d for d in scenario.fabrics}
    return min(_fabric_share_kw(scenario, designs[d], rack, cabled_w.get(rack.id)) for d in cluster.fabrics)


def _cheapest_cable_w(scenario: Scenario, kinds: list) -> dict[str, float]:
    """Rack type → the least W per link of the class its cable needs at any GPU position it reaches
    (the shortest-reach class it takes that covers the cable to the pod's network rack)."""
    site = site_view(scenario)
    out: dict[str, float] = {}
    for row_id, (_, _, row) in site.rows.items():
        if row.network is not None:
            continue
        for i in range(row.positions):
            length = cable_m(site, scenario, row_id, i)
            for t in kinds:
                if t.max_cable_m is not None and length > t.max_cable_m + 1e-9:
                    continue
                fit = [
                    site.links[c]
                    for c in t.link_classes
                    if c in site.links and site.links[c].max_length_m + 1e-9 >= length
                ]
                if fit:
                    w = min(fit, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id)).power_w_per_link
                    out[t.id] = min(out.get(t.id, math.inf), w)
    return out


def _pods_network_kw(scenario: Scenario, phase_index: int) -> float:
    """Facility kW (their building's design-day PUE) of the pods' network racks standing in the phase
    whatever is placed: rows online by then, in buildings no retrofit has to build."""
    order = [p.id for p in scenario.phases]
    built = {r.effect.building for r in scenario.retrofits if r.effect.kind == "build_structure"}
    kinds = scenario.catalog.by_id()

    def since(*phases) -> int:
        return max((order.index(p) for p in phases if p in order), default=0)

    kw = 0.0
    for b in scenario.site.buildings:
        if b.id in built:
            continue
        for h in b.halls:
            rows = {r.id: r for r in h.rows}
            for pod in h.pods:
                row = rows.get(pod.network_rack.row)
                t = kinds.get(pod.network_rack_type) if pod.network_rack_type else None
                if t is None or row is None or since(h.online_phase, row.online_phase) > phase_index:
                    continue
                kw += structure_pue(scenario, b.id, design_day=True)[0] * scenario.rack_power_kw(t)
    return kw


def _fabric_share_kw(scenario: Scenario, design, rack, cabled_w: float | None = None) -> float:
    """A rack's share of a design's fabric power with no count rounded up: e = GPUs × NICs ports; a
    switch of k ports below the top splits them d = ⌊k·r ÷ (1 + r)⌋ down, k − d up; links at
    ``cabled_w`` (else the least power of a class the rack takes) for its uplinks when the leaf is in
    the rack, else its GPU links; leaf-spine links (leaves in network racks) on the shortest class,
    spine-core links on the longest."""
    switches = scenario.catalog.switch_by_id()
    links = {c.id: c for c in scenario.site.fabric.link_classes}
    by_reach = sorted(links.values(), key=lambda c: c.max_length_m)
    own = [links[c].power_w_per_link for c in rack.link_classes if c in links]
    cheapest = min(own) if own else min(c.power_w_per_link for c in links.values())
    if cabled_w is not None:
        cheapest = cabled_w
    models = [switches[m] for m in design.switches]

    def split(i: int) -> tuple[float, float]:
        k, r = models[i].ports, design.oversubscription[i]
        down = math.floor(k * r / (1 + r))
        return down, k - down

    e = rack.gpus * design.nics_per_gpu
    if design.leaf_in_rack:
        up = math.ceil(e / design.oversubscription[0] - 1e-9)
        w = rack.links * links[design.in_rack_link].power_w_per_link + up * cheapest
    else:
        d1, u1 = split(0)
        up = e / d1 * u1
        w = rack.links * cheapest + e / d1 * models[0].power_w + up * by_reach[0].power_w_per_link
    spine_ports = models[1].ports if design.tiers == 2 else split(1)[0]
    spines = up / spine_ports
    w += spines * models[1].power_w
    if design.tiers == 3:
        to_cores = spines * split(1)[1]
        w += to_cores * by_reach[-1].power_w_per_link + to_cores / models[2].ports * models[2].power_w
    return w / 1000


def _region_w_per_gpu(scenario: Scenario, design) -> float:
    """W a GPU of a job the region tier joins adds, no count rounded up: its NICs × g_e ÷ (r × g_R)
    links up, each with optics of the longest-reach class, 1/k of a top-tier switch for its port
    and 1/k of a tier switch."""
    tier = scenario.region_tier
    switches = scenario.catalog.switch_by_id()
    leaf, top, agg = switches[design.switches[0]], switches[design.switches[-1]], switches[tier.switch]
    longest = max(scenario.site.fabric.link_classes, key=lambda c: c.max_length_m)
    links = design.nics_per_gpu * leaf.port_gbps / (tier.oversubscription * agg.port_gbps)
    return links * (longest.power_w_per_link + top.power_w / top.ports + agg.power_w / agg.ports)


def _pieces(
    scenario: Scenario, c, ts: list, per: float, most: float, slots: int
) -> list[tuple[float, float]]:
    """A cluster's (kW per GPU, GPUs) rows: (per, most), except that a designed cluster the region
    tier may join (scope site) holding more GPUs than any one building's GPU positions carry (R)
    stands in two buildings, each GPU then with its region links (h kW): its draw is at least the
    convex hull of per·g (g ≤ R) and (per + h)·g (g > R), R GPUs at per and the rest at
    per + h · most ÷ (most − R) (per + h when open); ``slots``: the most GPU-row positions of a
    building."""
    if scenario.region_tier is None or not c.fabrics or scenario.scope_of(c) != "site":
        return [(per, most)]
    room = slots * max(t.gpus / t.width for t in ts)
    if most <= room:
        return [(per, most)]
    designs = {d.id: d for d in scenario.fabrics}
    h = min(_region_w_per_gpu(scenario, designs[d]) for d in c.fabrics) / 1000
    return [(per, room), (per + (h if math.isinf(most) else h * most / (most - room)), most - room)]


def _lightest_first(
    scenario: Scenario, phase_index: int, kw: float, least_kw: float, cabled_w: dict[str, float], slots: int
) -> float:
    """GPUs ``kw`` carries, clusters taken lightest per GPU first up to their figures (module docstring;
    ``slots``: the most GPU-row positions of a building)."""
    by_id = scenario.catalog.by_id()
    order = [p.id for p in scenario.phases]
    installed: dict[str, int] = {}
    for r in scenario.existing:
        if r.rack_type in by_id and not r.spare:
            installed[r.cluster] = installed.get(r.cluster, 0) + by_id[r.rack_type].gpus
    listed = {c.id for c in scenario.clusters}
    rows = [(least_kw, sum(n for cid, n in installed.items() if cid not in listed))]
    for c in scenario.clusters:
        ts = [by_id[n] for n in scenario.gpu_types_for(c) if n in by_id and by_id[n].gpus > 0]
        if not ts:
            continue
        per = min(
            (scenario.rack_power_kw(t) + _least_network_kw(scenario, c, t, cabled_w)) / t.gpus for t in ts
        )
        if c.demand == Demand.at_least:
            figure = math.inf
        elif c.gpus_by_phase:
            figure = next(
                (c.gpus_by_phase[p] for p in reversed(order[: phase_index + 1]) if p in c.gpus_by_phase), 0
            )
        else:
            figure = math.inf if c.gpus is None else c.gpus
        rows += _pieces(scenario, c, ts, per, max(figure, installed.get(c.id, 0)), slots)
    rows.sort()
    total, left = 0.0, kw
    for per, most in rows:
        n = min(most, left / per)
        total, left = total + n, left - n * per
    return total


def recount_capacity(scenario: Scenario) -> float | None:
    """The capacity bound (module docstring); None for a min objective or without GPU types."""
    if not scenario.objective.startswith("max_"):
        return None
    kinds = _gpu_types(scenario)
    if not kinds:
        return None
    nodes = []
    for b in scenario.site.buildings:
        nodes += b.power_nodes
        for h in b.halls:
            nodes += h.power_nodes
    tops = {n.id: n.usable_kw for n in nodes if n.parent is None}
    kw = sum(tops.values()) + sum(
        getattr(r.effect, "add_kw", 0.0)
        for r in scenario.retrofits
        if r.effect.kind == "raise_capacity" and r.effect.target in tops
    )
    least_kw = min(scenario.rack_power_kw(t) / t.gpus for t in kinds)
    plain = not any(c.fabrics for c in scenario.clusters)  # else no allowance is certain
    least_drawn = min(
        (scenario.rack_power_kw(t) + (network_kw(scenario, t) if plain else 0.0)) / t.gpus for t in kinds
    )
    densest = max(t.gpus / t.width for t in kinds)
    slots = sum(row.positions for b in scenario.site.buildings for h in b.halls for row in h.rows)
    catalog = scenario.catalog.by_id()
    installed = sum(
        catalog[r.rack_type].gpus for r in scenario.existing if r.rack_type in catalog and not r.spare
    )
    pflops = 1.0 if scenario.objective == "max_gpus" else max(t.pflops_bf16 / t.gpus for t in kinds)
    designed = any(c.fabrics for c in scenario.clusters)
    cabled_w = _cheapest_cable_w(scenario, kinds) if designed and scenario.power_arrival else {}
    one_building = max(
        sum(row.positions for h in b.halls for row in h.rows if row.network is None)
        for b in scenario.site.buildings
    )
    out = 0.0
    for i in range(len(scenario.phases) or 1):
        most = min(installed + _figures(scenario, i), kw / least_kw, slots * densest)
        if scenario.power_arrival:
            arrived = 1000.0 * sum(
                s.interconnect_mw + s.generation_mw
                for s in scenario.power_arrival
                if s.phase is None or [p.id for p in scenario.phases].index(s.phase) <= i
            )
            pue = min(structure_pue(scenario, b.id, design_day=True)[0] for b in scenario.site.buildings)
            # at the least design-day PUE of any building, after the pods' network racks standing;
            # racks placed draw their back-end network too
            left = max(0.0, arrived - _pods_network_kw(scenario, i)) / pue
            most = min(
                most,
                installed + max(0.0, left - installed * least_kw) / least_drawn,
                _lightest_first(scenario, i, left, least_kw, cabled_w, one_building),
            )
        out += math.floor(most + 1e-9) * pflops
    return out


def recount_demands(scenario: Scenario) -> float | None:
    """Σ of the clusters' figures (× their best PFLOPS per GPU for max_pflops), single phase; None
    when a cluster is at-least or uncapped, for a phased scenario or a min objective."""
    if scenario.phases or scenario.objective not in ("max_gpus", "max_pflops"):
        return None
    by_id = scenario.catalog.by_id()
    total = 0.0
    for c in scenario.clusters:
        if c.gpus is None or c.demand == Demand.at_least:
            return None
        if scenario.objective == "max_gpus":
            per = 1.0
        else:
            per = max(
                (by_id[t].pflops_bf16 / by_id[t].gpus for t in scenario.gpu_types_for(c) if by_id[t].gpus),
                default=0.0,
            )
        total += c.gpus * per
    return total
