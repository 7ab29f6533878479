"""Reliability (§11): blast radius and the plan's reliability report.

**Blast radius** of an element: the GPUs of each cluster it takes down when it fails.

- A power node f: rows left with no live feed (every feed in subtree(f)) lose all their racks.
  Rows f *hits* (some feed in subtree(f), some still live) keep power, but their racks follow
  their cluster's failover policy: ``cap`` racks are capped to ``cap_ratio``, ``shed`` racks may
  be shed (SPEC §4). N-1 holds when every surviving node carries, with those racks at the power
  their policy leaves them and every other rack at planning power, at most its usable kW, and
  no redundant row loses every feed.
- A cooling zone or liquid loop failing beyond its redundant units, a pod (its network), a row:
  every rack in its rows.

Interruption rates, checkpoints, goodput, storage and spares: :mod:`planner.input.asks`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from planner.enums import FailoverPolicy
from planner.input.asks import cluster_jobs, domain_in_service, goodput
from planner.input.site_index import SiteIndex, index_site, network_racks
from planner.rules.backup import _loads as building_gpus
from planner.rules.backup import choose_backup, outage_rates
from planner.schema import BlastRow, ClusterReliability, NetworkRack, PlacedRack, ReliabilityReport, Scenario

TOL = 1e-6


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
    during: str | None = None
    """Kind ``maintenance``: the node out for maintenance while ``id`` fails (§21)."""

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


def node_failure_rows(
    ix: SiteIndex, node: str, by_feed: dict[str, list[str]] | None = None
) -> tuple[set[str], set[str]]:
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


def blast_radius(
    scenario: Scenario,
    racks: list[PlacedRack],
    ix: SiteIndex | None = None,
    network: Iterable[NetworkRack] = (),
) -> list[Blast]:
    """Blast radius of every power node that can fail, cooling zone, pod and row (module
    docstring), over the racks standing at the end of the plan and the designed fabrics' network
    racks (their load moves with their rows' feeds like any rack's; never capped or shed)."""

    ix = ix or index_site(scenario.site)
    loads = _Loads(scenario, racks, ix, network)
    out = [loads.node_failure(fid) for fid, node in ix.power_nodes.items() if node.can_fail]
    kept = {
        n: ix.subtree(n)
        for n, node in ix.power_nodes.items()
        if scenario.maintained(node.kind, ix.node_building.get(n))
    }
    out += [  # §21: a failure while a node of a maintained class is out
        loads.during_maintenance(mid, fid, under)
        for mid, under in kept.items()
        for fid, node in ix.power_nodes.items()
        if fid != mid and node.can_fail and fid not in under
    ]
    for kind, groups in domain_rows(ix).items():
        for eid, rows in groups.items():
            lost: dict[str, int] = defaultdict(int)
            for rid in rows:
                for c, g in loads.gpus_in.get(rid, {}).items():
                    lost[c] += g
            out.append(Blast(kind, eid, dict(lost), {}, {}, None))
    out.sort(key=_blast_order)
    return out


class _Loads:
    """Per row: its racks' kW in full and at their failover policy's power, each cluster's GPUs
    there (hot spares not counted: a failure there costs a spare, not the job); nodes' normal loads."""

    def __init__(
        self, scenario: Scenario, racks: list[PlacedRack], ix: SiteIndex, network: Iterable[NetworkRack]
    ):
        self.ix = ix
        types = scenario.catalog.by_id()
        self.policy = {c.id: (c.on_power_failure, c.cap_ratio) for c in scenario.clusters}
        self.gpus_in: dict[str, dict[str, int]] = defaultdict(
            lambda: defaultdict(int)
        )  # row → cluster → GPUs
        self.kw_full: dict[str, float] = defaultdict(float)
        self.kw_policy: dict[str, float] = defaultdict(float)
        kw_of = {t.id: scenario.rack_power_kw(t) for t in scenario.catalog.rack_types}
        for r in racks:
            t = types.get(r.rack_type)
            if t is None or r.row not in ix.rows:
                continue
            kw = kw_of[t.id]
            self.kw_full[r.row] += kw
            pol, ratio = self.policy.get(r.cluster, (FailoverPolicy.keep, 1.0))
            self.kw_policy[r.row] += kw * pol.factor(ratio)
            if t.gpus and not r.spare:
                self.gpus_in[r.row][r.cluster] += t.gpus
        self._add_network(scenario, network)
        self.by_pol = self._by_policy()
        self.under = {f: ix.ancestors(f) for ref in ix.rows.values() for f in ref.row.feeds}
        self.by_feed = rows_of_feed(ix)
        self.normal: dict[str, float] = defaultdict(float)
        for row, kw in self.kw_full.items():
            self.add(self.normal, row, kw, set(), 1.0)

    def _add_network(self, scenario: Scenario, network: Iterable[NetworkRack]) -> None:
        """Pods' and designed fabrics' network racks: their load moves with their rows' feeds, never capped or
        shed."""
        for _, row, t in network_racks(scenario):
            self.kw_full[row] += scenario.rack_power_kw(t)
            self.kw_policy[row] += scenario.rack_power_kw(t)
        for nr in network:
            if nr.row in self.ix.rows:
                self.kw_full[nr.row] += nr.kw
                self.kw_policy[nr.row] += nr.kw

    def _by_policy(self) -> dict[str, dict[str, dict[str, int]]]:
        """ "cap" and "shed" → row → cluster → GPUs of clusters with that failover policy."""
        by_pol: dict[str, dict[str, dict[str, int]]] = {"cap": defaultdict(dict), "shed": defaultdict(dict)}
        for row, per in self.gpus_in.items():
            for c, g in per.items():
                pol = self.policy.get(c, (FailoverPolicy.keep, 1.0))[0]
                if pol != FailoverPolicy.keep:
                    by_pol[pol.value][row][c] = g
        return by_pol

    def add(self, out: dict[str, float], row: str, kw: float, dead: set[str], sign: float) -> bool:
        """Spread ``kw`` of a row over its live feeds' nodes into ``out``; False if none is live."""
        live = [f for f in self.ix.rows[row].row.feeds if f not in dead]
        for f in live:
            for v in self.under[f]:
                out[v] += sign * kw / len(live)
        return bool(live)

    def node_failure(self, fid: str) -> Blast:
        """What a power node's failure takes down, caps and sheds, and whether the rest holds."""
        ix = self.ix
        dead = ix.subtree(fid)
        down, hit = node_failure_rows(ix, fid, self.by_feed)
        lost: dict[str, int] = defaultdict(int)
        capped: dict[str, int] = defaultdict(int)
        shed: dict[str, int] = defaultdict(int)
        holds = True
        change: dict[str, float] = defaultdict(float)
        for rid in sorted(down | hit):
            self.add(change, rid, self.kw_full.get(rid, 0.0), set(), -1.0)
            if not self.add(
                change, rid, self.kw_policy.get(rid, 0.0), dead, 1.0
            ):  # no live feed: the row drops
                for c, g in self.gpus_in.get(rid, {}).items():
                    lost[c] += g
                if ix.rows[rid].row.redundant and self.kw_full.get(rid, 0.0) > TOL:
                    holds = False
                continue
            for c, g in self.by_pol["cap"].get(rid, {}).items():
                capped[c] += g
            for c, g in self.by_pol["shed"].get(rid, {}).items():
                shed[c] += g
        for v, d in change.items():
            if v not in dead and d > TOL and self.normal.get(v, 0.0) + d > ix.power_nodes[v].usable_kw + TOL:
                holds = False
        return Blast("power_node", fid, dict(lost), dict(capped), dict(shed), holds)

    def during_maintenance(self, mid: str, fid: str, out: set[str]) -> Blast:
        """What ``fid`` failing takes down while ``mid`` is out for maintenance (§21): rows left with no
        live feed drop; the rest hold when every surviving node stays within its usable kW (every rack
        in full, as the maintenance level is planned)."""
        ix = self.ix
        dead = out | ix.subtree(fid)  # out: the maintained node's subtree
        rows = {r for f in dead for r in self.by_feed.get(f, ())}
        lost: dict[str, int] = defaultdict(int)
        change: dict[str, float] = defaultdict(float)
        for rid in sorted(rows):
            self.add(change, rid, self.kw_full.get(rid, 0.0), set(), -1.0)
            if not self.add(change, rid, self.kw_full.get(rid, 0.0), dead, 1.0):
                for c, g in self.gpus_in.get(rid, {}).items():
                    lost[c] += g
        holds = all(
            v in dead or self.normal.get(v, 0.0) + d <= ix.power_nodes[v].usable_kw + TOL
            for v, d in change.items()
        )
        return Blast("maintenance", fid, dict(lost), {}, {}, holds, mid)


KIND_ORDER = {"utility": 0, "power_node": 1, "cooling_zone": 2, "pod": 3, "row": 4, "maintenance": 5}


def _blast_order(b: Blast) -> tuple:
    """Most GPUs lost first, then most capped or shed, then by kind and ID."""
    return (
        -b.gpus_lost,
        -sum(b.shed.values()) - sum(b.capped.values()),
        KIND_ORDER[b.kind],
        b.id,
        b.during or "",
    )


def cluster_gpus(scenario: Scenario, racks: Iterable[PlacedRack]) -> dict[str, int]:
    """GPUs per cluster (hot spares not counted, as in the KPIs)."""
    types = scenario.catalog.by_id()
    out: dict[str, int] = defaultdict(int)
    for r in racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus and not r.spare:
            out[r.cluster] += t.gpus
    return dict(out)


# ------------------------------------------------------------------ the plan's report


def _per_cluster(scenario: Scenario, racks: list[PlacedRack], extra: dict[str, float] | None = None):
    """Per cluster: (cluster, its racks, units of its job's racks, interruptions per hour, MTBF h,
    storage rack types, write GB/s, first-order goodput figures). Hot spares stand idle: they add
    no interruptions. ``extra``: interruptions per hour added per cluster (utility outages in
    buildings without ride-through, :mod:`planner.rules.backup`)."""
    for c, mine, u, base, store, bw, size in cluster_jobs(scenario, racks):
        outages = (extra or {}).get(c.id, 0.0) if u.gpus else 0.0
        rate = base + outages
        mtbf = 1 / rate if rate > 0 else None
        cold = c.restart_min if c.cold_restart_min is None else c.cold_restart_min
        restart_h = (base * c.restart_min + outages * cold) / rate / 60 if rate > 0 else 0.0
        stall = None if c.checkpoint_s is None else c.checkpoint_s / 3600
        g = goodput(mtbf, size, bw, restart_h, stall) if mtbf is not None else None
        g = g.with_domains(domain_in_service(scenario, c, mine)) if g is not None else None
        yield c, mine, u, rate, mtbf, store, bw, g


def cluster_goodput(scenario: Scenario, racks: list[PlacedRack]) -> dict[str, float]:
    """Cluster → its first-order goodput (§11), for clusters that state a checkpoint size; the rest
    are absent (their GPU-hours count whole)."""
    if all(c.checkpoint_gb_per_gpu is None and c.checkpoint_s is None for c in scenario.clusters):
        return {}
    return {
        c.id: g.goodput
        for c, _, _, _, _, _, _, g in _per_cluster(scenario, racks)
        if g is not None and g.goodput is not None
    }


def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None else round(x, nd)


def reliability_report(
    scenario: Scenario,
    racks: list[PlacedRack],
    ix: SiteIndex | None = None,
    blasts: list[Blast] | None = None,
    network: Iterable[NetworkRack] = (),
    tco_usd: float | None = None,
):
    """The plan's reliability section: blast radius of every element that takes something down,
    and per cluster its MTBF, checkpoint interval and goodput (module docstring). ``blasts``: the
    blast radius when the caller already has it. With backup power as a choice (``tco_usd``: the
    plan's TCO, which the choice weighs), the design per building (:mod:`planner.rules.backup`): a
    utility outage in a building without ride-through interrupts its clusters (their rates) and is
    a ``utility`` element of the blast radius."""

    ix = ix or index_site(scenario.site)
    network = list(network)
    racks = scenario.standing(racks)  # retired racks (§17) are gone by the end
    blasts = list(blasts) if blasts is not None else blast_radius(scenario, racks, ix, network)
    backup = (
        choose_backup(scenario, racks, network, tco_usd)
        if scenario.backup_power is not None and tco_usd is not None
        else []
    )
    extra: dict[str, float] = {}
    if backup:
        assignment = {b.building: b.design for b in backup}
        _, gpus = building_gpus(scenario, racks, network)
        extra = outage_rates(scenario, assignment, gpus)
        for b in backup:
            if not b.ride_through and gpus.get(b.building):
                blasts.append(Blast("utility", b.building, dict(sorted(gpus[b.building].items())), {}, {}))
        blasts.sort(key=_blast_order)
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
    for c, mine, u, rate, mtbf, store, bw, g in _per_cluster(scenario, racks, extra):
        rows.append(
            ClusterReliability(
                cluster=c.id,
                gpus=u.gpus,
                mtbf_h=_r(mtbf),
                interruptions_per_day=round(24 * rate, 6),
                storage_racks=len(store),
                write_gb_per_s=round(bw, 6),
                checkpoint_s=_r(g.checkpoint_h * 3600 if g and g.checkpoint_h is not None else None),
                interval_h=_r(g.interval_h if g else None),
                goodput=_r(g.goodput if g else None),
                in_service=_r(g.in_service if g else None),
                gpu_hours_lost_per_day=_r(
                    u.gpus * 24 * (1 - g.goodput) if g and g.goodput is not None else None
                ),
                spare_racks=sum(1 for r in mine if getattr(r, "spare", False)),
                worst_power_share=round(worst[c.id, "power"], 6),
                worst_zone_share=round(worst[c.id, "zone"], 6),
                worst_pod_share=round(worst[c.id, "pod"], 6),
            )
        )
    table = [
        BlastRow(
            kind=b.kind,
            id=b.id,
            gpus_lost=b.gpus_lost,
            lost=b.lost,
            capped=b.capped,
            shed=b.shed,
            n1_holds=b.n1_holds,
            during=b.during,
        )
        for b in blasts
        if b.lost or b.capped or b.shed or b.n1_holds is False
    ]
    return ReliabilityReport(clusters=rows, backup=backup, blast_radius=table)


def blast_states(
    scenario: Scenario, racks: list[PlacedRack], kind: str, element: str, ix: SiteIndex | None = None
) -> dict[tuple[str, int], str]:
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
