"""Reliability (§11): blast radius, interruption rates, checkpoints, goodput, storage and spares.

**Blast radius** of an element: the GPUs of each cluster it takes down when it fails.

- A power node f: rows left with no live feed (every feed in subtree(f)) lose all their racks.
  Rows f *hits* (some feed in subtree(f), some still live) keep power, but their racks follow
  their cluster's failover policy: ``cap`` racks are capped to ``cap_ratio``, ``shed`` racks may
  be shed (SPEC §4). N-1 holds when every surviving node carries, with those racks at the power
  their policy leaves them and every other rack at planning power, at most its usable kW, and
  no redundant row loses every feed.
- A cooling zone or liquid loop failing beyond its redundant units, a pod (its network), a row:
  every rack in its rows.

**Interruptions.** Each cause has a rate per unit (GPU, server, link, rack), its count over the
reference window divided by (hours × units of the reference cluster); a cluster's rate is
Σ causes rate × its units, and MTBF = 1 / rate (h). Default: Llama 3 Table 5 (419 unexpected
interruptions in 54 days on 16,384 GPUs), so a 16,384-GPU Grand Teton cluster reproduces the
paper's 54 · 24 / 419 = 3.09 h.

**Checkpoints and goodput** (first order, Young 1974 / Daly 2006): checkpoint write time
C = size / write bandwidth of the cluster's storage racks; interval τ = √(2 · MTBF · C);
goodput = 1 − C/τ − (τ/2 + R)/MTBF = 1 − √(2C/MTBF) − R/MTBF (R: restart time). A goodput
target G therefore needs C ≤ MTBF/2 · (1 − R/MTBF − G)², hence a write bandwidth, hence storage
racks.

**Spares** (Poisson): racks fail independently at the per-rack rate λ and are repaired in T
hours, so racks down at once ~ Poisson(N · λ · T); the spares are the least s with
P(down ≤ s) ≥ the availability target.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from planner.enums import FailoverPolicy, Scale
from planner.schema import Cluster, PlacedRack, RackType, Reliability, Scenario
from planner.site_index import SiteIndex, index_site

TOL = 1e-6


# ------------------------------------------------------------------ interruption rates


def unit_rates(rel: Reliability) -> list[tuple[str, Scale, frozenset[str] | None, float]]:
    """(cause, scale, link classes or None, rate per unit-hour) of every cause."""
    ref = rel.reference
    if rel.node_failures_per_1000_node_days is not None:
        return [("node-failure", Scale.server, None, rel.node_failures_per_1000_node_days / 1000 / 24)]
    hours = ref.days * 24
    units = {Scale.gpu: ref.gpus, Scale.server: ref.gpus / ref.gpus_per_server, Scale.rack: ref.gpus / ref.gpus_per_rack,
             Scale.link: ref.gpus * ref.links_per_gpu}
    return [(c.id, c.scale, frozenset(c.link_classes) if c.link_classes else None, c.count / (hours * units[c.scale]))
            for c in rel.causes]


@dataclass
class Units:
    """What can fail in a set of GPU racks."""

    gpus: int = 0
    servers: int = 0
    racks: int = 0
    links: dict[str | None, int] | None = None

    def add(self, t: RackType, link_class: str | None, n: int = 1) -> None:
        self.gpus += t.gpus * n
        self.servers += t.servers_per_rack * n
        self.racks += n
        links = (t.links_per_server * t.servers_per_rack + t.links_per_rack) * n
        if self.links is None:
            self.links = {}
        self.links[link_class] = self.links.get(link_class, 0) + links


def rate_per_hour(rel: Reliability, u: Units) -> float:
    """Σ causes rate × units: interruptions per hour."""
    total = 0.0
    for _, scale, classes, r in unit_rates(rel):
        if scale == Scale.gpu:
            total += r * u.gpus
        elif scale == Scale.server:
            total += r * u.servers
        elif scale == Scale.rack:
            total += r * u.racks
        else:
            total += r * sum(n for c, n in (u.links or {}).items() if classes is None or c in classes)
    return total


def units_of(scenario: Scenario, racks: Iterable[PlacedRack]) -> Units:
    """Units of the GPU racks among ``racks``."""
    types = scenario.catalog.by_id()
    u = Units(links={})
    for r in racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus:
            u.add(t, r.link_class)
    return u


def planned_units(scenario: Scenario, cluster: Cluster, gpus: int | None = None) -> Units | None:
    """Units of a cluster before placement: its GPUs in racks of its first GPU rack type."""
    types = scenario.catalog.by_id()
    kinds = [types[t] for t in scenario.gpu_types_for(cluster) if types[t].gpus]
    want = gpus if gpus is not None else cluster.gpus
    if not kinds or not want:
        return None
    t = kinds[0]
    u = Units(links={})
    u.add(t, None, math.ceil(want / t.gpus))
    return u


# ------------------------------------------------------------------ checkpoints, goodput, storage, spares


@dataclass
class Goodput:
    """First-order checkpoint figures of a cluster (module docstring); times in hours."""

    mtbf_h: float
    checkpoint_h: float | None
    interval_h: float | None
    goodput: float | None


def goodput(mtbf_h: float, size_gb: float | None, write_gb_per_s: float, restart_h: float) -> Goodput:
    """C = size / bandwidth, τ = √(2 · MTBF · C), goodput = 1 − C/τ − (τ/2 + R)/MTBF (≥ 0)."""
    if size_gb is None or write_gb_per_s <= 0 or not math.isfinite(mtbf_h):
        return Goodput(mtbf_h, None, None, None if math.isfinite(mtbf_h) or size_gb is None else 1.0)
    c = size_gb / write_gb_per_s / 3600
    tau = math.sqrt(2 * mtbf_h * c)
    g = 1 - c / tau - (tau / 2 + restart_h) / mtbf_h if tau > 0 else 1 - restart_h / mtbf_h
    return Goodput(mtbf_h, c, tau, max(0.0, g))


def write_needed_gb_per_s(mtbf_h: float, size_gb: float, restart_h: float, target: float) -> float | None:
    """Write bandwidth for a goodput target: C = MTBF/2 · (1 − R/MTBF − G)², bandwidth = size / C;
    None when the restart time alone already costs more than 1 − G."""
    slack = 1 - restart_h / mtbf_h - target
    if slack <= 0:
        return None
    c_h = mtbf_h / 2 * slack * slack
    return size_gb / (c_h * 3600)


def storage_needs(scenario: Scenario, cluster: Cluster) -> tuple[int, list[str]]:
    """Storage racks a cluster needs (its ``storage_racks`` or more, for its asks) and why."""
    types = scenario.catalog.by_id()
    st = types.get(cluster.storage_rack_type)
    need = cluster.storage_racks
    why: list[str] = []
    if st is None:
        return need, why
    if cluster.storage_pb is not None and st.storage_capacity_pb > 0:
        n = math.ceil(cluster.storage_pb / st.storage_capacity_pb - 1e-9)
        why.append(f"{cluster.storage_pb:g} PB: {n} racks of {st.storage_capacity_pb:g} PB")
        need = max(need, n)
    gbps = cluster.storage_write_gb_per_s
    if cluster.goodput_target is not None:
        u = planned_units(scenario, cluster)
        rate = rate_per_hour(scenario.reliability, u) if u else 0.0
        if rate > 0:
            bw = write_needed_gb_per_s(1 / rate, cluster.checkpoint_gb_per_gpu * cluster.gpus, cluster.restart_min / 60, cluster.goodput_target)
            if bw is not None:
                why.append(f"goodput {cluster.goodput_target:g} at MTBF {1 / rate:.2f} h: {bw:,.1f} GB/s")
                gbps = max(gbps or 0.0, bw)
    if gbps and st.storage_write_gb_per_s > 0:
        n = math.ceil(gbps / st.storage_write_gb_per_s - 1e-9)
        why.append(f"{gbps:,.1f} GB/s: {n} racks of {st.storage_write_gb_per_s:g} GB/s")
        need = max(need, n)
    return need, why


def goodput_reachable(scenario: Scenario, cluster: Cluster) -> str | None:
    """Why a cluster's goodput target cannot be met by any storage (restart time alone too long), or None."""
    if cluster.goodput_target is None:
        return None
    u = planned_units(scenario, cluster)
    rate = rate_per_hour(scenario.reliability, u) if u else 0.0
    if rate <= 0:
        return None
    mtbf = 1 / rate
    if write_needed_gb_per_s(mtbf, cluster.checkpoint_gb_per_gpu * cluster.gpus, cluster.restart_min / 60, cluster.goodput_target) is None:
        best = 1 - cluster.restart_min / 60 / mtbf
        return (f"goodput {cluster.goodput_target:g} is out of reach: with MTBF {mtbf:.2f} h a restart of {cluster.restart_min:g} min "
                f"alone leaves at most {best:.4f}")
    return None


def poisson_quantile(mean: float, p: float) -> int:
    """Least s with P(Poisson(mean) ≤ s) ≥ p."""
    if mean <= 0:
        return 0
    term = math.exp(-mean)
    cdf = term
    s = 0
    while cdf < p - 1e-15 and s < 1_000_000:
        s += 1
        term *= mean / s
        cdf += term
    return s


def spares_needed(scenario: Scenario, cluster: Cluster) -> int:
    """Hot-spare racks for a cluster's availability target (module docstring); 0 without one."""
    if cluster.spare_availability is None:
        return 0
    u = planned_units(scenario, cluster)
    if u is None or u.racks == 0:
        return 0
    per_rack = rate_per_hour(scenario.reliability, u) / u.racks
    return poisson_quantile(u.racks * per_rack * cluster.repair_hours, cluster.spare_availability)


# ------------------------------------------------------------------ blast radius


@dataclass
class Blast:
    """What one element's failure does: GPUs per cluster lost, capped and shed."""

    kind: str
    id: str
    lost: dict[str, int]
    capped: dict[str, int]
    shed: dict[str, int]
    n1_holds: bool | None = None

    @property
    def gpus_lost(self) -> int:
        return sum(self.lost.values())


def rows_of_feed(ix: SiteIndex) -> dict[str, list[str]]:
    """Feed (leaf power node) → the rows it feeds."""
    out: dict[str, list[str]] = defaultdict(list)
    for rid, ref in ix.rows.items():
        for f in ref.row.feeds:
            out[f].append(rid)
    return out


def node_failure_rows(ix: SiteIndex, node: str, by_feed: dict[str, list[str]] | None = None) -> tuple[set[str], set[str]]:
    """(rows a node's failure leaves with no live feed, rows it hits but that keep a live feed)."""
    dead = ix.subtree(node)
    by_feed = by_feed if by_feed is not None else rows_of_feed(ix)
    affected = {r for f in dead for r in by_feed.get(f, ())}
    down = {r for r in affected if all(f in dead for f in ix.rows[r].row.feeds)}
    return down, affected - down


def domain_rows(ix: SiteIndex) -> dict[str, dict[str, list[str]]]:
    """Kind → element → its rows, for cooling zones (air zones and liquid loops), pods and rows:
    what each takes down when it fails."""
    zones: dict[str, list[str]] = defaultdict(list)
    pods: dict[str, list[str]] = defaultdict(list)
    for rid, ref in ix.rows.items():
        zones[ref.row.air_zone].append(rid)
        if ref.row.liquid_loop:
            zones[ref.row.liquid_loop].append(rid)
        pods[ref.row.pod].append(rid)
    return {"cooling_zone": dict(zones), "pod": dict(pods), "row": {rid: [rid] for rid in ix.rows}}


def blast_radius(scenario: Scenario, racks: list[PlacedRack], ix: SiteIndex | None = None) -> list[Blast]:
    """Blast radius of every power node that can fail, cooling zone, pod and row (module
    docstring), over the racks standing at the end of the plan."""
    from planner.kpis import network_racks

    ix = ix or index_site(scenario.site)
    types = scenario.catalog.by_id()
    policy = {c.id: (c.on_power_failure, c.cap_ratio) for c in scenario.clusters}
    gpus_in: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # row → cluster → GPUs
    kw_full: dict[str, float] = defaultdict(float)
    kw_policy: dict[str, float] = defaultdict(float)
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or r.row not in ix.rows:
            continue
        kw = scenario.rack_power_kw(t)
        kw_full[r.row] += kw
        pol, ratio = policy.get(r.cluster, (FailoverPolicy.keep, 1.0))
        kw_policy[r.row] += kw * pol.factor(ratio)
        if t.gpus:
            gpus_in[r.row][r.cluster] += t.gpus
    for _, row, t in network_racks(scenario):
        kw_full[row] += scenario.rack_power_kw(t)
        kw_policy[row] += scenario.rack_power_kw(t)
    by_pol: dict[str, dict[str, dict[str, int]]] = {"cap": defaultdict(dict), "shed": defaultdict(dict)}
    for row, per in gpus_in.items():
        for c, g in per.items():
            pol = policy.get(c, (FailoverPolicy.keep, 1.0))[0]
            if pol != FailoverPolicy.keep:
                by_pol[pol.value][row][c] = g
    under = {f: ix.ancestors(f) for ref in ix.rows.values() for f in ref.row.feeds}
    by_feed = rows_of_feed(ix)

    def add(out: dict[str, float], row: str, kw: float, dead: set[str], sign: float) -> bool:
        """Spread ``kw`` of a row over its live feeds' nodes into ``out``; False if none is live."""
        live = [f for f in ix.rows[row].row.feeds if f not in dead]
        for f in live:
            for v in under[f]:
                out[v] += sign * kw / len(live)
        return bool(live)

    normal: dict[str, float] = defaultdict(float)
    for row, kw in kw_full.items():
        add(normal, row, kw, set(), 1.0)
    out: list[Blast] = []
    for fid, node in ix.power_nodes.items():
        if not node.can_fail:
            continue
        dead = ix.subtree(fid)
        down, hit = node_failure_rows(ix, fid, by_feed)
        affected = sorted(down | hit)
        lost: dict[str, int] = defaultdict(int)
        capped: dict[str, int] = defaultdict(int)
        shed: dict[str, int] = defaultdict(int)
        holds = True
        change: dict[str, float] = defaultdict(float)
        for rid in affected:
            add(change, rid, kw_full.get(rid, 0.0), set(), -1.0)
            if not add(change, rid, kw_policy.get(rid, 0.0), dead, 1.0):  # no live feed: the row drops
                for c, g in gpus_in.get(rid, {}).items():
                    lost[c] += g
                if ix.rows[rid].row.redundant and kw_full.get(rid, 0.0) > TOL:
                    holds = False
                continue
            for c, g in by_pol["cap"].get(rid, {}).items():
                capped[c] += g
            for c, g in by_pol["shed"].get(rid, {}).items():
                shed[c] += g
        for v, d in change.items():
            if v not in dead and d > TOL and normal.get(v, 0.0) + d > ix.power_nodes[v].usable_kw + TOL:
                holds = False
        out.append(Blast("power_node", fid, dict(lost), dict(capped), dict(shed), holds))
    for kind, groups in domain_rows(ix).items():
        for eid, rows in groups.items():
            lost = defaultdict(int)
            for rid in rows:
                for c, g in gpus_in.get(rid, {}).items():
                    lost[c] += g
            out.append(Blast(kind, eid, dict(lost), {}, {}, None))
    order = {"power_node": 0, "cooling_zone": 1, "pod": 2, "row": 3}
    out.sort(key=lambda b: (-b.gpus_lost, -sum(b.shed.values()) - sum(b.capped.values()), order[b.kind], b.id))
    return out


def cluster_gpus(scenario: Scenario, racks: Iterable[PlacedRack]) -> dict[str, int]:
    """GPUs per cluster."""
    types = scenario.catalog.by_id()
    out: dict[str, int] = defaultdict(int)
    for r in racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus:
            out[r.cluster] += t.gpus
    return dict(out)


# ------------------------------------------------------------------ the plan's report


def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None else round(x, nd)


def reliability_report(scenario: Scenario, racks: list[PlacedRack], ix: SiteIndex | None = None, blasts: list[Blast] | None = None):
    """The plan's reliability section: blast radius of every element that takes something down,
    and per cluster its MTBF, checkpoint interval and goodput (module docstring). ``blasts``: the
    blast radius when the caller already has it."""
    from planner.plan import BlastRow, ClusterReliability, ReliabilityReport

    ix = ix or index_site(scenario.site)
    types = scenario.catalog.by_id()
    blasts = blasts if blasts is not None else blast_radius(scenario, racks, ix)
    totals = cluster_gpus(scenario, racks)
    worst: dict[tuple[str, str], float] = defaultdict(float)
    for b in blasts:
        key = {"power_node": "power", "cooling_zone": "zone", "pod": "pod"}.get(b.kind)
        if key is None:
            continue
        for c, g in {**b.lost, **{k: b.lost.get(k, 0) + v for k, v in b.shed.items()}}.items():
            if totals.get(c):
                worst[c, key] = max(worst[c, key], g / totals[c])
    rows = []
    by_cluster: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        by_cluster[r.cluster].append(r)
    for c in scenario.clusters:
        mine = by_cluster.get(c.id, [])
        u = units_of(scenario, mine)
        rate = rate_per_hour(scenario.reliability, u)
        mtbf = 1 / rate if rate > 0 else None
        store = [types[r.rack_type] for r in mine if r.rack_type in types and not types[r.rack_type].gpus and types[r.rack_type].storage_write_gb_per_s > 0]
        bw = sum(t.storage_write_gb_per_s for t in store)
        size = c.checkpoint_gb_per_gpu * u.gpus if c.checkpoint_gb_per_gpu is not None and u.gpus else None
        g = goodput(mtbf, size, bw, c.restart_min / 60) if mtbf is not None else None
        rows.append(ClusterReliability(
            cluster=c.id, gpus=u.gpus, mtbf_h=_r(mtbf), interruptions_per_day=round(24 * rate, 6), storage_racks=len(store),
            write_gb_per_s=round(bw, 6), checkpoint_s=_r(g.checkpoint_h * 3600 if g and g.checkpoint_h is not None else None),
            interval_h=_r(g.interval_h if g else None), goodput=_r(g.goodput if g else None),
            gpu_hours_lost_per_day=_r(u.gpus * 24 * (1 - g.goodput) if g and g.goodput is not None else None),
            spare_racks=sum(1 for r in mine if getattr(r, "spare", False)),
            worst_power_share=round(worst[c.id, "power"], 6), worst_zone_share=round(worst[c.id, "zone"], 6),
            worst_pod_share=round(worst[c.id, "pod"], 6)))
    table = [BlastRow(kind=b.kind, id=b.id, gpus_lost=b.gpus_lost, lost=b.lost, capped=b.capped, shed=b.shed, n1_holds=b.n1_holds)
             for b in blasts if b.lost or b.capped or b.shed or b.n1_holds is False]
    return ReliabilityReport(clusters=rows, blast_radius=table)


def blast_states(scenario: Scenario, racks: list[PlacedRack], kind: str, element: str, ix: SiteIndex | None = None) -> dict[tuple[str, int], str]:
    """(row, position) → "goes dark", "capped" or "may be shed" for every rack one element's
    failure affects (module docstring); racks it leaves running are absent."""
    ix = ix or index_site(scenario.site)
    policy = {c.id: c.on_power_failure for c in scenario.clusters}
    down: set[str] = set()
    hit: set[str] = set()
    if kind == "power_node" and element in ix.power_nodes:
        down, hit = node_failure_rows(ix, element)
    elif kind in ("cooling_zone", "pod", "row"):
        down = set(domain_rows(ix)[kind].get(element, []))
    out: dict[tuple[str, int], str] = {}
    for r in racks:
        if r.row in down:
            out[r.row, r.position] = "goes dark"
        elif r.row in hit and policy.get(r.cluster, FailoverPolicy.keep) != FailoverPolicy.keep:
            out[r.row, r.position] = "capped" if policy[r.cluster] == FailoverPolicy.cap else "may be shed"
    return out
