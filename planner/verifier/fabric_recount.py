"""The verifier's own fabric sizing (§13), written apart from :mod:`planner.rules.fabric_sizing` so that a
mistake in one shows as a disagreement with the other. Leaves not in the racks are counted per
pod (they stand in its network rows), every link of the fabric is counted (a GPU's link to a leaf
in its own rack as in-rack copper), and spines sized for the largest build count the leaves
rounded up to a power of two.

A folded Clos, tier by tier from the leaves up. At a tier below the top with down:up ratio r a
switch of radix k splits its ports into down = ⌊k·r/(1+r)⌋ and up = k − down (a leaf inside a
GPU rack: down = that rack's endpoints, up = ⌈down / r⌉); the top tier points every port down.
Each tier needs enough switches for the uplinks of the tier below: leaves ⌈E / down₁⌉ (one per
GPU rack when in the racks; rounded up to whole rails when rail-optimised), then
⌈links from below / (ports facing down)⌉. The largest build is the product of the down ports
below the top times the top tier's radix.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.schema import FabricDesign, PlacedRack, Plan, Scenario


@dataclass
class FabricFigures:
    """One cluster's fabric as the verifier counts it."""

    design: str
    endpoints: int = 0
    switches: list[int] = field(default_factory=list)
    leaves_per_pod: dict[str, int] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    kw: float = 0.0
    capex_usd: float = 0.0
    optics: int = 0
    network_racks: int = 0
    max_endpoints: int = 0
    max_hops: int = 0
    endpoints_by_building: dict[str, int] = field(default_factory=dict)
    region_links: int = 0
    region_switches: int = 0
    fibre_km: float = 0.0
    latency_us: float = 0.0
    per_building: dict[str, list[int]] = field(default_factory=dict)
    """Building → its tree's switches per tier (border switches in the top tier), when joined."""


def chosen(plan: Plan) -> dict[str, str]:
    """Cluster → the design the plan says it is built on."""
    return {f.cluster: f.design for f in plan.fabric or []}


def design_for(scenario: Scenario, cluster_id: str, picks: dict[str, str]) -> FabricDesign | None:
    """The design a cluster stands on: the plan's pick, or its one allowed design."""
    c = next((c for c in scenario.clusters if c.id == cluster_id), None)
    if c is None or not c.fabrics:
        return None
    name = picks.get(c.id) or (c.fabrics[0] if len(c.fabrics) == 1 else None)
    return next((d for d in scenario.fabrics if d.id == name), None)


def _split(design: FabricDesign, radix: list[int], leaf_endpoints: int | None) -> list[tuple[float, float]]:
    """(down, up) ports per switch at each tier, leaf first; the top tier all down."""
    out = []
    for tier, k in enumerate(radix):
        if tier == design.tiers - 1:
            out.append((float(k), 0.0))
        elif tier == 0 and design.leaf_in_rack and leaf_endpoints is not None:
            out.append((float(leaf_endpoints), float(math.ceil(leaf_endpoints / design.oversubscription[0]))))
        else:
            ratio = design.oversubscription[tier]
            down = math.floor(k * ratio / (1 + ratio))
            out.append((float(down), float(k - down)))
    return out


def largest_build(design: FabricDesign, scenario: Scenario, leaf_endpoints: int | None) -> int:
    """Most endpoints the design can connect: Π down ports below the top × the top tier's radix."""
    radix = [scenario.catalog.switch_by_id()[s].ports for s in design.switches]
    ports = _split(design, radix, leaf_endpoints)
    out = float(radix[-1])
    for down, _ in ports[:-1]:
        out *= down
    return int(out)


def figures(
    scenario: Scenario,
    design: FabricDesign,
    racks: list[PlacedRack],
    row_pod: dict[str, str],
    spans: bool | None = None,
    share_km: float | None = None,
) -> FabricFigures:
    """The cluster's fabric: one tree per building it stands in when a region tier joins them
    (each building's tree sends E_b·g/(r·g_tier) links, rounded up, to the tier over fibre from the
    building to the tier's, on ports of extra top-tier switches; the tier has enough switches for
    all of them), else one tree. It is joined when it spans: ``spans`` says so (None: when its racks
    stand in two buildings or more), or it is one building's share of a spanning job (``share_km``
    of fibre to the tier, whose switches are not counted here)."""
    types = scenario.catalog.by_id()
    mine = [r for r in racks if r.rack_type in types and types[r.rack_type].gpus and not r.spare]
    where = sorted({r.building for r in mine})
    tier = scenario.region_tier
    joined = share_km is not None or (len(where) >= 2 if spans is None else spans)
    if tier is None or not joined or not where:
        out = _tree(scenario, design, mine, row_pod)
        for b in where:
            out.endpoints_by_building[b] = sum(
                types[r.rack_type].gpus * design.nics_per_gpu for r in mine if r.building == b
            )
        return out
    sw = scenario.catalog.switch_by_id()
    far = max(scenario.site.fabric.link_classes, key=lambda c: c.max_length_m)
    spot = {b.id: b.location_km for b in scenario.site.buildings}
    hub = spot[tier.building] if share_km is None else (0.0, 0.0)
    top, agg = sw[design.switches[-1]], sw[tier.switch]
    trees = {b: _tree(scenario, design, [r for r in mine if r.building == b], row_pod) for b in where}
    out = FabricFigures(
        design.id, switches=[0] * design.tiers, max_endpoints=min(t.max_endpoints for t in trees.values())
    )
    links: dict[str, int] = defaultdict(int)
    extra_units = 0
    for b, t in trees.items():
        km = (
            ((spot[b][0] - hub[0]) ** 2 + (spot[b][1] - hub[1]) ** 2) ** 0.5 if share_km is None else share_km
        )
        up = math.ceil(
            t.endpoints * sw[design.switches[0]].port_gbps / tier.oversubscription / agg.port_gbps - 1e-9
        )
        extra = math.ceil(up / top.ports - 1e-9)
        out.endpoints += t.endpoints
        out.endpoints_by_building[b] = t.endpoints
        out.leaves_per_pod.update(t.leaves_per_pod)
        out.switches = [a + c for a, c in zip(out.switches, t.switches, strict=True)]
        out.switches[-1] += extra
        out.per_building[b] = [*t.switches[:-1], t.switches[-1] + extra]
        extra_units += extra * top.height_u
        for c, n in t.links.items():
            links[c] += n
        links[far.id] += up
        out.region_links += up
        out.fibre_km += up * km
        out.kw += t.kw + extra * top.power_w / 1000 + up * far.power_w_per_link / 1000
        out.capex_usd += (
            t.capex_usd + extra * top.price_usd + up * (far.cost_usd_per_link + km * tier.fibre_usd_per_km)
        )
        out.network_racks += t.network_racks
        out.max_hops = max(out.max_hops, t.max_hops + tier.hops)
    out.region_switches = math.ceil(out.region_links / agg.ports - 1e-9) if share_km is None else 0
    out.kw += out.region_switches * agg.power_w / 1000
    out.capex_usd += out.region_switches * agg.price_usd
    out.network_racks += math.ceil(
        (extra_units + out.region_switches * agg.height_u) / design.rack_units - 1e-9
    )
    out.links = dict(links)
    out.optics = sum(
        2 * n
        for c, n in links.items()
        if next(x for x in scenario.site.fabric.link_classes if x.id == c).optical
    )
    hop = {b: ((spot[b][0] - hub[0]) ** 2 + (spot[b][1] - hub[1]) ** 2) ** 0.5 for b in where}
    pairs = [hop[a] + hop[b] for a in where for b in where if a < b]
    out.latency_us = max(pairs) * tier.us_per_km if pairs and share_km is None else 0.0
    return out


def _tree(
    scenario: Scenario, design: FabricDesign, racks: list[PlacedRack], row_pod: dict[str, str]
) -> FabricFigures:
    """One tree: switches per tier, every link by class, kW, capex, network racks and hops (module
    docstring)."""
    types = scenario.catalog.by_id()
    sw = scenario.catalog.switch_by_id()
    classes = scenario.site.fabric.link_classes
    gpu_racks = [
        (r, types[r.rack_type])
        for r in racks
        if r.rack_type in types and types[r.rack_type].gpus and not r.spare
    ]
    per_rack = [t.gpus * design.nics_per_gpu for _, t in gpu_racks]
    endpoints = sum(per_rack)
    leaf_endpoints = max(per_rack) if per_rack else None
    out = FabricFigures(design.id, endpoints, max_endpoints=largest_build(design, scenario, leaf_endpoints))
    if endpoints == 0:
        out.switches = [0] * design.tiers
        return out
    radix = [sw[s].ports for s in design.switches]
    ports = _split(design, radix, leaf_endpoints)
    links: dict[str, int] = defaultdict(int)
    ends = (min(classes, key=lambda c: c.max_length_m).id, max(classes, key=lambda c: c.max_length_m).id)
    count, per_leaf_up, uplinks = _leaves(design, gpu_racks, per_rack, ports, row_pod, out, links, ends)
    out.switches = _upper_tiers(design, count, per_leaf_up, uplinks, radix, ports, links, ends[1])
    out.links = dict(links)
    _priced(out, design, sw, {c.id: c for c in classes})
    counts = out.switches
    out.max_hops = 1 if counts[0] <= 1 else 3 if design.tiers == 2 or counts[0] <= ports[1][0] else 5
    return out


def _leaves(design: FabricDesign, gpu_racks, per_rack, ports, row_pod, out: FabricFigures, links, ends):
    """The leaf tier: (leaves, uplinks per leaf, uplinks), the GPU racks' links counted by class.
    Leaves in the GPU racks take each rack's links inside it and send ⌈endpoints ÷ first
    oversubscription⌉ up; leaves in network racks: ⌈⌈endpoints in the pod ÷ leaf downlinks⌉ ÷ rails⌉
    × rails per pod, their uplinks on the nearest class."""
    near, far = ends
    if design.leaf_in_rack:
        uplinks = 0
        for (r, t), e in zip(gpu_racks, per_rack, strict=True):
            links[design.in_rack_link] += t.links  # to the leaf in its own rack: no cable
            n = math.ceil(e / design.oversubscription[0])
            uplinks += n
            links[r.link_class if r.link_class else far] += n
        return len(gpu_racks), uplinks / len(gpu_racks), uplinks
    rails = max((t.gpus_per_server for _, t in gpu_racks), default=1) or 1 if design.rail_optimized else 1
    in_pod: dict[str, int] = defaultdict(int)
    for (r, t), e in zip(gpu_racks, per_rack, strict=True):
        in_pod[row_pod.get(r.row, "")] += e
        links[r.link_class if r.link_class else far] += t.links  # from the rack to a leaf in a network rack
    for pod in sorted(in_pod):
        out.leaves_per_pod[pod] = math.ceil(math.ceil(in_pod[pod] / ports[0][0]) / rails) * rails
    count = sum(out.leaves_per_pod.values())
    uplinks = int(count * ports[0][1])
    links[near] += uplinks
    return count, ports[0][1], uplinks


def _upper_tiers(design: FabricDesign, count, per_leaf_up, uplinks, radix, ports, links, far) -> list[int]:
    """Switches per tier: each tier ⌈uplinks from below ÷ its down-facing ports⌉ (the top tier all
    ports down; spines for the largest build: the leaves rounded up to a power of two); links between
    tiers on the farthest-reaching class."""
    counts = [count]
    for tier in range(1, design.tiers):
        top = tier == design.tiers - 1
        facing_down = radix[tier] if top else ports[tier][0]
        if tier == 1 and design.spines_for == "largest_build":
            build = 1
            while build < count:
                build *= 2
            n = math.ceil(build * per_leaf_up / facing_down - 1e-9)
        else:
            n = math.ceil(uplinks / facing_down - 1e-9)
        counts.append(n)
        if not top:
            uplinks = int(n * ports[tier][1])
            links[far] += uplinks
    return counts


def _priced(out: FabricFigures, design: FabricDesign, sw, by_id) -> None:
    """kW, capex, optics and network racks of the switches housed outside the GPU racks and the links."""
    housed = [
        (n, sw[m])
        for tier, (n, m) in enumerate(zip(out.switches, design.switches, strict=True))
        if tier > 0 or not design.leaf_in_rack
    ]
    links = out.links
    out.kw = (
        sum(n * s.power_w for n, s in housed) + sum(n * by_id[c].power_w_per_link for c, n in links.items())
    ) / 1000
    out.capex_usd = sum(n * s.price_usd for n, s in housed) + sum(
        n * by_id[c].cost_usd_per_link for c, n in links.items()
    )
    out.optics = sum(2 * n for c, n in links.items() if by_id[c].optical)
    out.network_racks = math.ceil(sum(n * s.height_u for n, s in housed) / design.rack_units)


def all_figures(
    scenario: Scenario, racks: Iterable[PlacedRack], picks: dict[str, str], spanning: set[str] | None = None
) -> dict[str, FabricFigures]:
    """Cluster → its fabric figures, for every cluster built on a design; ``spanning``: the clusters
    that span buildings (None: those whose racks stand in two or more)."""
    mine: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        mine[r.cluster].append(r)
    row_pod = {r.id: r.pod for b in scenario.site.buildings for h in b.halls for r in h.rows}
    out = {}
    for c in scenario.clusters:
        d = design_for(scenario, c.id, picks)
        if d is not None:
            spans = None if spanning is None else c.id in spanning
            out[c.id] = figures(scenario, d, mine.get(c.id, []), row_pod, spans, c.region_share_km)
    return out
