"""Fabrics sized from their topology (§13): a folded Clos of catalog switches.

A design has 2 tiers (leaf, spine) or 3 (leaf, spine, core), a switch model per tier and a
down:up bandwidth ratio r per tier below the top. A switch of radix k at such a tier uses
d = ⌊k · r / (1 + r)⌋ ports down and u = k − d up (leaves in the GPU racks — Meta's rack
switches — take d = the rack's GPUs × NICs and u = ⌈d / r⌉). For E endpoints (GPUs × NICs):

    leaves  L = ⌈E / d₁⌉ (one per GPU rack when leaves are in the racks; a multiple of the
                          server's GPUs when rail-optimised)
    spines  S = ⌈L · u₁ / k₂⌉              (2 tiers)      or ⌈L · u₁ / d₂⌉ (3 tiers)
    cores   C = ⌈S · u₂ / k₃⌉                               (3 tiers)

and the largest fabric the design can build is d₁ · k₂ endpoints (2 tiers) or d₁ · d₂ · k₃
(3 tiers): k²/2 and k³/4 for non-blocking trees of radix k (Al-Fares et al., SIGCOMM 2008;
QM9700: 2,048 and 65,536). Hops between two GPUs: 1 under one leaf, 3 within one spine group,
5 across the core.

Links: tier 0 (GPU to its first switch) are the rack type's own links, priced with the rack.
Leaf-to-spine links run from each GPU rack to its pod's network rack when the leaves are in
the racks (at the rack's link class), else within the network racks (the shortest class);
spine-to-core links leave the pod (single-mode, the longest class). Power: switches not in a
GPU rack plus every link's transceivers; switches stand in network racks of ``rack_units``.

In the optimiser a design's power is charged to the network-rack rows of the pods its GPUs
stand in, at its rate per GPU (:func:`rates`); switch counts are integers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.schema import Cluster, ClusterFabric, FabricDesign, LinkClass, PlacedRack, RackType, Scenario, SwitchModel


@dataclass
class Ports:
    """Down and up ports per switch at each tier (the top tier: all ports down)."""

    down: list[float]
    up: list[float]
    radix: list[int]


def ports(design: FabricDesign, switches: dict[str, SwitchModel], leaf_down: int | None = None) -> Ports:
    """Down/up ports per tier (``leaf_down``: a rack's endpoints when leaves are in the racks)."""
    ks = [switches[s].ports for s in design.switches]
    down, up = [], []
    for i, k in enumerate(ks):
        if i == len(ks) - 1:
            down.append(float(k))
            up.append(0.0)
            continue
        r = design.oversubscription[i]
        if i == 0 and design.leaf_in_rack and leaf_down is not None:
            d = leaf_down
            u = math.ceil(d / r)
        else:
            d = math.floor(k * r / (1 + r))
            u = k - d
        down.append(float(d))
        up.append(float(u))
    return Ports(down, up, ks)


def max_endpoints(design: FabricDesign, switches: dict[str, SwitchModel], leaf_down: int | None = None) -> int:
    """Largest fabric the design can build, endpoints: d₁·k₂ (2 tiers) or d₁·d₂·k₃ (3 tiers)."""
    p = ports(design, switches, leaf_down)
    if design.tiers == 2:
        return int(p.down[0] * p.radix[1])
    return int(p.down[0] * p.down[1] * p.radix[2])


def limit_text(design: FabricDesign, switches: dict[str, SwitchModel], leaf_down: int | None = None) -> str:
    """The design's size limit in words."""
    p = ports(design, switches, leaf_down)
    n = max_endpoints(design, switches, leaf_down)
    if design.tiers == 2:
        how = f"{p.down[0]:.0f} down ports per leaf × {p.radix[1]} spine ports"
    else:
        how = f"{p.down[0]:.0f} per leaf × {p.down[1]:.0f} per spine × {p.radix[2]} core ports"
    nb = all(abs(x - 1.0) < 1e-12 for x in design.oversubscription) and not design.leaf_in_rack and len(set(p.radix)) == 1
    formula = (" = k²/2" if design.tiers == 2 else " = k³/4") if nb else ""
    return f"fabric {design.id} holds at most {n:,} endpoints ({design.tiers} tiers: {how}{formula})"


@dataclass
class Size:
    """Switches, links and what they cost and draw, for one cluster on one design."""

    design: str
    endpoints: int = 0
    switches: list[int] = field(default_factory=list)
    """Per tier, leaf first."""
    links: dict[str, int] = field(default_factory=dict)
    """Link class → leaf-to-spine and spine-to-core links (tier-0 links are the racks')."""
    kw: float = 0.0
    capex_usd: float = 0.0
    network_racks: int = 0
    max_endpoints: int = 0
    max_hops: int = 0


def _classes(scenario: Scenario) -> tuple[dict[str, LinkClass], LinkClass, LinkClass]:
    classes = {c.id: c for c in scenario.site.fabric.link_classes}
    by_reach = sorted(classes.values(), key=lambda c: c.max_length_m)
    return classes, by_reach[0], by_reach[-1]


def leaf_down_of(design: FabricDesign, rack: RackType) -> int:
    """Endpoints of one GPU rack (its leaf's down ports when leaves are in the racks)."""
    return rack.gpus * design.nics_per_gpu


def size(scenario: Scenario, design: FabricDesign, racks: list[PlacedRack]) -> Size:
    """Exact sizing of a design for the GPU racks of one cluster (module docstring)."""
    sw = scenario.catalog.switch_by_id()
    types = scenario.catalog.by_id()
    classes, shortest, longest = _classes(scenario)
    gpu_racks = [r for r in racks if r.rack_type in types and types[r.rack_type].gpus and not r.spare]
    gpus = sum(types[r.rack_type].gpus for r in gpu_racks)
    e = gpus * design.nics_per_gpu
    out = Size(design.id, e)
    kinds = {types[r.rack_type].gpus for r in gpu_racks}
    leaf_down = max(kinds) * design.nics_per_gpu if kinds else None
    p = ports(design, sw, leaf_down)
    out.max_endpoints = max_endpoints(design, sw, leaf_down)
    if e == 0:
        out.switches = [0] * design.tiers
        return out
    links: dict[str, int] = defaultdict(int)
    if design.leaf_in_rack:
        leaves = len(gpu_racks)
        up1_total = 0
        for r in gpu_racks:
            u = math.ceil(types[r.rack_type].gpus * design.nics_per_gpu / design.oversubscription[0])
            up1_total += u
            links[r.link_class or longest.id] += u
    else:
        leaves = math.ceil(e / p.down[0])
        if design.rail_optimized:
            per_server = max((types[r.rack_type].gpus_per_server for r in gpu_racks), default=1) or 1
            leaves = per_server * math.ceil(leaves / per_server)
        up1_total = int(leaves * p.up[0])
        links[shortest.id] += up1_total
    counts = [leaves]
    if design.tiers == 2:
        counts.append(math.ceil(up1_total / p.radix[1]))
    else:
        spines = math.ceil(up1_total / p.down[1])
        counts.append(spines)
        up2 = int(spines * p.up[1])
        links[longest.id] += up2
        counts.append(math.ceil(up2 / p.radix[2]))
    out.switches = counts
    out.links = dict(links)
    housed = [(n, sw[m]) for i, (n, m) in enumerate(zip(counts, design.switches, strict=True)) if not (i == 0 and design.leaf_in_rack)]
    out.kw = (sum(n * s.power_w for n, s in housed) + sum(n * classes[c].power_w_per_link for c, n in links.items())) / 1000
    out.capex_usd = sum(n * s.price_usd for n, s in housed) + sum(n * classes[c].cost_usd_per_link for c, n in links.items())
    out.network_racks = math.ceil(sum(n * s.height_u for n, s in housed) / design.rack_units)
    if leaves <= 1:
        out.max_hops = 1
    elif design.tiers == 2 or leaves <= p.down[1]:
        out.max_hops = 3
    else:
        out.max_hops = 5
    return out


@dataclass
class Rates:
    """A design's figures per GPU for the optimiser (fractional switches)."""

    kw_per_gpu: float
    """Switch and transceiver power per GPU, kW (leaves in racks excluded)."""
    per_endpoint: list[float]
    """Switches per endpoint, per tier."""


def rates(scenario: Scenario, design: FabricDesign, rack: RackType) -> Rates:
    """Per-GPU power of a design with racks of one type (module docstring): the fractional share of
    each tier's switches and of the links above the racks."""
    sw = scenario.catalog.switch_by_id()
    classes, shortest, longest = _classes(scenario)
    leaf_down = leaf_down_of(design, rack)
    p = ports(design, sw, leaf_down)
    per = [1.0 / p.down[0]]
    if design.tiers == 2:
        per.append(p.up[0] / (p.down[0] * p.radix[1]))
    else:
        per.append(p.up[0] / (p.down[0] * p.down[1]))
        per.append(p.up[0] * p.up[1] / (p.down[0] * p.down[1] * p.radix[2]))
    w = sum(x * sw[m].power_w for i, (x, m) in enumerate(zip(per, design.switches, strict=True)) if not (i == 0 and design.leaf_in_rack))
    # links above the racks: leaf uplinks (the rack's class if leaves are in racks: charged at the
    # longest class's power as an upper figure) and spine uplinks (single-mode)
    up1 = p.up[0] / p.down[0]
    w += up1 * (longest.power_w_per_link if design.leaf_in_rack else shortest.power_w_per_link)
    if design.tiers == 3:
        w += up1 * p.up[1] / p.down[1] * longest.power_w_per_link
    return Rates(w * design.nics_per_gpu / 1000, per)


def design_of(scenario: Scenario, cluster: Cluster, chosen: dict[str, str]) -> FabricDesign | None:
    """The design a cluster is built on: the plan's choice, or its only allowed design."""
    if not cluster.fabrics:
        return None
    by_id = {d.id: d for d in scenario.fabrics}
    pick = chosen.get(cluster.id) or (cluster.fabrics[0] if len(cluster.fabrics) == 1 else None)
    return by_id.get(pick) if pick else None


def fabric_sizes(scenario: Scenario, racks: Iterable[PlacedRack], chosen: dict[str, str]) -> dict[str, Size]:
    """Cluster → exact size on its design, for every cluster built on a design."""
    by_cluster: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        by_cluster[r.cluster].append(r)
    out = {}
    for c in scenario.clusters:
        d = design_of(scenario, c, chosen)
        if d is not None:
            out[c.id] = size(scenario, d, by_cluster.get(c.id, []))
    return out


def network_kw_by_pod(scenario: Scenario, racks: Iterable[PlacedRack], chosen: dict[str, str], pod_of_row: dict[str, str]) -> dict[str, float]:
    """Fabric power charged to each pod's network-rack row: Σ GPUs there × the design's kW per GPU."""
    types = scenario.catalog.by_id()
    clusters = {c.id: c for c in scenario.clusters}
    out: dict[str, float] = defaultdict(float)
    cache: dict[tuple[str, str], float] = {}
    for r in racks:
        c = clusters.get(r.cluster)
        t = types.get(r.rack_type)
        if c is None or t is None or not t.gpus or r.spare or r.row not in pod_of_row:
            continue
        d = design_of(scenario, c, chosen)
        if d is None:
            continue
        key = (d.id, t.id)
        if key not in cache:
            cache[key] = rates(scenario, d, t).kw_per_gpu
        out[pod_of_row[r.row]] += cache[key] * t.gpus
    return dict(out)


def fabric_entry(cluster: str, z: Size) -> ClusterFabric:
    """The plan's record of one cluster's sized fabric."""
    return ClusterFabric(cluster=cluster, design=z.design, endpoints=z.endpoints, switches=z.switches, links=z.links, kw=round(z.kw, 6),
                         capex_usd=round(z.capex_usd, 2), network_racks=z.network_racks, max_endpoints=z.max_endpoints, max_hops=z.max_hops)
