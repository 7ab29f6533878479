"""Fabrics sized from their topology (§13): a folded Clos of catalog switches.

A design has 2 tiers (leaf, spine) or 3 (leaf, spine, core), a switch model per tier and a
down:up bandwidth ratio r per tier below the top. A switch of radix k at such a tier uses
d = ⌊k · r / (1 + r)⌋ ports down and u = k − d up (leaves in the GPU racks — Meta's rack
switches — take d = the rack's GPUs × NICs and u = ⌈d / r⌉). For E_p endpoints (GPUs × NICs)
in pod p:

    leaves  L = Σ_p ⌈E_p / d₁⌉ (leaves stand in their pod's network rows; a multiple of the
                               server's GPUs per pod when rail-optimised; one per GPU rack when
                               the leaves are in the racks)
    spines  S = ⌈U₁ / k₂⌉ (2 tiers) or ⌈U₁ / d₂⌉ (3 tiers), U₁ = the leaves' uplinks; sized for
                the largest build (``spines_for: largest_build``) U₁ counts the leaves rounded up
                to a power of two (every leaf's uplinks spread evenly over the spines, and the
                fabric grows to that size without recabling: DGX SuperPOD H100 leaf/spine 8/4,
                16/8, 24/16, 32/16 for 1-4 scalable units)
    cores   C = ⌈S · u₂ / k₃⌉ (3 tiers)

and the largest fabric the design can build is d₁ · k₂ endpoints (2 tiers) or d₁ · d₂ · k₃
(3 tiers): k²/2 and k³/4 for non-blocking trees of radix k (Al-Fares et al., SIGCOMM 2008;
QM9700: 2,048 and 65,536). Hops between two GPUs: 1 under one leaf, 3 within one spine group,
5 across the core.

Links, each priced and powered by its class: a GPU's link to a leaf in its own rack is in-rack
copper (``in_rack_link``, no cable length); to a leaf in a network rack it is cabled from the
rack's position (its class by cable length). Leaf-to-spine links run from each GPU rack at its
class when the leaves are in the racks, else within the network rows (the shortest class);
spine-to-core links leave the pod (single-mode, the longest class). Power: switches not in a GPU
rack plus every link's transceivers. Switches stand in network racks of ``rack_units`` at
network rows (:mod:`planner.model.fabric` places them).

A cluster standing in several buildings under a region tier (``Scenario.region_tier``) is one
tree per building, joined above: building b sends ℓ_b = ⌈E_b · g_e / (r · g_R)⌉ links (g_e the
leaf's port speed, g_R the tier switch's, r the tier's oversubscription) over fibre of b's
straight-line distance to the tier's building, on ⌈ℓ_b / k_top⌉ more top-tier switches; the tier
has ⌈Σ ℓ_b / k_R⌉ switches; hops add the tier's; the delay between two buildings is their fibre
distance through the tier's building × ``us_per_km``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.schema import (
    Cluster,
    ClusterFabric,
    FabricDesign,
    LinkClass,
    NetworkRack,
    PlacedRack,
    RackType,
    Scenario,
    SwitchModel,
)


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


def max_endpoints(
    design: FabricDesign, switches: dict[str, SwitchModel], leaf_down: int | None = None
) -> int:
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
    nb = (
        all(abs(x - 1.0) < 1e-12 for x in design.oversubscription)
        and not design.leaf_in_rack
        and len(set(p.radix)) == 1
    )
    formula = (" = k²/2" if design.tiers == 2 else " = k³/4") if nb else ""
    return f"fabric {design.id} holds at most {n:,} endpoints ({design.tiers} tiers: {how}{formula})"


def power_of_two_at_least(n: int) -> int:
    """The least power of two ≥ n (1 for n ≤ 1)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def spines_needed(design: FabricDesign, p: Ports, leaves: int, up1_per_leaf: float, up1_total: float) -> int:
    """Spines for ``leaves`` leaves (module docstring; ``spines_for``)."""
    facing = p.radix[1] if design.tiers == 2 else p.down[1]
    if design.spines_for == "largest_build" and leaves > 0:
        return math.ceil(power_of_two_at_least(leaves) * up1_per_leaf / facing - 1e-9)
    return math.ceil(up1_total / facing - 1e-9)


@dataclass
class Size:
    """Switches, links and what they cost and draw, for one cluster on one design."""

    design: str
    endpoints: int = 0
    switches: list[int] = field(default_factory=list)
    """Per tier, leaf first."""
    leaves_per_pod: dict[str, int] = field(default_factory=dict)
    """Leaves in each pod's network rows (leaves in network racks only)."""
    links: dict[str, int] = field(default_factory=dict)
    """Link class → every fabric link (GPU to leaf, leaf to spine, spine to core)."""
    kw: float = 0.0
    capex_usd: float = 0.0
    optics: int = 0
    """Transceivers: two per optical link."""
    network_racks: int = 0
    max_endpoints: int = 0
    max_hops: int = 0
    endpoints_by_building: dict[str, int] = field(default_factory=dict)
    region_links: int = 0
    """Links from the buildings' top tiers up to the region tier (clusters spanning buildings)."""
    border_switches: dict[str, int] = field(default_factory=dict)
    """Building → top-tier switches added for its region links (in the top tier's count)."""
    region_switches: int = 0
    fibre_km: float = 0.0
    """Σ region links × their building's distance to the tier's building, km."""
    latency_us: float = 0.0
    per_building: dict[str, list[int]] = field(default_factory=dict)
    """Building → its tree's switches per tier (border switches in the top tier)."""


def _classes(scenario: Scenario) -> tuple[dict[str, LinkClass], LinkClass, LinkClass]:
    classes = {c.id: c for c in scenario.site.fabric.link_classes}
    by_reach = sorted(classes.values(), key=lambda c: c.max_length_m)
    return classes, by_reach[0], by_reach[-1]


def leaf_down_of(design: FabricDesign, rack: RackType) -> int:
    """Endpoints of one GPU rack (its leaf's down ports when leaves are in the racks)."""
    return rack.gpus * design.nics_per_gpu


def rail_width(design: FabricDesign, racks: Iterable[RackType]) -> int:
    """Leaves come in multiples of this (the servers' GPUs when rail-optimised, else 1)."""
    return (max((t.gpus_per_server for t in racks), default=1) or 1) if design.rail_optimized else 1


def size(
    scenario: Scenario,
    design: FabricDesign,
    racks: list[PlacedRack],
    pod_of_row: dict[str, str] | None = None,
    spans: bool | None = None,
    share_km: float | None = None,
) -> Size:
    """Exact sizing of a design for the GPU racks of one cluster (module docstring): one block per
    building when the cluster spans buildings and the scenario has a region tier, joined by it.
    ``spans``: whether it spans (None: when its racks stand in several buildings; a phased plan
    passes what the horizon's racks say, so a spanning job's region links grow from its first
    racks); ``share_km``: one building's share of a spanning job (its fibre to the tier's building,
    km; the tier's switches are counted with the whole region)."""
    types = scenario.catalog.by_id()
    if pod_of_row is None:
        pod_of_row = scenario.site.row_pods()
    gpu_racks = [r for r in racks if r.rack_type in types and types[r.rack_type].gpus and not r.spare]
    by_building: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in gpu_racks:
        by_building[r.building].append(r)
    spanning = share_km is not None or (len(by_building) > 1 if spans is None else spans)
    if not spanning or not by_building or scenario.region_tier is None:
        out = _block(scenario, design, gpu_racks, pod_of_row)
        out.endpoints_by_building = {
            b: sum(types[r.rack_type].gpus for r in rs) * design.nics_per_gpu
            for b, rs in sorted(by_building.items())
        }
        if len(by_building) == 1:
            out.per_building = {next(iter(by_building)): list(out.switches)}
        return out
    blocks = {b: _block(scenario, design, rs, pod_of_row) for b, rs in sorted(by_building.items())}
    return _joined(scenario, design, blocks, share_km)


def tier_switch(scenario: Scenario, design: FabricDesign, tier: int) -> SwitchModel:
    """Switch model of a tier: the design's (1 leaf, 2 spine, 3 core) or the region tier's (4)."""
    sw = scenario.catalog.switch_by_id()
    if tier == 4:
        assert scenario.region_tier is not None
        return sw[scenario.region_tier.switch]
    return sw[design.switches[tier - 1]]


def building_km(scenario: Scenario) -> dict[str, tuple[float, float]]:
    """Building → its (x, y) in the region, km."""
    return {b.id: (b.location_km[0], b.location_km[1]) for b in scenario.site.buildings}


def km_between(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Straight-line distance, km."""
    return math.hypot(a[0] - b[0], a[1] - b[1])


def region_links(scenario: Scenario, design: FabricDesign, endpoints: int) -> int:
    """Links from one building's top tier up to the region tier: ⌈E_b · g_e / (r · g_R)⌉, g_e the
    endpoints' port speed (the leaf switch's), g_R the tier switch's, r the tier's oversubscription."""
    tier = scenario.region_tier
    assert tier is not None
    sw = scenario.catalog.switch_by_id()
    return math.ceil(
        endpoints * sw[design.switches[0]].port_gbps / (tier.oversubscription * sw[tier.switch].port_gbps)
        - 1e-9
    )


def latency_us(scenario: Scenario, buildings: Iterable[str]) -> float:
    """Longest one-way fibre delay between two of the buildings, through the region tier's building, µs."""
    tier = scenario.region_tier
    bs = sorted(set(buildings))
    if tier is None or len(bs) < 2:
        return 0.0
    at = building_km(scenario)
    to_tier = {b: km_between(at[b], at[tier.building]) for b in bs}
    return max(to_tier[a] + to_tier[b] for i, a in enumerate(bs) for b in bs[i + 1 :]) * tier.us_per_km


def _joined(
    scenario: Scenario, design: FabricDesign, blocks: dict[str, Size], share_km: float | None = None
) -> Size:
    """Building blocks joined by the region tier: per building ℓ_b region links (fibre of the
    building's distance to the tier's building, optics of the longest class) and ⌈ℓ_b / k_top⌉ more
    top-tier switches for their ports; ⌈Σ ℓ_b / k_R⌉ tier switches (none for one building's share,
    ``share_km`` its fibre); hops the blocks' + the tier's."""
    tier = scenario.region_tier
    assert tier is not None
    sw = scenario.catalog.switch_by_id()
    classes, _, longest = _classes(scenario)
    top, agg = sw[design.switches[-1]], sw[tier.switch]
    at = building_km(scenario)
    out = Size(design.id, max_endpoints=min(z.max_endpoints for z in blocks.values()))
    out.switches = [0] * design.tiers
    links: dict[str, int] = defaultdict(int)
    for b, z in blocks.items():
        out.endpoints += z.endpoints
        out.endpoints_by_building[b] = z.endpoints
        out.switches = [x + y for x, y in zip(out.switches, z.switches, strict=True)]
        out.leaves_per_pod.update(z.leaves_per_pod)
        for c, n in z.links.items():
            links[c] += n
        out.kw += z.kw
        out.capex_usd += z.capex_usd
        out.network_racks += z.network_racks
        out.max_hops = max(out.max_hops, z.max_hops)
        n = region_links(scenario, design, z.endpoints)
        border = math.ceil(n / top.ports - 1e-9)
        km = share_km if share_km is not None else km_between(at[b], at[tier.building])
        out.region_links += n
        out.border_switches[b] = border
        out.switches[-1] += border
        out.per_building[b] = [*z.switches[:-1], z.switches[-1] + border]
        out.fibre_km += n * km
        links[longest.id] += n
        out.capex_usd += border * top.price_usd + n * (longest.cost_usd_per_link + tier.fibre_usd_per_km * km)
        out.kw += (border * top.power_w + n * longest.power_w_per_link) / 1000
    out.region_switches = 0 if share_km is not None else math.ceil(out.region_links / agg.ports - 1e-9)
    out.network_racks += math.ceil(
        (sum(out.border_switches.values()) * top.height_u + out.region_switches * agg.height_u)
        / design.rack_units
        - 1e-9
    )
    out.capex_usd += out.region_switches * agg.price_usd
    out.kw += out.region_switches * agg.power_w / 1000
    out.links = dict(links)
    out.optics = sum(2 * n for c, n in links.items() if classes[c].optical)
    out.max_hops += tier.hops
    out.latency_us = 0.0 if share_km is not None else latency_us(scenario, blocks)
    return out


def _block(
    scenario: Scenario, design: FabricDesign, gpu_racks: list[PlacedRack], pod_of_row: dict[str, str]
) -> Size:
    """One building's fabric for the cluster's GPU racks there (module docstring)."""
    sw = scenario.catalog.switch_by_id()
    types = scenario.catalog.by_id()
    classes, shortest, longest = _classes(scenario)
    e = sum(types[r.rack_type].gpus for r in gpu_racks) * design.nics_per_gpu
    out = Size(design.id, e)
    kinds = {types[r.rack_type].gpus for r in gpu_racks}
    leaf_down = max(kinds) * design.nics_per_gpu if kinds else None
    p = ports(design, sw, leaf_down)
    out.max_endpoints = max_endpoints(design, sw, leaf_down)
    if e == 0:
        out.switches = [0] * design.tiers
        return out
    links: dict[str, int] = defaultdict(int)
    leaves, up1_per_leaf, up1_total = _leaf_tier(scenario, design, gpu_racks, pod_of_row, p, out, links)
    counts = [leaves]
    spines = spines_needed(design, p, leaves, up1_per_leaf, up1_total)
    counts.append(spines)
    if design.tiers == 3:
        up2 = int(spines * p.up[1])
        links[longest.id] += up2
        counts.append(math.ceil(up2 / p.radix[2]))
    out.switches = counts
    out.links = dict(links)
    _price(out, design, sw, classes)
    if leaves <= 1:
        out.max_hops = 1
    elif design.tiers == 2 or leaves <= p.down[1]:
        out.max_hops = 3
    else:
        out.max_hops = 5
    return out


def _leaf_tier(
    scenario: Scenario, design: FabricDesign, gpu_racks, pod_of_row, p: Ports, out: Size, links
) -> tuple[int, float, int]:
    """(leaves, uplinks per leaf, uplinks) and the GPU racks' links by class: a leaf in every GPU
    rack (GPU links in-rack copper, ⌈GPUs × NICs ÷ first oversubscription⌉ up at the rack's class),
    or per pod rail-width groups of leaves in network racks (uplinks on the shortest class)."""
    types = scenario.catalog.by_id()
    _, shortest, longest = _classes(scenario)
    if design.leaf_in_rack:
        up1_total = 0
        for r in gpu_racks:
            t = types[r.rack_type]
            links[design.in_rack_link] += t.links  # GPU to the rack's own leaf: in-rack copper
            u = math.ceil(t.gpus * design.nics_per_gpu / design.oversubscription[0])
            up1_total += u
            links[r.link_class or longest.id] += u
        return len(gpu_racks), up1_total / len(gpu_racks), up1_total
    per = rail_width(design, (types[r.rack_type] for r in gpu_racks))
    by_pod: dict[str, int] = defaultdict(int)
    for r in gpu_racks:
        t = types[r.rack_type]
        by_pod[pod_of_row.get(r.row, "")] += t.gpus * design.nics_per_gpu
        links[r.link_class or longest.id] += t.links  # GPU to a leaf in a network rack: cabled from the rack
    out.leaves_per_pod = {
        pod: per * math.ceil(math.ceil(ep / p.down[0]) / per) for pod, ep in sorted(by_pod.items())
    }
    leaves = sum(out.leaves_per_pod.values())
    up1_total = int(leaves * p.up[0])
    links[shortest.id] += up1_total
    return leaves, p.up[0], up1_total


def _price(out: Size, design: FabricDesign, sw, classes) -> None:
    """kW, capex, optics and network racks of the switches outside the GPU racks and of the links."""
    housed = [
        (n, sw[m])
        for i, (n, m) in enumerate(zip(out.switches, design.switches, strict=True))
        if not (i == 0 and design.leaf_in_rack)
    ]
    links = out.links
    out.kw = (
        sum(n * s.power_w for n, s in housed) + sum(n * classes[c].power_w_per_link for c, n in links.items())
    ) / 1000
    out.capex_usd = sum(n * s.price_usd for n, s in housed) + sum(
        n * classes[c].cost_usd_per_link for c, n in links.items()
    )
    out.optics = sum(2 * n for c, n in links.items() if classes[c].optical)
    out.network_racks = math.ceil(sum(n * s.height_u for n, s in housed) / design.rack_units)


def fabric_floor_kw(
    scenario: Scenario, design: FabricDesign, rack: RackType, link_w: float | None = None
) -> float:
    """Least kW one GPU rack of type ``rack`` adds to ``design``'s fabric, however many stand: every
    count of :func:`size` at its linear share, before rounding up (a bound, never more than the
    exact fabric). With e = GPUs × NICs endpoints and ℓ the least power of a link class the rack
    accepts (``link_w``, W per link, instead: an estimate at a given cable reach): leaves in the
    rack — its links in-rack copper, u = ⌈e ÷ r₁⌉ uplinks at ℓ; else its links at ℓ, e ÷ d₁
    leaves and u = e · u₁ ÷ d₁ uplinks on the shortest class; then u ÷ f spines (f: k₂, or d₂ with
    3 tiers) and, with 3 tiers, u · u₂ ÷ d₂ links on the longest class to u · u₂ ÷ (d₂ · k₃)
    cores."""
    sw = scenario.catalog.switch_by_id()
    classes, shortest, longest = _classes(scenario)
    e = rack.gpus * design.nics_per_gpu
    p = ports(design, sw, leaf_down_of(design, rack))
    accepted = [classes[c].power_w_per_link for c in rack.link_classes if c in classes]
    least = min(accepted, default=min(c.power_w_per_link for c in classes.values()))
    if link_w is not None:
        least = link_w
    if design.leaf_in_rack:
        u = math.ceil(e / design.oversubscription[0] - 1e-9)
        watts = rack.links * classes[design.in_rack_link].power_w_per_link + u * least
    else:
        u = e * p.up[0] / p.down[0]
        leaf = sw[design.switches[0]]
        watts = rack.links * least + e / p.down[0] * leaf.power_w + u * shortest.power_w_per_link
    facing = p.radix[1] if design.tiers == 2 else p.down[1]
    spines = u / facing
    watts += spines * sw[design.switches[1]].power_w
    if design.tiers == 3:
        up2 = spines * p.up[1]
        watts += up2 * longest.power_w_per_link + up2 / p.radix[2] * sw[design.switches[2]].power_w
    return watts / 1000


def region_kw_per_gpu(scenario: Scenario, design: FabricDesign) -> tuple[float, float]:
    """(kW per GPU in its own building, kW per GPU at the region tier's building) a GPU of a job
    joined by the region tier adds, at linear shares before rounding up (a bound, never more than
    the exact fabric): ℓ = NICs · g_e ÷ (r · g_R) region links per GPU, each with the longest
    class's transceivers and 1 ÷ k_top of a top-tier border switch, and at the tier 1 ÷ k_R of a
    tier switch. (0, 0) without a region tier."""
    tier = scenario.region_tier
    if tier is None:
        return 0.0, 0.0
    sw = scenario.catalog.switch_by_id()
    top, agg = sw[design.switches[-1]], sw[tier.switch]
    far = _classes(scenario)[2]
    per = design.nics_per_gpu * sw[design.switches[0]].port_gbps / (tier.oversubscription * agg.port_gbps)
    return per * (far.power_w_per_link + top.power_w / top.ports) / 1000, per * agg.power_w / agg.ports / 1000


def design_of(scenario: Scenario, cluster: Cluster, chosen: dict[str, str]) -> FabricDesign | None:
    """The design a cluster is built on: the plan's choice, or its only allowed design."""
    if not cluster.fabrics:
        return None
    by_id = {d.id: d for d in scenario.fabrics}
    pick = chosen.get(cluster.id) or (cluster.fabrics[0] if len(cluster.fabrics) == 1 else None)
    return by_id.get(pick) if pick else None


def fabric_sizes(
    scenario: Scenario,
    racks: Iterable[PlacedRack],
    chosen: dict[str, str],
    spanning: set[str] | None = None,
) -> dict[str, Size]:
    """Cluster → exact size on its design, for every cluster built on a design; ``spanning``: the
    clusters that span buildings (None: those whose racks stand in several)."""
    by_cluster: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        by_cluster[r.cluster].append(r)
    pod_of_row = scenario.site.row_pods()
    out = {}
    for c in scenario.clusters:
        d = design_of(scenario, c, chosen)
        if d is not None:
            spans = None if spanning is None else c.id in spanning
            out[c.id] = size(scenario, d, by_cluster.get(c.id, []), pod_of_row, spans, c.region_share_km)
    return out


def spanning_clusters(sizes: dict[str, Size]) -> set[str]:
    """Clusters whose fabric is joined by the region tier (region links sent up)."""
    return {cid for cid, z in sizes.items() if z.region_links}


def placed_by_pod(
    racks: Iterable[NetworkRack], pod_of_row: dict[str, str]
) -> tuple[int, dict[str, int], dict[str, float]]:
    """Network racks placed, and positions and kW per pod of their rows."""
    n = 0
    positions: dict[str, int] = defaultdict(int)
    kw: dict[str, float] = defaultdict(float)
    for r in racks:
        n += 1
        pod = pod_of_row.get(r.row, "")
        positions[pod] += 1
        kw[pod] += r.kw
    return n, dict(sorted(positions.items())), {p: round(v, 6) for p, v in sorted(kw.items())}


def fabric_entry(
    cluster: str, z: Size, network: Iterable[NetworkRack] = (), pod_of_row: dict[str, str] | None = None
) -> ClusterFabric:
    """The plan's record of one cluster's sized fabric and of its network racks placed."""
    n, positions, kw = placed_by_pod((r for r in network if r.cluster == cluster), pod_of_row or {})
    return ClusterFabric(
        cluster=cluster,
        design=z.design,
        endpoints=z.endpoints,
        switches=z.switches,
        leaves_per_pod=z.leaves_per_pod,
        links=z.links,
        kw=round(z.kw, 6),
        capex_usd=round(z.capex_usd, 2),
        optics=z.optics,
        network_racks=z.network_racks,
        racks_placed=n,
        positions_by_pod=positions,
        kw_by_pod=kw,
        max_endpoints=z.max_endpoints,
        max_hops=z.max_hops,
        endpoints_by_building=z.endpoints_by_building,
        region_links=z.region_links,
        region_switches=z.region_switches,
        fibre_km=round(z.fibre_km, 6),
        latency_us=round(z.latency_us, 6),
    )
