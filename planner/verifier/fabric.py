"""The verifier's own fabric sizing (§13), written apart from :mod:`planner.fabric` so that a
mistake in one shows as a disagreement with the other.

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

from planner.schema import FabricDesign, PlacedRack, Plan, RackType, Scenario


@dataclass
class FabricFigures:
    """One cluster's fabric as the verifier counts it."""

    design: str
    endpoints: int = 0
    switches: list[int] = field(default_factory=list)
    links: dict[str, int] = field(default_factory=dict)
    kw: float = 0.0
    capex_usd: float = 0.0
    network_racks: int = 0
    max_endpoints: int = 0
    max_hops: int = 0


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


def figures(scenario: Scenario, design: FabricDesign, racks: list[PlacedRack]) -> FabricFigures:
    """Switches per tier, links above the racks by class, kW, capex, network racks and hops."""
    types = scenario.catalog.by_id()
    sw = scenario.catalog.switch_by_id()
    classes = scenario.site.fabric.link_classes
    near = min(classes, key=lambda c: c.max_length_m)
    far = max(classes, key=lambda c: c.max_length_m)
    by_id = {c.id: c for c in classes}
    gpu_racks = [(r, types[r.rack_type]) for r in racks if r.rack_type in types and types[r.rack_type].gpus and not r.spare]
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
    if design.leaf_in_rack:
        count = len(gpu_racks)
        uplinks = 0
        for (r, _), e in zip(gpu_racks, per_rack, strict=True):
            n = math.ceil(e / design.oversubscription[0])
            uplinks += n
            links[r.link_class if r.link_class else far.id] += n
    else:
        count = math.ceil(endpoints / ports[0][0])
        if design.rail_optimized:
            rails = max((t.gpus_per_server for _, t in gpu_racks), default=1) or 1
            count = math.ceil(count / rails) * rails
        uplinks = int(count * ports[0][1])
        links[near.id] += uplinks
    counts = [count]
    for tier in range(1, design.tiers):
        top = tier == design.tiers - 1
        facing_down = radix[tier] if top else ports[tier][0]
        n = math.ceil(uplinks / facing_down)
        counts.append(n)
        if not top:
            uplinks = int(n * ports[tier][1])
            links[far.id] += uplinks
    out.switches = counts
    out.links = dict(links)
    housed = [(n, sw[m]) for tier, (n, m) in enumerate(zip(counts, design.switches, strict=True)) if tier > 0 or not design.leaf_in_rack]
    out.kw = (sum(n * s.power_w for n, s in housed) + sum(n * by_id[c].power_w_per_link for c, n in links.items())) / 1000
    out.capex_usd = sum(n * s.price_usd for n, s in housed) + sum(n * by_id[c].cost_usd_per_link for c, n in links.items())
    out.network_racks = math.ceil(sum(n * s.height_u for n, s in housed) / design.rack_units)
    out.max_hops = 1 if counts[0] <= 1 else 3 if design.tiers == 2 or counts[0] <= ports[1][0] else 5
    return out


def all_figures(scenario: Scenario, racks: Iterable[PlacedRack], picks: dict[str, str]) -> dict[str, FabricFigures]:
    """Cluster → its fabric figures, for every cluster built on a design."""
    mine: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        mine[r.cluster].append(r)
    out = {}
    for c in scenario.clusters:
        d = design_for(scenario, c.id, picks)
        if d is not None:
            out[c.id] = figures(scenario, d, mine.get(c.id, []))
    return out


def watts_per_endpoint(scenario: Scenario, design: FabricDesign, rack: RackType) -> float:
    """What the optimiser charges per endpoint of a rack type, W: each tier's switches per endpoint
    (fractional) × their power, plus the transceivers of the links above the racks per endpoint."""
    sw = scenario.catalog.switch_by_id()
    classes = scenario.site.fabric.link_classes
    near = min(classes, key=lambda c: c.max_length_m)
    far = max(classes, key=lambda c: c.max_length_m)
    radix = [sw[s].ports for s in design.switches]
    ports = _split(design, radix, rack.gpus * design.nics_per_gpu)
    watts = 0.0
    share = 1.0  # switches of this tier per endpoint
    climbing = 1.0  # uplinks leaving the tier below, per endpoint
    for tier, name in enumerate(design.switches):
        top = tier == design.tiers - 1
        share = (1.0 / ports[0][0]) if tier == 0 else climbing / (radix[tier] if top else ports[tier][0])
        if tier > 0 or not design.leaf_in_rack:
            watts += share * sw[name].power_w
        if not top:
            climbing = (ports[0][1] / ports[0][0]) if tier == 0 else climbing * ports[tier][1] / ports[tier][0]
            link = (far if design.leaf_in_rack else near) if tier == 0 else far
            watts += climbing * link.power_w_per_link
    return watts


def network_row_kw(scenario: Scenario, racks: Iterable[PlacedRack], picks: dict[str, str], pod_row: dict[str, str],
                   row_pod: dict[str, str]) -> dict[str, float]:
    """Designed-fabric power per network-rack row, kW: every GPU rack's endpoints × its design's
    watts per endpoint, charged to its pod's network-rack row."""
    types = scenario.catalog.by_id()
    out: dict[str, float] = defaultdict(float)
    memo: dict[tuple[str, str], float] = {}
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or not t.gpus or r.spare or r.row not in row_pod:
            continue
        d = design_for(scenario, r.cluster, picks)
        if d is None:
            continue
        if (d.id, t.id) not in memo:
            memo[d.id, t.id] = watts_per_endpoint(scenario, d, t) * t.gpus * d.nics_per_gpu / 1000
        out[pod_row[row_pod[r.row]]] += memo[d.id, t.id]
    return dict(out)
